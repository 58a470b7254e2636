"""strip_disallowed_nulls and schema_admits_null: a disallowed null means "use the default"."""

from __future__ import annotations

import copy
from typing import Annotated, Any, Literal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from pydantic import BaseModel, Field

from tools.schema._strict import schema_admits_null, strip_disallowed_nulls


class Window(BaseModel):
    start: str = "09:00"
    end: str | None = "17:00"


class Cat(BaseModel):
    kind: Literal["cat"] = "cat"
    lives: int = 9


class Dog(BaseModel):
    kind: Literal["dog"] = "dog"
    lives: int | None = None
    good: bool = True


class Node(BaseModel):
    value: int = 0
    children: list[Node] = []


class Search(BaseModel):
    query: str
    limit: int = 10
    note: str | None = None
    cutoff: float | None = 0.5
    window: Window = Window()
    windows: list[Window] = []
    by_name: dict[str, Window] = {}
    pet: Annotated[Cat | Dog, Field(discriminator="kind")] = Cat()
    tree: Node = Node()


SCHEMA = Search.model_json_schema()


def test_nothing_to_strip_returns_the_same_object() -> None:
    args: dict[str, Any] = {"query": "q", "limit": 3, "window": {"start": "x"}, "windows": [{}]}
    assert strip_disallowed_nulls(args, SCHEMA) is args
    allowed = {"query": "q", "note": None, "cutoff": None, "window": {"end": None}}
    assert strip_disallowed_nulls(allowed, SCHEMA) is allowed
    for scalar in (None, 3, "x", [1, None]):
        assert strip_disallowed_nulls(scalar, SCHEMA) is scalar


def test_top_level_null_becomes_the_default() -> None:
    args = {"query": "q", "limit": None, "note": None, "cutoff": None}
    before = copy.deepcopy(args)
    stripped = strip_disallowed_nulls(args, SCHEMA)
    assert stripped == {"query": "q", "note": None, "cutoff": None}
    assert args == before  # the input is never mutated
    model = Search.model_validate({**stripped, "windows": [{}]})
    assert model.limit == 10
    assert model.cutoff is None  # Optional[T] = x: a null stays None


def test_nulls_at_any_depth() -> None:
    args = {
        "query": "q",
        "window": {"start": None, "end": None},
        "windows": [{"start": None}, None, {"start": "8"}],
        "by_name": {"a": {"start": None, "end": "1"}, "b": None},
        "pet": {"kind": "cat", "lives": None},
        "tree": {"value": None, "children": [{"value": 1, "children": None}]},
    }
    stripped = strip_disallowed_nulls(args, SCHEMA)
    assert stripped == {
        "query": "q",
        "window": {"end": None},
        "windows": [{}, None, {"start": "8"}],  # a null item of a list is not a key: kept
        "by_name": {"a": {"end": "1"}, "b": None},  # a map's own keys keep their nulls
        "pet": {"kind": "cat"},
        "tree": {"children": [{"value": 1}]},
    }
    # untouched branches are shared, not copied
    assert stripped["windows"][2] is args["windows"][2]  # type: ignore[index]
    model = Search.model_validate({**stripped, "windows": [{}], "by_name": {"a": {"end": "1"}}})
    assert model.window == Window(end=None)
    assert model.tree.children[0].children == []


def test_union_branches_decide_by_their_tag() -> None:
    # Dog.lives admits null, Cat.lives does not: the tag picks the branch
    assert strip_disallowed_nulls({"pet": {"kind": "dog", "lives": None}}, SCHEMA) == {
        "pet": {"kind": "dog", "lives": None}
    }
    assert strip_disallowed_nulls({"pet": {"kind": "cat", "lives": None}}, SCHEMA) == {"pet": {"kind": "cat"}}
    # with no tag to go by, a null is kept when any branch declaring the key admits it
    untagged = {"pet": {"lives": None, "good": None}}
    assert strip_disallowed_nulls(untagged, SCHEMA) == {"pet": {"lives": None}}


def test_hand_written_schemas() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "integer", "default": 1},
            "b": {"type": ["integer", "null"]},
            "c": {},
            "d": {"enum": ["x", None]},
            "e": {"const": None},
            "f": {"$ref": "#/definitions/F"},
            "g": {"allOf": [{"$ref": "#/definitions/F"}]},
            "h": {"type": "array", "prefixItems": [{"$ref": "#/definitions/F"}]},
            "i": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
            "m": {"type": "object", "patternProperties": {"^n_": {"type": "number"}}},
            "r": {"$ref": "#"},
        },
        "definitions": {"F": {"type": "object", "properties": {"x": {"type": "string"}}}},
    }
    args = {
        "a": None,
        "b": None,
        "c": None,
        "d": None,
        "e": None,
        "f": {"x": None},
        "g": {"x": None},
        "h": [{"x": None}, {"x": None}],
        "i": None,
        "m": {"n_1": None, "other": None},
        "r": {"a": None, "b": None},
        "unknown": None,
    }
    assert strip_disallowed_nulls(args, schema) == {
        "b": None,
        "c": None,
        "d": None,
        "e": None,
        "f": {},
        "g": {},
        "h": [{}, {"x": None}],  # prefixItems only covers index 0
        "m": {"n_1": None, "other": None},  # patternProperties: a map, nulls kept
        "r": {"b": None},
        "unknown": None,  # keys the schema does not declare are left alone
    }


def test_explicit_defs_argument() -> None:
    schema = {"type": "object", "properties": {"w": {"$ref": "#/$defs/W"}}}
    defs = {"W": {"type": "object", "properties": {"n": {"type": "integer"}}}}
    assert strip_disallowed_nulls({"w": {"n": None}}, schema, defs) == {"w": {}}
    # without the defs the reference cannot be followed: nothing is removed
    assert strip_disallowed_nulls({"w": {"n": None}}, schema) == {"w": {"n": None}}


def test_stripped_instance_validates_against_the_original_schema() -> None:
    args = {"query": "q", "limit": None, "window": {"start": None, "end": None}, "tree": None}
    validator = Draft202012Validator(SCHEMA)
    assert not validator.is_valid(args)
    assert validator.is_valid(strip_disallowed_nulls(args, SCHEMA))


def test_hostile_values_and_schemas_never_raise() -> None:
    cyclic: dict[str, Any] = {"limit": None}
    cyclic["self"] = cyclic
    assert strip_disallowed_nulls(cyclic, SCHEMA) == {"self": cyclic}

    deep: Any = {"value": None}
    for _ in range(1_000):
        deep = {"value": 1, "children": [deep]}
    node_schema = Node.model_json_schema()
    result = strip_disallowed_nulls(deep, node_schema)
    assert result["value"] == 1  # below 200 levels the value is left as it is

    bad_schemas: list[Any] = [
        {"properties": ["x"]},
        {"properties": {"a": 3}},
        {"anyOf": "nope"},
        {"$ref": "#/nowhere"},
        {"$ref": 5},
        {"patternProperties": {"(": {"type": "string"}}},
        {"additionalProperties": {"$ref": "#"}},
        {"type": 7, "items": [1, 2]},
        "not a schema",
    ]
    for schema in bad_schemas:
        strip_disallowed_nulls({"a": None, "b": [{"c": None}]}, schema)

    ref_loop = {
        "$ref": "#/$defs/A",
        "$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}},
    }
    assert strip_disallowed_nulls({"a": None}, ref_loop) == {"a": None}

    union_blowup: dict[str, Any] = {"type": "object", "properties": {"a": {"type": "integer"}}}
    for _ in range(12):
        union_blowup = {"allOf": [{"anyOf": [union_blowup, union_blowup]}, union_blowup]}
    assert strip_disallowed_nulls({"a": None}, union_blowup) == {}


@pytest.mark.parametrize(
    ("node", "expected"),
    [
        ({"type": "null"}, True),
        ({"type": ["string", "null"]}, True),
        ({"type": "string"}, False),
        ({"type": ["string"]}, False),
        ({}, True),
        ({"description": "anything"}, True),
        (True, True),
        (False, False),
        ({"enum": ["a", None]}, True),
        ({"enum": ["a"]}, False),
        ({"const": None}, True),
        ({"const": 0}, False),
        ({"anyOf": [{"type": "string"}, {"type": "null"}]}, True),
        ({"oneOf": [{"type": "string"}, {"type": "integer"}]}, False),
        ({"allOf": [{}, {"type": "string"}]}, False),
        ({"$ref": "#/$defs/S"}, False),
        ({"$ref": "#/definitions/S"}, False),
        ({"$ref": "#/$defs/N"}, True),
        ({"$ref": "#/$defs/Missing"}, True),
        ({"$ref": "#/$defs/Loop"}, True),
        ({"type": ["string", "null"], "enum": ["a"]}, False),
        ("not a schema", True),
    ],
)
def test_schema_admits_null(node: Any, expected: bool) -> None:
    defs = {
        "S": {"type": "string"},
        "N": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "Loop": {"$ref": "#/$defs/Loop"},
    }
    assert schema_admits_null(node, defs) is expected


def test_schema_admits_null_on_cyclic_and_wide_schemas() -> None:
    cyclic: dict[str, Any] = {"type": ["object", "null"]}
    cyclic["allOf"] = [cyclic, cyclic]
    cyclic["anyOf"] = [cyclic, {"type": "string"}]
    assert schema_admits_null(cyclic) is True  # nested past 64 levels: the safe answer
    wide: dict[str, Any] = {"type": "integer"}
    for _ in range(60):  # 2**60 paths: answered through the memo, not by walking them
        wide = {"allOf": [wide, wide], "anyOf": [wide, wide]}
    assert schema_admits_null(wide) is False
    deeper = wide
    for _ in range(10):
        deeper = {"allOf": [deeper]}
    assert schema_admits_null(deeper) is True  # past 64 levels: the safe answer


# -- free-form maps and required fields: a null is kept unless the schema gives a default ------


class Settings(BaseModel):
    counts: dict[str, int] = {}
    labels: dict[str, str | None] = {}
    windows: dict[str, Window] = {}
    extra: dict[str, Any] = {}
    name: str
    size: int = 1


SETTINGS = Settings.model_json_schema()


def test_nulls_in_free_form_maps_are_kept() -> None:
    args = {"name": "n", "counts": {"a": 1, "b": None}, "extra": {"x": None, "y": {"z": None}}}
    assert strip_disallowed_nulls(args, SETTINGS) is args  # nothing to strip: the same object
    # the model meant "b has no count": validation says so instead of the key vanishing
    errors = [e["loc"] for e in _errors(args)]
    assert errors == [("counts", "b")]


def test_map_values_are_still_walked_into() -> None:
    args = {"name": "n", "windows": {"w": {"start": None, "end": None}, "v": None}, "size": None}
    assert strip_disallowed_nulls(args, SETTINGS) == {
        "name": "n",
        "windows": {"w": {"end": None}, "v": None},  # a model's defaulted field inside a map: default
    }


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "additionalProperties": {"type": "integer"}},
        {"type": "object", "additionalProperties": {"type": "string"}, "properties": {"k": {"type": "string"}}},
        {"type": "object", "patternProperties": {"^": {"type": "integer"}}},
        {"type": "object"},
        {"additionalProperties": {"type": "number"}},
        {},
        {"type": "object", "properties": {"a": {}}},
        {"anyOf": [{"type": "object", "additionalProperties": {"type": "integer"}}, {"type": "string"}]},
    ],
)
def test_top_level_maps_and_untyped_nodes_keep_nulls(schema: dict[str, Any]) -> None:
    args = {"a": 1, "b": None}
    assert strip_disallowed_nulls(args, schema) is args


def test_required_field_without_default_keeps_its_null() -> None:
    # no default to fall back on: the null stays, and validation names the field
    assert strip_disallowed_nulls({"name": None, "size": None}, SETTINGS) == {"name": None}
    schema = {
        "type": "object",
        "properties": {"q": {"type": "string"}, "n": {"type": "integer", "default": 3}, "o": {"type": "integer"}},
        "required": ["q", "n"],
    }
    # required with a default: dropped (the default applies); optional: dropped; required: kept
    assert strip_disallowed_nulls({"q": None, "n": None, "o": None}, schema) == {"q": None}


def test_defaults_behind_references_count() -> None:
    schema = {
        "type": "object",
        "properties": {"w": {"$ref": "#/$defs/W"}, "v": {"allOf": [{"$ref": "#/$defs/W"}]}},
        "required": ["w", "v"],
        "$defs": {"W": {"type": "integer", "default": 5}},
    }
    assert strip_disallowed_nulls({"w": None, "v": None}, schema) == {}


def test_union_of_a_model_and_a_map_keeps_the_null() -> None:
    schema = {
        "type": "object",
        "properties": {
            "p": {
                "anyOf": [
                    {"type": "object", "properties": {"limit": {"type": "integer", "default": 1}}},
                    {"type": "object", "additionalProperties": {"type": "integer"}},
                ]
            }
        },
    }
    args = {"p": {"limit": None}}
    assert strip_disallowed_nulls(args, schema) is args


MAP_VALUE_SCHEMAS: list[Any] = [
    {"type": "integer"},
    {"type": "string", "default": "x"},
    {"type": ["integer", "null"]},
    {"$ref": "#/$defs/W"},
    {"type": "object", "properties": {"start": {"type": "string", "default": "9"}}},
    {"type": "array", "items": {"$ref": "#/$defs/W"}},
    True,
    {},
]
KEYS = st.text(alphabet="abk_", min_size=1, max_size=3)
LEAVES = st.none() | st.integers(-3, 3) | st.text(alphabet="xy", max_size=2)
VALUES = st.recursive(
    LEAVES,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["start", "end", "k"]), inner, max_size=3)
    ),
    max_leaves=6,
)
MAPS = settings(max_examples=150, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])


@MAPS
@given(st.sampled_from(MAP_VALUE_SCHEMAS), st.dictionaries(KEYS, VALUES, max_size=5), st.booleans())
def test_map_keys_always_survive(value_schema: Any, entries: dict[str, Any], nested: bool) -> None:
    """Property: stripping never removes a key of a map, at the root or under a property."""
    defs = {"W": {"type": "object", "properties": {"start": {"type": "string", "default": "9"}}}}
    map_schema = {"type": "object", "additionalProperties": value_schema}
    schema = (
        {"type": "object", "properties": {"m": map_schema}, "$defs": defs} if nested else {**map_schema, "$defs": defs}
    )
    args = {"m": entries} if nested else entries
    before = copy.deepcopy(args)
    stripped = strip_disallowed_nulls(args, schema)
    assert args == before
    got = stripped["m"] if nested else stripped
    assert list(got) == list(entries)
    for key, item in entries.items():
        if item is None or not isinstance(item, dict | list):
            assert got[key] == item  # scalars and nulls of the map itself are untouched
    assert strip_disallowed_nulls(stripped, schema) == stripped  # idempotent


@MAPS
@given(
    st.fixed_dictionaries(
        {"name": st.text(max_size=3)},
        optional={
            "size": st.none() | st.integers(0, 5),
            "counts": st.dictionaries(KEYS, st.none() | st.integers(0, 5), max_size=4),
            "labels": st.dictionaries(KEYS, st.none() | st.text(max_size=2), max_size=4),
            "windows": st.dictionaries(
                KEYS, st.fixed_dictionaries({}, optional={"start": st.none() | st.just("8")}), max_size=3
            ),
        },
    )
)
def test_model_with_maps_validates_exactly_when_no_map_entry_is_null(args: dict[str, Any]) -> None:
    """Property: a stripped call validates unless the model sent null as a value of an
    int/Window map (that null is reported, never silently dropped); defaults fill the rest."""
    stripped = strip_disallowed_nulls(args, SETTINGS)
    assert set(stripped.get("counts", {})) == set(args.get("counts", {}))
    assert set(stripped.get("windows", {})) == set(args.get("windows", {}))
    null_entries = any(v is None for v in args.get("counts", {}).values())
    errors = _errors(args)
    assert bool(errors) == null_entries, errors
    if not errors:
        model = Settings.model_validate(stripped)
        assert model.size == (args["size"] if args.get("size") is not None else 1)
        assert model.labels == args.get("labels", {})


def _errors(args: dict[str, Any]) -> list[Any]:
    from pydantic import ValidationError

    try:
        Settings.model_validate(strip_disallowed_nulls(args, SETTINGS))
    except ValidationError as exc:
        return list(exc.errors())
    return []
