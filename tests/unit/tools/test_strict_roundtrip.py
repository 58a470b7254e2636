"""Strict export round trip: a null sent for a defaulted field validates into its default."""

from __future__ import annotations

import enum
import json
from typing import Any, Literal

import pytest
from jsonschema import Draft202012Validator
from pydantic import BaseModel, Field

from tools import BaseTool, LocalToolRegistry


class Color(str, enum.Enum):
    RED = "red"
    BLUE = "blue"


class Window(BaseModel):
    start: str = "09:00"
    end: str = "17:00"


class Everything(BaseModel):
    query: str = Field(description="What to look for.")
    limit: int = Field(default=10, description="Maximum hits.")
    lang: str = "en"
    color: Color = Color.BLUE
    mode: Literal["fast", "exact"] = "fast"
    tags: list[str] = ["inbox"]
    window: Window = Window()
    owner: str | None = None
    cutoff: float | None = 0.5


class Echo(BaseTool[Everything, Everything]):
    name = "echo"
    description = "Echo the request back."

    def execute_internal(self, request: Everything) -> Everything:
        return request


DEFAULTS = {
    "query": "q",
    "limit": 10,
    "lang": "en",
    "color": "blue",
    "mode": "fast",
    "tags": ["inbox"],
    "window": {"start": "09:00", "end": "17:00"},
    "owner": None,
    "cutoff": None,  # Optional[T] = x: an explicit null stays None (DESIGN section 3)
}


@pytest.fixture
def exported() -> tuple[LocalToolRegistry, dict[str, Any]]:
    registry = LocalToolRegistry()
    registry.register(Echo())
    tool = registry.to_openai_tools(strict=True)[0]["function"]
    assert tool["strict"] is True
    return registry, tool["parameters"]


def test_strict_schema_has_every_field_required_nullable_and_no_default(
    exported: tuple[LocalToolRegistry, dict[str, Any]],
) -> None:
    _, schema = exported
    text = json.dumps(schema)
    assert '"default"' not in text
    assert schema["required"] == list(Everything.model_fields)
    assert schema["properties"]["limit"] == {
        "type": ["integer", "null"],
        "description": "Maximum hits. Defaults to 10.",
    }
    assert schema["properties"]["query"] == {"type": "string", "description": "What to look for."}
    Draft202012Validator.check_schema(schema)


@pytest.mark.parametrize("field", [f for f in Everything.model_fields if f != "query"])
def test_null_for_each_default_kind_round_trips(exported: tuple[LocalToolRegistry, dict[str, Any]], field: str) -> None:
    registry, schema = exported
    call = {name: (None if name != "query" else "q") for name in Everything.model_fields}
    assert not list(Draft202012Validator(schema).iter_errors(call))  # the model may send it
    out = registry.call_tool_raw("echo", json.dumps(call))
    assert out.ok, out.error
    assert out.data[field] == DEFAULTS[field]
    # and it equals leaving the argument out (except Optional[T] = x, which keeps null)
    omitted = registry("echo", query="q")["data"][field]
    if field != "cutoff":
        assert out.data[field] == omitted


def test_nested_nulls_under_strict(exported: tuple[LocalToolRegistry, dict[str, Any]]) -> None:
    registry, schema = exported
    call = dict.fromkeys(Everything.model_fields) | {
        "query": "q",
        "window": {"start": None, "end": "18:00"},
    }
    assert not list(Draft202012Validator(schema).iter_errors(call))
    assert registry("echo", **call)["data"]["window"] == {"start": "09:00", "end": "18:00"}


def test_handwritten_parameters_round_trip() -> None:
    class Hand(BaseTool[dict[str, Any], Any]):
        name = "hand"
        parameters = {
            "type": "object",
            "properties": {
                "city": {"type": "string", "minLength": 1},
                "days": {"type": "integer", "default": 3},
                "units": {"type": "string", "enum": ["c", "f"], "default": "c"},
                "note": {"type": "string"},
            },
            "required": ["city"],
            "additionalProperties": False,
        }

        def execute_internal(self, request: dict[str, Any]) -> Any:
            return request

    registry = LocalToolRegistry()
    registry.register(Hand())
    tool = registry.to_openai_tools(strict=True)[0]["function"]
    schema = tool["parameters"]
    assert tool["strict"] is True and '"default"' not in json.dumps(schema)
    assert schema["required"] == ["city", "days", "units", "note"]
    call = {"city": "Oslo", "days": None, "units": None, "note": None}
    assert not list(Draft202012Validator(schema).iter_errors(call))
    assert registry("hand", **call)["data"] == {"city": "Oslo", "days": 3, "units": "c"}
    # minLength is dropped from the export but still enforced
    assert "minLength" not in json.dumps(schema)
    assert registry("hand", city="")["error_type"] == "validation_error"
