"""A tool's form from its JSON schema, and the arguments a submitted form stands for."""

from __future__ import annotations

from enum import Enum
from typing import Literal

import pytest
from pydantic import BaseModel, Field

from orchestrator.ui._form import RAW_FIELD, form_fields, parse_form
from tools import LocalToolRegistry


class Units(str, Enum):
    METRIC = "metric"
    IMPERIAL = "imperial"


class Where(BaseModel):
    lat: float
    lon: float


class Request(BaseModel):
    city: str = Field(description="City name, e.g. 'Lisbon'")
    units: Units = Units.METRIC
    days: int = Field(3, ge=1, le=10)
    ratio: float | None = None
    exact: bool = False
    mode: Literal["fast", "slow"] = "fast"
    tags: list[str] = Field(default_factory=list)
    where: Where | None = None


def forecast(city: str) -> str:
    """A forecast."""
    return city


def _schema(strict: bool = False) -> dict[str, object]:
    registry = LocalToolRegistry()

    from tools import BaseTool

    class Weather(BaseTool[Request, dict]):  # type: ignore[type-arg]
        name = "weather"
        description = "Weather."

        def execute_internal(self, request: Request) -> dict:  # type: ignore[type-arg]
            return {}

    registry.register(Weather())
    schema = registry.to_openai_tools(strict=strict)[0]["function"]["parameters"]
    assert isinstance(schema, dict)
    return schema


@pytest.mark.parametrize("strict", [False, True])
def test_fields_follow_the_schema_as_exported(strict: bool) -> None:
    fields = {f.name: f for f in form_fields(_schema(strict))}
    assert list(fields) == ["city", "units", "days", "ratio", "exact", "mode", "tags", "where"]
    assert fields["city"].kind == "text"
    assert fields["city"].required
    assert fields["city"].description == "City name, e.g. 'Lisbon'"
    assert fields["units"].kind == "choice"
    assert [label for _, label in fields["units"].choices][:2] == ["metric", "imperial"]
    assert fields["days"].kind == "integer"
    assert fields["ratio"].kind == "number"
    assert fields["exact"].kind == "choice"
    assert [label for _, label in fields["exact"].choices][:2] == ["true", "false"]
    assert fields["mode"].kind == "choice"
    assert fields["tags"].kind == "json"
    assert fields["where"].kind == "json"
    if not strict:
        assert fields["days"].placeholder == "default: 3"
        assert not fields["days"].required


def test_a_submitted_form_becomes_typed_arguments_and_empty_fields_are_left_out() -> None:
    fields = form_fields(_schema())
    form = {
        "arg.city": "Lisbon",
        "arg.units": '"imperial"',
        "arg.days": "5",
        "arg.ratio": "0.5",
        "arg.exact": "true",
        "arg.mode": "",
        "arg.tags": '["a", "b"]',
        "arg.where": "",
    }
    arguments, shown = parse_form(fields, form)
    expected = {"city": "Lisbon", "units": "imperial", "days": 5, "ratio": 0.5, "exact": True, "tags": ["a", "b"]}
    assert arguments == expected
    assert {f.name: f.value for f in shown}["days"] == "5"


def test_a_field_that_cannot_be_read_is_shown_with_its_problem() -> None:
    fields = form_fields(_schema())
    arguments, shown = parse_form(fields, {"arg.city": "x", "arg.days": "five", "arg.tags": "[1,"})
    assert arguments is None
    errors = {f.name: f.error for f in shown if f.error}
    assert errors["days"] == "'five' is not a whole number"
    assert errors["tags"].startswith("not valid JSON")
    assert {f.name: f.value for f in shown}["days"] == "five"


def test_the_json_box_replaces_the_fields_and_must_hold_one_object() -> None:
    fields = form_fields(_schema())
    arguments, _ = parse_form(fields, {RAW_FIELD: '{"city": "Porto", "extra": [1]}', "arg.city": "ignored"})
    assert arguments == {"city": "Porto", "extra": [1]}
    arguments, shown = parse_form(fields, {RAW_FIELD: "[1, 2]"})
    assert arguments is None
    assert shown[-1].name == RAW_FIELD
    assert "one JSON object" in (shown[-1].error or "")


def test_a_function_tool_without_properties_has_no_fields() -> None:
    assert form_fields({"type": "object", "properties": {}}) == []
    assert form_fields(None) == []
    assert form_fields({"type": "object"}) == []
