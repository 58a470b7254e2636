"""LocalToolRegistry: registration, aliases, every call path, export formats and caching."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from pydantic import BaseModel, Field

from tools import (
    BaseTool,
    DuplicateToolError,
    InMemoryMetrics,
    InvalidToolNameError,
    LocalToolRegistry,
    ToolDefinitionError,
    ToolError,
)


class AddRequest(BaseModel):
    a: int = Field(description="First addend.")
    b: int = Field(default=0, description="Second addend.")


class AddTool(BaseTool[AddRequest, int]):
    name = "add"
    description = "Add two integers."
    version = "1.0.0"

    def execute_internal(self, request: AddRequest) -> int:
        return request.a + request.b


class Flaky(BaseTool[AddRequest, int]):
    name = "flaky"

    def __init__(self) -> None:
        self.calls = 0

    def execute_internal(self, request: AddRequest) -> int:
        self.calls += 1
        raise ToolError("boom")


@pytest.fixture
def registry() -> LocalToolRegistry:
    reg = LocalToolRegistry(metrics=InMemoryMetrics())
    reg.register(AddTool())
    return reg


def test_container_protocol(registry: LocalToolRegistry) -> None:
    assert "add" in registry and "sub" not in registry
    assert len(registry) == 1 and list(registry) == ["add"] == registry.names()
    assert registry.get("sub") is None and registry.get_tool("sub") is None
    assert isinstance(registry.get_tool("add"), AddTool)


def test_every_call_path_gives_the_same_envelope_and_is_metered(
    registry: LocalToolRegistry,
) -> None:
    bound = registry.get("add")
    assert bound is not None
    outs = [
        bound(a=1, b=2),
        registry("add", a=1, b=2),
        registry.call_tool("add", a=1, b=2).to_dict(),
        registry.call_tool_raw("add", '{"a": 1, "b": 2}').to_dict(),
        registry.call_tool_raw("add", {"a": 1, "b": 2}).to_dict(),
    ]
    assert all(o["data"] == 3 and o["_metadata"]["tool_name"] == "add" for o in outs)
    metrics = registry.metrics
    assert isinstance(metrics, InMemoryMetrics)
    assert metrics.stats("add").calls == 5 and metrics.stats("add").success_rate == 1.0


async def test_async_call_paths(registry: LocalToolRegistry) -> None:
    assert (await registry.acall_tool("add", a=2)).data == 2
    assert (await registry.acall_tool_raw("add", '{"a": 5, "b": 1}')).data == 6
    assert (await registry.acall_tool("nope")).error is not None


def test_unknown_tool_suggests_closest_names(registry: LocalToolRegistry) -> None:
    registry.register(lambda text: text, name="add_note")
    out = registry("ad", a=1)
    assert out["error_type"] == "unknown_tool"
    assert "Did you mean: 'add', 'add_note'?" in out["error"]
    assert out["details"]["available"] == ["add", "add_note"]
    assert registry("zzz")["error"].endswith("Available tools: add, add_note.")


def test_duplicates_replace_and_unregister(registry: LocalToolRegistry) -> None:
    with pytest.raises(DuplicateToolError, match="replace=True"):
        registry.register(AddTool())
    registry.register(AddTool(), replace=True)
    assert registry.unregister("add") and not registry.unregister("add")
    assert "add" not in registry


def test_bad_registrations(registry: LocalToolRegistry) -> None:
    with pytest.raises(InvalidToolNameError):
        registry.register(AddTool(), name="add.v2")
    with pytest.raises(ToolDefinitionError, match="instance"):
        registry.register(AddTool)  # the class, not an instance
    with pytest.raises(ToolDefinitionError, match="not a valid JSON schema"):
        registry.register(AddTool(), name="add2", parameters={"type": "object", "required": "a"})


def test_alias_under_old_name_shares_collaborators(registry: LocalToolRegistry) -> None:
    tool = registry.get_tool("add")
    registry.register(tool, name="legacy_add", description="Old name for add.")  # type: ignore[arg-type]
    assert registry("legacy_add", a=2, b=3)["data"] == 5
    assert registry("legacy_add", a=2, b=3)["_metadata"]["tool_name"] == "legacy_add"
    assert registry("legacy_add", a="x")["error"].startswith("Invalid arguments for tool 'legacy_add'")
    names = [t["function"]["name"] for t in registry.to_openai_tools()]
    assert names == ["add", "legacy_add"]
    assert registry.to_openai_tools()[1]["function"]["description"] == "Old name for add."


def test_preset_arguments_are_hidden_and_applied(registry: LocalToolRegistry) -> None:
    registry.register(registry.get_tool("add"), name="increment", preset={"b": 1})  # type: ignore[arg-type]
    assert registry("increment", a=41)["data"] == 42
    schema = registry.to_openai_tools()[1]["function"]["parameters"]
    assert list(schema["properties"]) == ["a"]


def test_parameters_override(registry: LocalToolRegistry) -> None:
    params = {
        "type": "object",
        "properties": {"a": {"type": "integer", "description": "The number."}},
        "required": ["a"],
    }
    registry.register(registry.get_tool("add"), name="add_custom", parameters=params)  # type: ignore[arg-type]
    exported = registry.to_anthropic_tools()[1]
    assert exported == {
        "name": "add_custom",
        "description": "Add two integers.",
        "input_schema": params,
    }


def test_export_formats_whole(registry: LocalToolRegistry) -> None:
    params = {
        "type": "object",
        "properties": {
            "a": {"type": "integer", "description": "First addend."},
            "b": {"type": "integer", "default": 0, "description": "Second addend."},
        },
        "required": ["a"],
        "additionalProperties": False,
    }
    assert registry.to_openai_tools() == [
        {
            "type": "function",
            "function": {"name": "add", "description": "Add two integers.", "parameters": params},
        }
    ]
    assert registry.to_anthropic_tools() == [
        {"name": "add", "description": "Add two integers.", "input_schema": params}
    ]
    assert registry.to_mcp_tools() == [
        {
            "name": "add",
            "description": "Add two integers.",
            "inputSchema": params,
        }
    ]
    assert registry.to_openai_tools(strict=True) == [
        {
            "type": "function",
            "function": {
                "name": "add",
                "description": "Add two integers.",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "a": {"type": "integer", "description": "First addend."},
                        "b": {
                            "type": ["integer", "null"],
                            "description": "Second addend. Defaults to 0.",
                        },
                    },
                    "required": ["a", "b"],
                    "additionalProperties": False,
                },
                "strict": True,
            },
        }
    ]


def test_mcp_export_has_output_schema_for_model_responses() -> None:
    class Out(BaseModel):
        total: int

    class Summing(BaseTool[AddRequest, Out]):
        name = "summing"

        def execute_internal(self, request: AddRequest) -> Out:
            return Out(total=request.a + request.b)

    reg = LocalToolRegistry()
    reg.register(Summing())
    entry = reg.to_mcp_tools()[0]
    assert entry["outputSchema"] == {
        "type": "object",
        "properties": {"total": {"type": "integer"}},
        "required": ["total"],
    }


def test_export_is_cached_shared_read_only_and_invalidated(registry: LocalToolRegistry) -> None:
    first = registry.to_openai_tools(strict=True)
    with pytest.raises(TypeError, match="read-only"):
        first[0]["function"]["name"] = "mutated"
    with pytest.raises(TypeError, match=r"copy\.deepcopy"):
        first[0]["function"]["parameters"]["properties"].pop("a")
    mine = copy.deepcopy(first[0])  # a plain, mutable copy
    mine["function"]["name"] = "mutated"
    first[0] = {**first[0], "cache_control": {"type": "ephemeral"}}  # the list is the caller's
    first.append({"type": "function"})
    again = registry.to_openai_tools(strict=True)
    assert [t["function"]["name"] for t in again] == ["add"] and "cache_control" not in again[0]
    assert again is not first and json.loads(json.dumps(again)) == again
    registry.register(lambda q: q, name="echo")
    assert [t["function"]["name"] for t in registry.to_openai_tools(strict=True)] == ["add", "echo"]
    registry.unregister("echo")
    assert len(registry.to_openai_tools(strict=True)) == 1


def test_one_unsupported_tool_does_not_break_strict_export(
    registry: LocalToolRegistry, caplog: pytest.LogCaptureFixture
) -> None:
    class MapRequest(BaseModel):
        labels: dict[str, int]

    class Labels(BaseTool[MapRequest, Any]):
        name = "labels"

        def execute_internal(self, request: MapRequest) -> Any:
            return request.labels

    registry.register(Labels())
    with caplog.at_level("WARNING"):
        tools = registry.to_openai_tools(strict=True)
    assert [t["function"]["strict"] for t in tools] == [True, False]
    assert "additionalProperties" in json.dumps(tools[1]["function"]["parameters"])
    assert any("labels" in r.getMessage() and "strict" in r.getMessage() for r in caplog.records)
    with pytest.raises(ToolDefinitionError, match="labels"):
        registry.to_openai_tools(strict=True, on_unsupported="raise")
    assert registry("labels", labels={"a": 1})["data"] == {"a": 1}


def test_function_registration_with_overrides() -> None:
    def search_docs(query: str) -> str:
        """Search the docs.

        Args:
            query: Words.
        """
        return query

    reg = LocalToolRegistry()
    reg.register(search_docs, name="docs", description="Find documentation pages.")
    tool = reg.to_openai_tools()[0]["function"]
    assert (tool["name"], tool["description"]) == ("docs", "Find documentation pages.")
    assert reg("docs", query="x")["data"] == "x"


def test_hidden_registrations_are_callable_but_not_offered() -> None:
    from tools.routing import ToolCategory, ToolManual

    def lookup(order_id: int) -> int:
        """Look an order up."""
        return order_id

    registry = LocalToolRegistry()
    manual = ToolManual(name="lookup", category=ToolCategory.SEARCH, risk="safe", mutating=False)
    registry.register(lookup, manual=manual)
    registry.register(lookup, name="get_order", hidden=True, manual=manual)  # an old name
    assert registry.is_hidden("get_order") and not registry.is_hidden("lookup")
    assert [t["function"]["name"] for t in registry.to_openai_tools()] == ["lookup"]
    assert [t["name"] for t in registry.to_anthropic_tools()] == ["lookup"]
    assert [t["name"] for t in registry.to_mcp_tools()] == ["lookup"]
    assert [t["function"]["name"] for t in registry.to_openai_tools(include_hidden=True)] == ["lookup", "get_order"]
    assert registry("get_order", order_id=7)["data"] == 7
    assert registry.call_tool_raw("get_order", '{"order_id": 8}').data == 8
    view = registry.for_agent("explore")
    assert view.names() == ["lookup", "get_order"]  # callable through the view too...
    assert [t["function"]["name"] for t in view.to_openai_tools()] == ["lookup"]  # ...but not offered
    assert view.call_tool("get_order", order_id=9).data == 9
