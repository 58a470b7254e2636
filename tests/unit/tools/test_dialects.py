"""Schemas in the dialects of public function-calling corpora register, validate and export."""

from __future__ import annotations

import json
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from tools import BaseTool, LocalToolRegistry
from tools.schema._dialects import normalize_parameters

# The shape of a BFCL function document (types "dict", "float", "tuple", "any").
BFCL: dict[str, Any] = {
    "name": "calculate_triangle_area",
    "description": "Calculate the area of a triangle given its base and height.",
    "parameters": {
        "type": "dict",
        "properties": {
            "base": {"type": "integer", "description": "The base of the triangle."},
            "height": {"type": "float", "description": "The height of the triangle."},
            "unit": {"type": "string", "description": "The unit of measure.", "default": "units"},
            "corners": {"type": "tuple", "items": {"type": "float"}, "description": "Corner angles."},
            "extra": {"type": "any", "description": "Anything."},
            "type": {"type": "string", "description": "A property literally called 'type'."},
        },
        "required": ["base", "height"],
    },
}

# The shape of an APIGen / xLAM tool: a bare map of parameters with Python type names.
XLAM: dict[str, Any] = {
    "query": {"description": "Search terms.", "type": "str", "default": "cats"},
    "limit": {"description": "How many.", "type": "int, optional"},
    "tags": {"description": "Filters.", "type": "List[str]"},
    "lat": {"description": "Latitude.", "type": "float"},
}


def test_bfcl_dialect_becomes_json_schema() -> None:
    schema, changes = normalize_parameters(BFCL["parameters"])
    assert schema == {
        "type": "object",
        "properties": {
            "base": {"type": "integer", "description": "The base of the triangle."},
            "height": {"type": "number", "description": "The height of the triangle."},
            "unit": {"type": "string", "description": "The unit of measure.", "default": "units"},
            "corners": {"type": "array", "items": {"type": "number"}, "description": "Corner angles."},
            "extra": {"description": "Anything."},
            "type": {"type": "string", "description": "A property literally called 'type'."},
        },
        "required": ["base", "height"],
    }
    assert "(root): type 'dict' -> 'object'" in changes and len(changes) == 5
    Draft202012Validator.check_schema(schema)


def test_apigen_parameter_map_is_wrapped() -> None:
    schema, changes = normalize_parameters(XLAM)
    assert schema == {
        "type": "object",
        "properties": {
            "query": {"description": "Search terms.", "type": "string", "default": "cats"},
            "limit": {"description": "How many.", "type": "integer"},
            "tags": {"description": "Filters.", "type": "array", "items": {"type": "string"}},
            "lat": {"description": "Latitude.", "type": "number"},
        },
        "required": ["tags", "lat"],
    }
    assert changes[0].startswith("(root): a bare map")


def test_standard_schema_is_unchanged() -> None:
    standard = {"type": "object", "properties": {"a": {"type": ["string", "null"]}}, "required": []}
    assert normalize_parameters(standard) == (standard, [])


def test_corpus_tool_registers_validates_and_exports_strict(caplog: pytest.LogCaptureFixture) -> None:
    calls: list[dict[str, Any]] = []

    def triangle(**arguments: Any) -> float:
        calls.append(arguments)
        return float(arguments["base"] * arguments["height"] / 2)

    registry = LocalToolRegistry()
    with caplog.at_level("WARNING"):
        registry.register(triangle, name=BFCL["name"], description=BFCL["description"], parameters=BFCL["parameters"])
    assert "type 'dict' -> 'object'" in caplog.text
    exported = registry.to_openai_tools(strict=True)[0]["function"]
    assert exported["parameters"]["properties"]["height"]["type"] == "number"
    assert json.dumps(exported).count('"dict"') == 0
    # ground truth as a corpus states it, through the registry
    out = registry("calculate_triangle_area", base=10, height=5.0)
    assert out["data"] == 25.0, out
    assert calls == [{"base": 10, "height": 5.0, "unit": "units"}]  # the schema's default filled in
    # the hand-written schema is what validates, although the function takes **arguments
    bad = registry("calculate_triangle_area", base="ten", height=5.0, colour="red")
    assert bad["error_type"] == "validation_error" and "base" in bad["error"]
    missing = registry("calculate_triangle_area", base=10)
    assert "height: required argument is missing" in missing["error"]


def test_instance_parameters_in_a_dialect_are_converted_at_registration() -> None:
    class Corpus(BaseTool[dict[str, Any], Any]):
        def __init__(self, doc: dict[str, Any]) -> None:
            self.name = doc["name"]
            self.description = doc["description"]
            self.parameters = doc["parameters"]

        def execute_internal(self, request: dict[str, Any]) -> Any:
            return request

    registry = LocalToolRegistry()
    registry.register(Corpus(BFCL))
    assert registry("calculate_triangle_area", base=3, height=2.5)["data"] == {
        "base": 3,
        "height": 2.5,
        "unit": "units",
    }
    bad = registry("calculate_triangle_area", base="three", height=2)
    assert bad["error_type"] == "validation_error" and "base" in bad["error"]


# BFCL's file-system backend: Python's ``None`` default written as the string "None".
BFCL_FIND: dict[str, Any] = {
    "name": "find",
    "description": "Find files or directories under a path.",
    "parameters": {
        "type": "dict",
        "properties": {
            "path": {"type": "string", "description": "Where to search.", "default": "."},
            "name": {"type": "string", "description": "A name to match.", "default": "None"},
            "depth": {"type": "integer", "description": "How deep.", "default": None},
            "note": {"type": ["string", "null"], "description": "Nullable, null default.", "default": None},
        },
        "required": [],
    },
}


def test_none_defaults_mean_no_default_value_is_sent() -> None:
    schema, changes = normalize_parameters(BFCL_FIND["parameters"])
    assert schema["properties"] == {
        "path": {"type": "string", "description": "Where to search.", "default": "."},
        "name": {"type": "string", "description": "A name to match."},
        "depth": {"type": "integer", "description": "How deep."},
        "note": {"type": ["string", "null"], "description": "Nullable, null default.", "default": None},
    }
    assert "name: default 'None' means no default value is sent; removed" in changes
    assert "depth: default None means no default value is sent; removed" in changes
    # A required parameter keeps what it says; the corpora mark only optional ones so.
    required = {"type": "object", "properties": {"x": {"type": "string", "default": "None"}}, "required": ["x"]}
    assert normalize_parameters(required) == (required, [])


def test_left_out_argument_gets_the_functions_own_default() -> None:
    searched: list[tuple[str, str | None, int]] = []

    def find(path: str = ".", name: str | None = None, depth: int = 3, note: str | None = None) -> int:
        searched.append((path, name, depth))
        return 0

    registry = LocalToolRegistry()
    registry.register(find, description=BFCL_FIND["description"], parameters=BFCL_FIND["parameters"])
    assert registry("find", path=".")["status"] == "success"
    assert searched == [(".", None, 3)]  # not files named "None"
    assert registry("find", name="report.txt")["status"] == "success"
    assert searched[-1] == (".", "report.txt", 3)
