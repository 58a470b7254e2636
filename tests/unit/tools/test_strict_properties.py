"""Property tests of the strict transform over random JSON schemas (hypothesis).

Schemas are drawn from a grammar that covers what pydantic and hand-written tool schemas
use (scalars with constraints, enums, consts, type lists, arrays, objects with optional and
defaulted properties, nullable unions, discriminated unions, ``$defs``/``$ref``, a
single-entry ``allOf``, annotations). Each schema comes with instances valid under it, built
alongside: ``(original, filled)`` where ``filled`` carries an explicit null for every optional
property the original left out, which is what a model sends under strict mode.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from tools.schema._strict import strip_disallowed_nulls, to_strict_schema

Schema = dict[str, Any]
Pair = tuple[Any, Any]

SETTINGS = settings(
    max_examples=100,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
LIGHT = settings(SETTINGS, max_examples=40)

#: Keywords a strict schema node may carry (STRICT.md rules 4-5).
ALLOWED = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "anyOf",
        "enum",
        "const",
        "$ref",
        "$defs",
        "description",
        "pattern",
        "format",
        "multipleOf",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "minItems",
        "maxItems",
    }
)

#: Property names, including JSON Schema keywords (BFCL has such properties).
NAMES = [
    "a",
    "b",
    "limit",
    "type",
    "format",
    "items",
    "default",
    "required",
    "properties",
    "enum",
    "anyOf",
    "$ref",
    "title",
    "x y",
    "ключ",
]
TEXT = st.text(alphabet="abcxyz019 ", max_size=6)


# -- the schema grammar -----------------------------------------------------------------------


@st.composite
def string_nodes(draw: st.DrawFn) -> Schema:
    node: Schema = {"type": "string"}
    extra = draw(st.sampled_from(["plain", "pattern", "length", "format"]))
    if extra == "pattern":
        node["pattern"] = draw(st.sampled_from(["^[a-z]{1,4}$", "^[0-9]+$", "x"]))
    elif extra == "length":
        low = draw(st.integers(0, 3))
        node |= {"minLength": low, "maxLength": low + draw(st.integers(0, 3))}
    elif extra == "format":
        node["format"] = draw(st.sampled_from(["date", "uri", "email", "uuid", "hostname"]))
    return node


@st.composite
def number_nodes(draw: st.DrawFn) -> Schema:
    kind = draw(st.sampled_from(["integer", "number"]))
    node: Schema = {"type": kind}
    extra = draw(st.sampled_from(["plain", "range", "exclusive", "multiple"]))
    if extra == "range":
        low = draw(st.integers(-5, 5))
        node |= {"minimum": low, "maximum": low + draw(st.integers(0, 10))}
    elif extra == "exclusive":
        node |= {"exclusiveMinimum": 0, "exclusiveMaximum": 100}
    elif extra == "multiple" and kind == "integer":
        node["multipleOf"] = draw(st.sampled_from([2, 5]))
    return node


SCALARS: st.SearchStrategy[Schema] = st.one_of(
    string_nodes(),
    number_nodes(),
    st.just({"type": "boolean"}),
    st.just({"type": "null"}),
    st.just({"type": ["string", "null"]}),
    st.just({"type": ["integer", "string"]}),
    st.just({"type": ["integer", "null"], "minimum": 0}),
    st.just({"type": "string", "enum": ["metric", "imperial", "x y"]}),
    st.just({"type": "integer", "enum": [1, 2, 3]}),
    st.just({"enum": [1, "a", True]}),
    st.just({"enum": ["on", None]}),
    st.just({"type": "string", "const": "fixed"}),
    st.just({"const": 7}),
    st.just({"anyOf": [{"type": "string"}, {"type": "integer", "minimum": 0}]}),
)


def annotate(node: Schema, draw: st.DrawFn) -> Schema:
    """Sprinkle annotations strict mode drops (or keeps: description)."""
    extra = draw(st.sampled_from(["none", "title", "description", "examples", "comment"]))
    if extra == "title":
        return {**node, "title": "T"}
    if extra == "description":
        return {**node, "description": draw(TEXT)}
    if extra == "examples":
        return {**node, "examples": []}
    if extra == "comment":
        return {**node, "$comment": "hand-written"}
    return node


@st.composite
def object_nodes(draw: st.DrawFn, children: st.SearchStrategy[Schema]) -> Schema:
    names = draw(st.lists(st.sampled_from(NAMES), min_size=0, max_size=4, unique=True))
    props: Schema = {}
    required = []
    for name in names:
        child = annotate(draw(children), draw)
        if draw(st.booleans()):
            required.append(name)
        if draw(st.integers(0, 2)) == 0:  # a default, drawn from the child's own instances
            child = {**child, "default": draw(instances(child))[0]}
        props[name] = child
    node: Schema = {"type": "object", "properties": props}
    if required:
        node["required"] = required
    # an object with no properties is closed explicitly: open, it is a free-form object
    if not props or draw(st.booleans()):
        node["additionalProperties"] = False
    if draw(st.integers(0, 3)) == 0:
        node["x-def"] = draw(st.sampled_from(["bare", "described", "allOf"]))
    return node


@st.composite
def tagged_unions(draw: st.DrawFn, children: st.SearchStrategy[Schema]) -> Schema:
    branches = []
    for tag in draw(st.lists(st.sampled_from(["cat", "dog", "eel"]), min_size=2, unique=True)):
        branch = draw(object_nodes(children))
        branch["properties"] = {"kind": {"type": "string", "const": tag}, **branch["properties"]}
        branch["required"] = ["kind", *branch.get("required", [])]
        branches.append(branch)
    if draw(st.booleans()):
        return {"oneOf": branches, "discriminator": {"propertyName": "kind"}}
    return {"anyOf": branches}


def extend(children: st.SearchStrategy[Schema]) -> st.SearchStrategy[Schema]:
    def array(items: Schema, bounds: tuple[int, int] | None) -> Schema:
        node: Schema = {"type": "array", "items": items}
        if bounds is not None:
            node |= {"minItems": bounds[0], "maxItems": bounds[0] + bounds[1]}
        return node

    return st.one_of(
        st.builds(array, children, st.none() | st.tuples(st.integers(0, 2), st.integers(0, 2))),
        object_nodes(children),
        children.map(lambda c: {"anyOf": [c, {"type": "null"}], "default": None}),
        tagged_unions(children),
    )


NODES = st.recursive(SCALARS, extend, max_leaves=10)


# -- instances --------------------------------------------------------------------------------


def instances(node: Schema) -> st.SearchStrategy[Pair]:
    """``(original, filled)`` instances of a node of the grammar above (defs not yet split)."""
    branches = node.get("anyOf") or node.get("oneOf")
    if branches:
        return st.one_of([instances(b) for b in branches])
    if "enum" in node:
        return st.sampled_from(node["enum"]).map(lambda v: (v, v))
    if "const" in node:
        return st.just((node["const"], node["const"]))
    kinds = node["type"] if isinstance(node["type"], list) else [node["type"]]
    return st.one_of([_typed(node, kind) for kind in kinds])


def _typed(node: Schema, kind: str) -> st.SearchStrategy[Pair]:
    if kind == "object":
        return _objects(node)
    if kind == "array":
        low = node.get("minItems", 0)
        high = min(node.get("maxItems", 3), 3)
        return st.lists(instances(node["items"]), min_size=low, max_size=max(low, high)).map(
            lambda pairs: ([p[0] for p in pairs], [p[1] for p in pairs])
        )
    return _scalars(node, kind).map(lambda v: (v, v))


def _scalars(node: Schema, kind: str) -> st.SearchStrategy[Any]:
    if kind == "string":
        if "pattern" in node:
            return st.from_regex(node["pattern"])
        return st.text(min_size=node.get("minLength", 0), max_size=node.get("maxLength", 5))
    if kind == "integer":
        if "multipleOf" in node:
            return st.integers(-50, 50).map(lambda v: v * node["multipleOf"])
        low = node.get("minimum", node.get("exclusiveMinimum", -1_000) + 1)
        high = node.get("maximum", node.get("exclusiveMaximum", 1_000) - 1)
        return st.integers(low, high)
    if kind == "number":
        return st.floats(
            min_value=node.get("minimum", node.get("exclusiveMinimum", -1e6)),
            max_value=node.get("maximum", node.get("exclusiveMaximum", 1e6)),
            exclude_min="exclusiveMinimum" in node,
            exclude_max="exclusiveMaximum" in node,
            allow_nan=False,
        )
    if kind == "boolean":
        return st.booleans()
    return st.none()


@st.composite
def _objects(draw: st.DrawFn, node: Schema) -> Pair:
    original: dict[str, Any] = {}
    filled: dict[str, Any] = {}
    required = node.get("required", [])
    for name, child in node["properties"].items():
        if name in required or draw(st.booleans()):
            original[name], filled[name] = draw(instances(child))
        else:
            filled[name] = None
    return original, filled


# -- materialising $defs ----------------------------------------------------------------------


def materialise(root: Schema) -> Schema:
    """Move nodes marked ``x-def`` into ``$defs`` and point at them as pydantic would."""
    defs: dict[str, Schema] = {}

    def walk(node: Any) -> Any:
        if not isinstance(node, dict):
            return node
        out = dict(node)
        if isinstance(out.get("properties"), dict):
            out["properties"] = {k: walk(v) for k, v in out["properties"].items()}
        if "items" in out:
            out["items"] = walk(out["items"])
        for key in ("anyOf", "oneOf"):
            if key in out:
                out[key] = [walk(b) for b in out[key]]
        mode = out.pop("x-def", None)
        if mode is None:
            return out
        name = f"D{len(defs)}"
        site = {k: out.pop(k) for k in ("default", "description") if k in out}
        defs[name] = out
        ref = {"$ref": f"#/$defs/{name}"}
        if mode == "described":
            return {**ref, "description": "see the definition", **site}
        if mode == "allOf":
            return {"allOf": [ref], **site}
        return {**ref, **site}

    body = walk(root)
    return {**body, "$defs": defs} if defs else body


def unmark(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: unmark(v) for k, v in node.items() if k != "x-def"}
    if isinstance(node, list):
        return [unmark(v) for v in node]
    return node


@st.composite
def cases(draw: st.DrawFn) -> tuple[Schema, list[Pair]]:
    root = draw(object_nodes(NODES))
    root.pop("x-def", None)
    raw = unmark(root)
    pairs = draw(st.lists(instances(raw), min_size=1, max_size=3))
    return materialise(root), pairs


# -- invariants -------------------------------------------------------------------------------


def schema_nodes(node: Schema) -> Iterator[Schema]:
    """Every schema node of a strict schema (property names are not visited as nodes)."""
    yield node
    for sub in node.get("properties", {}).values():
        yield from schema_nodes(sub)
    if isinstance(node.get("items"), dict):
        yield from schema_nodes(node["items"])
    for sub in node.get("anyOf", []):
        yield from schema_nodes(sub)
    for sub in node.get("$defs", {}).values():
        yield from schema_nodes(sub)


def check_strict_shape(schema: Schema) -> None:
    assert schema["type"] == "object"
    for node in schema_nodes(schema):
        assert set(node) <= ALLOWED, set(node) - ALLOWED
        if "$ref" in node:
            assert set(node) == {"$ref"}, node
        kinds = node.get("type")
        if kinds == "object" or (isinstance(kinds, list) and "object" in kinds):
            assert node["additionalProperties"] is False
            assert node["required"] == list(node["properties"])
        assert "type" in node or "anyOf" in node or "$ref" in node or "enum" in node or "const" in node, node
        if "format" in node:
            assert node["format"] in {"date", "email", "uuid", "hostname"}


@SETTINGS
@given(cases())
def test_random_schemas_convert_to_expressive_strict_schemas(
    case: tuple[Schema, list[Pair]],
) -> None:
    schema, pairs = case
    before = copy.deepcopy(schema)
    result = to_strict_schema(schema)
    assert schema == before  # (4) the input is never mutated
    assert result.unsupported == ()  # the grammar only holds expressible constructs
    strict = result.schema
    Draft202012Validator.check_schema(strict)
    check_strict_shape(strict)  # (1) and (2)
    assert to_strict_schema(strict).schema == strict  # a strict schema is a fixed point

    original_validator = Draft202012Validator(schema)
    strict_validator = Draft202012Validator(strict)
    for original, filled in pairs:
        assert original_validator.is_valid(original), "the instance generator is wrong"
        # (3) what the model sends under strict mode is accepted by the strict schema ...
        errors = [e.message for e in strict_validator.iter_errors(filled)]
        assert errors == [], (filled, errors)
        # ... and, nulls stripped, by the original schema (so validation fills defaults)
        filled_before = copy.deepcopy(filled)
        stripped = strip_disallowed_nulls(filled, schema)
        assert filled == filled_before
        errors = [e.message for e in original_validator.iter_errors(stripped)]
        assert errors == [], (stripped, errors)
        assert strip_disallowed_nulls(original, schema) is original or _has_null(original)
    assert schema == before


def _has_null(value: Any) -> bool:
    if isinstance(value, dict):
        return any(v is None or _has_null(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_null(v) for v in value)
    return False


@LIGHT
@given(NODES.map(unmark))
def test_any_node_as_a_property_converts_without_surprises(node: Schema) -> None:
    schema = {"type": "object", "properties": {"p": node}}
    result = to_strict_schema(schema)
    assert result.unsupported == ()
    check_strict_shape(result.schema)
    prop = result.schema["properties"]["p"]
    # an optional property always admits null in the strict export
    assert Draft202012Validator(prop).is_valid(None)


@LIGHT
@given(
    st.recursive(
        st.none() | st.integers() | TEXT,
        lambda c: st.lists(c, max_size=3) | st.dictionaries(TEXT, c, max_size=3),
        max_leaves=8,
    )
)
def test_values_without_nulls_to_strip_are_returned_as_is(value: Any) -> None:
    schema = {"type": "object", "additionalProperties": {"type": "integer"}}
    stripped = strip_disallowed_nulls(value, schema)
    if not _has_null(value):
        assert stripped is value
