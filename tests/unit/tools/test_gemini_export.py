"""Gemini function declarations, checked against google-genai's own models."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import pytest
from google.genai import types
from pydantic import BaseModel, Field

from tools import BaseTool, LocalToolRegistry, UnsupportedSchemaError
from tools.cli import main
from tools.schema import gemini_tool
from tools.schema._gemini import to_gemini_schema

#: What a Gemini ``Schema`` node may carry in this export (the OpenAPI 3.0 subset).
ALLOWED = frozenset(
    {
        "type",
        "format",
        "description",
        "nullable",
        "enum",
        "properties",
        "required",
        "items",
        "anyOf",
        "minItems",
        "maxItems",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "pattern",
        "minProperties",
        "maxProperties",
    }
)
TYPES = {"STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT"}


class Address(BaseModel):
    street: str
    city: str = "Lisbon"


class Node(BaseModel):
    name: str
    children: list[Node] = []


class Shipment(BaseModel):
    kind: Literal["parcel"] = "parcel"
    weight_kg: float = Field(ge=0, le=30, description="Weight in kilograms.")


class WeatherRequest(BaseModel):
    city: str = Field(description="City name, e.g. 'Lisbon'")
    units: Literal["metric", "imperial"] = "metric"
    limit: int | None = None
    address: Address | None = None
    tags: dict[str, int] = {}
    level: Literal[1, 2, 3] = 1
    tree: Node | None = None
    shipment: Shipment


class WeatherTool(BaseTool[WeatherRequest, dict[str, Any]]):
    name = "weather"
    description = "Current weather for a city."

    def execute_internal(self, request: WeatherRequest) -> dict[str, Any]:
        return request.model_dump()


def nodes(schema: Any) -> Iterator[dict[str, Any]]:
    if not isinstance(schema, dict):
        return
    yield schema
    for sub in (schema.get("properties") or {}).values():
        yield from nodes(sub)
    yield from nodes(schema.get("items"))
    for branch in schema.get("anyOf") or ():
        yield from nodes(branch)


def check_gemini_shape(declaration: dict[str, Any]) -> None:
    """google-genai accepts it (its models forbid unknown keys) and nothing is lost on the way."""
    model = types.FunctionDeclaration.model_validate(declaration)
    assert model.model_dump(mode="json", exclude_none=True, by_alias=True) == declaration
    for node in nodes(declaration.get("parameters")):
        assert set(node) <= ALLOWED, set(node) - ALLOWED
        assert "type" in node or "anyOf" in node
        assert node.get("type", "STRING") in TYPES
        assert all(isinstance(value, str) for value in node.get("enum", []))


def test_a_pydantic_tool_exports_as_a_whole_gemini_declaration(caplog: pytest.LogCaptureFixture) -> None:
    registry = LocalToolRegistry()
    registry.register(WeatherTool())
    with caplog.at_level(logging.WARNING, logger="tools.schema.export"):
        (declaration,) = registry.to_gemini_tools()
    assert declaration == {
        "name": "weather",
        "description": "Current weather for a city.",
        "parameters": {
            "type": "OBJECT",
            "properties": {
                "city": {"type": "STRING", "description": "City name, e.g. 'Lisbon'"},
                "units": {"type": "STRING", "enum": ["metric", "imperial"], "description": "Defaults to 'metric'."},
                "limit": {"type": "INTEGER", "nullable": True},
                "address": {
                    "type": "OBJECT",
                    "properties": {
                        "street": {"type": "STRING"},
                        "city": {"type": "STRING", "description": "Defaults to 'Lisbon'."},
                    },
                    "required": ["street"],
                    "nullable": True,
                },
                "tags": {"type": "OBJECT", "description": "Defaults to {}."},
                "level": {"type": "INTEGER", "description": "One of: 1, 2, 3. Defaults to 1."},
                "tree": {
                    "type": "OBJECT",
                    "properties": {
                        "name": {"type": "STRING"},
                        "children": {
                            "type": "ARRAY",
                            "items": {
                                "type": "OBJECT",
                                "description": "A nested value of the same shape as its parent.",
                            },
                            "description": "Defaults to [].",
                        },
                    },
                    "required": ["name"],
                    "nullable": True,
                },
                "shipment": {
                    "type": "OBJECT",
                    "properties": {
                        "kind": {"type": "STRING", "enum": ["parcel"], "description": "Defaults to 'parcel'."},
                        "weight_kg": {
                            "type": "NUMBER",
                            "minimum": 0,
                            "maximum": 30,
                            "description": "Weight in kilograms.",
                        },
                    },
                    "required": ["weight_kg"],
                },
            },
            "required": ["city", "shipment"],
        },
    }
    check_gemini_shape(declaration)
    # Each loss is named once, with the tool and the field, as the strict export does.
    (record,) = [r for r in caplog.records if "Gemini" in r.getMessage()]
    message = record.getMessage()
    assert "'weather'" in message
    assert "tags: a free-form object or map" in message
    assert "level: an enum of integer values" in message
    assert "tree.children[]: a recursive reference (Node)" in message


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        (  # nullable via type list; oneOf -> anyOf; $ref inlined with its sibling description
            {
                "type": "object",
                "properties": {
                    "a": {"type": ["string", "null"]},
                    "b": {"oneOf": [{"type": "integer"}, {"type": "string", "format": "email"}]},
                    "c": {"$ref": "#/$defs/Point", "description": "Where."},
                },
                "required": ["c"],
                "additionalProperties": False,
                "$defs": {"Point": {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]}},
            },
            {
                "type": "OBJECT",
                "properties": {
                    "a": {"type": "STRING", "nullable": True},
                    "b": {"anyOf": [{"type": "INTEGER"}, {"type": "STRING", "description": "Format: email."}]},
                    "c": {
                        "type": "OBJECT",
                        "properties": {"x": {"type": "NUMBER"}},
                        "required": ["x"],
                        "description": "Where.",
                    },
                },
                "required": ["c"],
            },
        ),
        (  # const; enum with null; a single allOf merged; pure constraints dropped
            {
                "type": "object",
                "properties": {
                    "mode": {"const": "fast"},
                    "colour": {"enum": ["red", "green", None]},
                    "when": {"allOf": [{"type": "string", "format": "date-time"}], "description": "Start."},
                    "ids": {"type": "array", "items": {"type": "integer"}, "uniqueItems": True, "maxItems": 5},
                },
            },
            {
                "type": "OBJECT",
                "properties": {
                    "mode": {"type": "STRING", "enum": ["fast"]},
                    "colour": {"type": "STRING", "enum": ["red", "green"], "nullable": True},
                    "when": {"type": "STRING", "format": "date-time", "description": "Start."},
                    "ids": {"type": "ARRAY", "items": {"type": "INTEGER"}, "maxItems": 5},
                },
            },
        ),
    ],
)
def test_json_schema_constructs_convert(schema: dict[str, Any], expected: dict[str, Any]) -> None:
    conversion = to_gemini_schema(schema)
    assert conversion.schema == expected and conversion.issues == ()
    check_gemini_shape({"name": "t", "description": "d", "parameters": conversion.schema})


def test_a_tool_without_arguments_leaves_parameters_out() -> None:
    registry = LocalToolRegistry()

    def now() -> str:
        """The current time."""
        return "12:00"

    registry.register(now)
    assert registry.to_gemini_tools() == [{"name": "now", "description": "The current time."}]
    check_gemini_shape(registry.to_gemini_tools()[0])


def test_untyped_and_free_form_fields_warn_or_raise(caplog: pytest.LogCaptureFixture) -> None:
    schema = {
        "type": "object",
        "properties": {"anything": {"description": "Any value."}, "pairs": {"type": "object"}},
        "patternProperties": {"^x-": {"type": "string"}},
    }
    with caplog.at_level(logging.WARNING, logger="tools.schema.export"):
        declaration = gemini_tool("corpus_tool", "d", schema)
    check_gemini_shape(declaration)
    assert declaration["parameters"]["properties"]["anything"] == {"type": "STRING", "description": "Any value."}
    text = caplog.text
    assert "'corpus_tool'" in text and "anything: an untyped value" in text and "pairs: an object without" in text
    assert "patternProperties is not expressible" in text
    with pytest.raises(UnsupportedSchemaError, match="anything: an untyped value"):
        gemini_tool("corpus_tool", "d", schema, on_unsupported="raise")


def test_a_name_gemini_rejects_is_named_in_the_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="tools.schema.export"):
        gemini_tool("3d-render", "d", {"type": "object", "properties": {"x": {"type": "string"}}})
    assert "(name): Gemini function names start with a letter" in caplog.text


def test_export_is_cached_and_fresh_and_views_export_their_tools(caplog: pytest.LogCaptureFixture) -> None:
    registry = LocalToolRegistry()
    registry.register(WeatherTool())

    @registry.tool
    def delete_everything(confirm: bool) -> str:
        """Delete everything."""
        return "gone"

    with caplog.at_level(logging.WARNING, logger="tools.schema.export"):
        first = registry.to_gemini_tools()
        with pytest.raises(TypeError, match="read-only"):  # shared definitions, as every export's
            first[0]["name"] = "mutated"
        first[0] = {**first[0], "name": "replaced"}  # the list itself is the caller's
        second = registry.to_gemini_tools()
    assert second[0]["name"] == "weather"
    assert len([r for r in caplog.records if "weather" in r.getMessage()]) == 1  # warned once, then cached
    view = registry.for_agent("explore")
    names = [d["name"] for d in view.to_gemini_tools()]
    assert names == [t["function"]["name"] for t in view.to_openai_tools()]
    assert "delete_everything" not in names


def test_cli_writes_gemini_declarations(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    env = {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "cfg"), "PATH": "/usr/bin:/bin"}
    assert main(["schema", "--format", "gemini"], env=env) == 0
    declarations = json.loads(capsys.readouterr().out)
    assert [d["name"] for d in declarations] == ["math_solver"]  # the default registry's builtins
    for declaration in declarations:
        check_gemini_shape(declaration)


def test_builtin_and_workspace_tool_schemas_are_accepted_by_google_genai(tmp_path: Path) -> None:
    from tools.builtin.workspace import TodoStore, Workspace, workspace_tools

    registry = LocalToolRegistry()
    for tool in workspace_tools(Workspace(tmp_path, todos=TodoStore())):
        registry.register(tool)
    declarations = registry.to_gemini_tools()
    assert len(declarations) == len(registry)
    for declaration in declarations:
        check_gemini_shape(declaration)
