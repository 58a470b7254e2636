"""Strict transform: what strict mode cannot express, the limits, and hostile input."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from tools.schema._strict import to_strict_schema


def issues(schema: Any) -> list[tuple[str, str]]:
    return [(i.path, i.reason) for i in to_strict_schema(schema).unsupported]


def paths(schema: Any) -> list[str]:
    return [path for path, _ in issues(schema)]


class Node(BaseModel):
    value: int
    children: list[Node] = []


class Tree(BaseModel):
    root: Node
    spare: Node | None = None


# -- unsupported constructs -------------------------------------------------------------------


def _wrap(node: Any, name: str = "f") -> dict[str, Any]:
    return {"type": "object", "properties": {name: node}, "required": [name]}


@pytest.mark.parametrize(
    ("node", "needle"),
    [
        ({"type": "object"}, "free-form"),
        ({"type": "object", "additionalProperties": True}, "free-form"),
        ({"type": "object", "additionalProperties": {"type": "string"}}, "map"),
        (
            {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": {}},
            "free-form",
        ),
        ({"type": "object", "patternProperties": {"^x": {"type": "string"}}}, "patternProperties"),
        ({"type": "array", "prefixItems": [{"type": "string"}]}, "prefixItems"),
        ({"type": "array", "items": [{"type": "string"}]}, "tuple"),
        ({"type": "array"}, "item schema"),
        ({"type": "array", "items": {}}, "no type"),
        ({}, "no type"),
        ({"description": "anything"}, "no type"),
        (True, "no type"),
        ({"type": "string", "enum": ["a", 1]}, "contradicts"),
        ({"type": "integer", "const": "x"}, "contradicts"),
        ({"type": "string", "if": {}, "then": {}, "else": {}}, "if/then/else"),
        ({"allOf": [{"type": "string"}, {"minLength": 1}]}, "allOf"),
        ({"type": "object", "properties": {}, "dependentSchemas": {"a": {}}}, "dependentSchemas"),
        ({"type": "object", "properties": {}, "unevaluatedProperties": False}, "unevaluated"),
        ({"$ref": "#/$defs/Missing"}, "does not point"),
        ({"$ref": "https://example.com/schema.json"}, "does not point"),
        ({"type": "float"}, "unknown type"),
        ({"type": 3}, "malformed type"),
        ({"enum": []}, "non-empty"),
        ({"anyOf": []}, "non-empty"),
    ],
)
def test_unsupported_constructs_name_the_field(node: Any, needle: str) -> None:
    found = issues(_wrap(node))
    assert found, f"{node!r} should be unsupported"
    assert all(path in ("f", "f[]") for path, _ in found), found
    assert any(needle in reason for _, reason in found), found


def test_issue_paths_are_human() -> None:
    schema = {
        "type": "object",
        "properties": {
            "filters": {"type": "object", "additionalProperties": {"type": "string"}},
            "items": {
                "type": "array",
                "items": {"type": "object", "properties": {"tags": {"type": "object"}}},
            },
            "ok": {"type": "string"},
        },
    }
    result = to_strict_schema(schema)
    assert [i.path for i in result.unsupported] == ["filters", "items[].tags"]
    assert str(result.unsupported[0]).startswith("filters: a map")
    assert not result.ok
    assert result.schema["properties"]["ok"] == {"type": ["string", "null"]}


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "string"},
        {"type": "array", "items": {"type": "string"}},
        {"anyOf": [{"type": "object", "properties": {}, "additionalProperties": False}, {"type": "string"}]},
        {"enum": [1, 2]},
    ],
)
def test_non_object_root_is_unsupported(schema: dict[str, Any]) -> None:
    assert paths(schema) == ["(root)"]
    assert to_strict_schema(schema).schema.get("type") != "array"


# -- limits (STRICT.md rule 9) ---------------------------------------------------------------


def _flat(count: int) -> dict[str, Any]:
    return {"type": "object", "properties": {f"p{i}": {"type": "integer"} for i in range(count)}}


def _deep(levels: int) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "object", "properties": {"leaf": {"type": "string"}}}
    for _ in range(levels - 1):
        node = {"type": "object", "properties": {"child": node}}
    return node


def test_limits_warnings_and_errors() -> None:
    assert to_strict_schema(_flat(100)).warnings == ()
    warned = to_strict_schema(_flat(101))
    assert warned.ok
    assert len(warned.warnings) == 1
    assert "101 properties" in warned.warnings[0]
    too_many = to_strict_schema(_flat(5_001))
    assert [i.path for i in too_many.unsupported] == ["(root)"]
    assert "5001 properties" in too_many.unsupported[0].reason

    assert to_strict_schema(_deep(5)).warnings == ()
    assert "6 levels" in to_strict_schema(_deep(6)).warnings[0]
    assert to_strict_schema(_deep(10)).ok
    too_deep = to_strict_schema(_deep(11))
    assert "11 levels" in too_deep.unsupported[0].reason


def test_enum_limits() -> None:
    big = _wrap({"type": "integer", "enum": list(range(1_001))})
    assert "1001 enum values" in issues(big)[0][1]
    long_strings = _wrap({"type": "string", "enum": [f"{i:060d}" for i in range(251)]})
    assert issues(long_strings)[0][0] == "f"
    assert "15000 characters" in issues(long_strings)[0][1]
    assert issues(_wrap({"type": "string", "enum": [f"{i:059d}" for i in range(250)]})) == []
    names = {f"{i:0200d}": {"type": "integer"} for i in range(601)}
    assert "characters" in issues({"type": "object", "properties": names})[0][1]


def test_recursive_schema_depth_is_finite() -> None:
    result = to_strict_schema(Tree.model_json_schema())
    assert result.ok
    assert result.warnings == ()


# -- hostile and malformed input --------------------------------------------------------------


def test_hostile_inputs_never_raise() -> None:
    cyclic: dict[str, Any] = {"type": "object", "properties": {}}
    cyclic["properties"]["me"] = cyclic
    assert any("nested more than 64" in reason for _, reason in issues(cyclic))

    deep = _deep(5_000)
    assert to_strict_schema(deep).unsupported

    assert paths(["not", "a", "schema"]) == ["(root)"]
    assert paths({"type": "object", "properties": ["x"]}) == ["(root)"]
    assert paths({"type": "object", "properties": {1: {"type": "string"}}}) == ["(root)"]
    assert paths({"$ref": "#"}) == ["(root)"]  # only a ref to itself: no properties, so free-form
    assert set(paths(_wrap({"$ref": {"not": "a string"}}))) == {"f"}

    loop = {
        "type": "object",
        "properties": {"x": {"$ref": "#/properties/y"}, "y": {"$ref": "#/properties/x"}},
    }
    assert "recursive" in issues(loop)[0][1]
