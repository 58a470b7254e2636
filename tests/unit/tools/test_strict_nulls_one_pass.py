"""Strict-mode nulls are handled before the one validation pass, on every path.

A strict-mode model sends every argument, with ``null`` for those it leaves at their
default. The JSON text path drops the top-level nulls that mean "default" by the schema's
top-level verdicts when every ``null`` of the text is a top-level value (a count of the word
in the text), and uses the full ``NullStripper`` otherwise; both must agree with the mapping
path, whatever the text holds.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

import pytest
from pydantic import BaseModel, Field, field_validator

from tools import BaseTool, LocalToolRegistry


class Point(BaseModel):
    x: float
    label: str = "p"


class SearchRequest(BaseModel):
    query: str
    limit: int = 10
    note: str | None = "keep"
    tags: list[str | None] = Field(default_factory=lambda: list[str | None](["t"]))
    origin: Point | None = None
    stops: list[Point] = []


class Search(BaseTool[SearchRequest, dict[str, Any]]):
    name = "search"
    description = "Search."

    def execute_internal(self, request: SearchRequest) -> dict[str, Any]:
        return request.model_dump()


@pytest.fixture
def registry() -> LocalToolRegistry:
    registry = LocalToolRegistry()
    registry.register(Search())
    return registry


CASES = [
    # a strict-mode call: every argument, nulls for the defaults
    {"query": "q", "limit": None, "note": None, "tags": None, "origin": None, "stops": None},
    # the word null inside a string does not fool the count
    {"query": "null and void", "limit": None, "note": "null", "tags": None},
    {"query": "nullnull", "limit": 3},
    # nulls at depth: inside a nested model, inside list items' models
    {"query": "q", "limit": None, "origin": {"x": 1, "label": None}, "stops": [{"x": 2, "label": None}]},
    # list items that are null are values, kept (the list admits them)
    {"query": "q", "tags": [None, "a"], "limit": None},
    # a null for a required argument stays an error
    {"query": None, "limit": None},
    # a null an Optional field admits stays None
    {"query": "q", "note": None},
    # no nulls at all
    {"query": "q", "limit": 2},
]


def _outcome(result: Any) -> str:
    if result.error is not None:  # the fields named, in order
        return json.dumps([result.error.type, [e["field"] for e in result.error.details["errors"]]])
    return json.dumps(["success", result.data], sort_keys=True)


@pytest.mark.parametrize("arguments", CASES)
def test_json_text_bytes_and_mapping_paths_agree(registry: LocalToolRegistry, arguments: dict[str, Any]) -> None:
    text = json.dumps(arguments)
    outcomes = {
        _outcome(registry.call_tool_raw("search", text)),
        _outcome(registry.call_tool_raw("search", text.encode())),
        _outcome(registry.call_tool_raw("search", arguments)),
        _outcome(registry.call_tool("search", **arguments)),
    }
    assert len(outcomes) == 1, outcomes


def test_a_strict_call_gets_every_default(registry: LocalToolRegistry) -> None:
    result = registry.call_tool_raw("search", json.dumps(CASES[0]))
    assert result.data == {
        "query": "q",
        "limit": 10,
        "note": None,  # Optional[str] = "keep": the null is a value
        "tags": ["t"],  # a default factory, called
        "origin": None,
        "stops": [],
    }


def test_nested_nulls_take_the_nested_defaults(registry: LocalToolRegistry) -> None:
    result = registry.call_tool_raw("search", json.dumps(CASES[3]))
    assert result.data["origin"] == {"x": 1.0, "label": "p"}
    assert result.data["stops"] == [{"x": 2.0, "label": "p"}]
    assert result.data["limit"] == 10


def test_a_required_null_is_reported_as_the_model_sent_it(registry: LocalToolRegistry) -> None:
    result = registry.call_tool_raw("search", '{"query": null, "limit": null}')
    assert result.error is not None and result.error.type == "validation_error"
    assert result.error.details is not None
    assert [e["field"] for e in result.error.details["errors"]] == ["query"]
    assert "- limit" not in result.error.message  # only the required one is a problem


class UnionRequest(BaseModel):
    """A top level that is not a plain object for the stripper: a union of shapes inside."""

    seen: ClassVar[list[Any]] = []
    target: Point | dict[str, Any] = Field(default_factory=dict)
    count: int = 1

    @field_validator("target", mode="before")
    @classmethod
    def _record(cls, value: Any) -> Any:
        UnionRequest.seen.append(value)
        return value


def test_nulls_in_a_map_are_values_and_defaults_still_apply() -> None:
    class Tool(BaseTool[UnionRequest, dict[str, Any]]):
        name = "shapes"
        description = "Shapes."

        def execute_internal(self, request: UnionRequest) -> dict[str, Any]:
            return request.model_dump()

    registry = LocalToolRegistry()
    registry.register(Tool())
    result = registry.call_tool_raw("shapes", '{"target": {"free": null}, "count": null}')
    assert result.data == {"target": {"free": None}, "count": 1}
