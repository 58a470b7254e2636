"""strip_disallowed_nulls and schema_admits_null: a disallowed null means "use the default"."""

from __future__ import annotations

import copy
from typing import Annotated, Any, Literal

import pytest
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
        "by_name": {"a": {"end": "1"}},  # a map value that does not admit null
        "pet": {"kind": "cat"},
        "tree": {"children": [{"value": 1}]},
    }
    # untouched branches are shared, not copied
    assert stripped["windows"][2] is args["windows"][2]  # type: ignore[index]
    model = Search.model_validate({**stripped, "windows": [{}]})
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
        "m": {"other": None},
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
