"""ExternalTool: adapter-backed tools behave like any other tool in a registry."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from tools import InMemoryMetrics, LocalToolRegistry, ToolDefinitionError, ToolResult
from tools.errors import ErrorType
from tools.external import (
    ExternalTool,
    ToolAdapterRegistry,
    ToolConfig,
    UnknownAdapterError,
    build_external_tools,
)


class ScriptedAdapter:
    """Answers with queued results and records every call."""

    adapter_type = "scripted"

    def __init__(self, *results: ToolResult) -> None:
        self.results = list(results)
        self.calls: list[tuple[str, str | None, dict[str, Any], float | None]] = []

    def execute(
        self,
        tool_id: str,
        action: str | None,
        params: Mapping[str, Any],
        timeout: float | None = None,
    ) -> ToolResult:
        self.calls.append((tool_id, action, dict(params), timeout))
        if self.results:
            return self.results.pop(0)
        return ToolResult.success({"echo": dict(params)})

    def is_available(self, config: ToolConfig) -> bool:
        return True


CLI_CONFIG = ToolConfig.model_validate(
    {
        "id": "files",
        "name": "files",
        "adapter_type": "cli",
        "description": "Work with files.",
        "config": {
            "command": ["tool"],
            "actions": {
                "read": {"args": ["cat", "{path}"], "description": "Read a file."},
                "list": {"args": ["ls", ["-n", "{limit}"]], "description": "List files."},
            },
        },
    }
)
SINGLE = ToolConfig.model_validate(
    {
        "id": "one",
        "name": "one",
        "adapter_type": "custom",
        "description": "One thing.",
        "version": "2.1.0",
        "parameters": {
            "type": "object",
            "properties": {"q": {"type": "string", "description": "Query."}},
            "required": ["q"],
            "additionalProperties": False,
        },
    }
)


def test_single_action_tool_uses_the_action_schema() -> None:
    adapter = ScriptedAdapter()
    tool = ExternalTool(SINGLE, adapter=adapter, call_timeout=3.0)
    assert (tool.name, tool.description, tool.version) == ("one", "One thing.", "2.1.0")
    assert tool.input_schema() == SINGLE.parameters
    result = tool.execute(q="x")
    assert result.ok
    assert result.data == {"echo": {"q": "x"}}
    assert adapter.calls == [("one", "default", {"q": "x"}, 3.0)]
    bad = tool.execute(q=1)
    assert bad.error is not None
    assert bad.error.type == "validation_error"
    assert len(adapter.calls) == 1


def test_multi_action_schema_is_flat_with_an_action_enum() -> None:
    tool = ExternalTool(CLI_CONFIG, adapter=ScriptedAdapter())
    assert tool.input_schema() == {
        "type": "object",
        "properties": {
            "action": {
                "type": "string",
                "enum": ["read", "list"],
                "description": "The action to perform. 'read': Read a file. 'list': List files.",
            },
            "path": {"type": "string", "description": "Used by action read."},
            "limit": {"type": "string", "description": "Used by action list (optional)."},
        },
        "required": ["action"],
        "additionalProperties": False,
    }


def test_multi_action_dispatch_and_per_action_validation() -> None:
    adapter = ScriptedAdapter()
    tool = ExternalTool(CLI_CONFIG, adapter=adapter)
    assert tool.execute(action="read", path="a.txt", limit=None).ok  # null of other action dropped
    assert adapter.calls[-1][:3] == ("files", "read", {"path": "a.txt"})
    wrong = tool.execute(action="read", limit="3")
    assert wrong.error is not None
    assert wrong.error.type == "validation_error"
    assert "- limit: not an argument of action 'read'" in wrong.error.message
    assert "Accepted arguments: path (string, required)." in wrong.error.message
    missing = tool.execute(path="a")
    assert missing.error is not None
    assert missing.error.type == "unknown_action"
    assert "- read: Read a file. Takes: path." in missing.error.message


@pytest.mark.parametrize(
    ("etype", "retryable"),
    [
        ("upstream_error", True),
        ("timeout", True),
        ("permission_denied", False),
        ("validation_error", False),
        ("execution_error", False),
        ("cancelled", False),
    ],
)
def test_adapter_errors_keep_type_message_and_retryability(etype: ErrorType, retryable: bool) -> None:
    adapter = ScriptedAdapter(ToolResult.failure(etype, "the API said no", retryable=retryable, details={"k": 1}))
    result = ExternalTool(SINGLE, adapter=adapter).execute(q="x")
    assert result.error is not None
    assert (result.error.type, result.error.message, result.error.retryable) == (
        etype,
        "the API said no",
        retryable,
    )
    assert result.error.details == {"k": 1}


def test_registry_breaker_and_metrics_see_external_failures() -> None:
    failures = [ToolResult.failure("upstream_error", "down", retryable=False)] * 3
    adapter = ScriptedAdapter(*failures)
    metrics = InMemoryMetrics()
    registry = LocalToolRegistry(metrics=metrics, failure_threshold=3)
    registry.register(ExternalTool(SINGLE, adapter=adapter))
    for _ in range(3):
        assert registry.call_tool("one", q="x").error.type == "upstream_error"  # type: ignore[union-attr]
    blocked = registry.call_tool("one", q="x")
    assert blocked.error is not None
    assert blocked.error.type == "circuit_open"
    assert len(adapter.calls) == 3
    assert metrics.stats("one").failures == 4


def test_schema_exports_like_any_tool() -> None:
    registry = LocalToolRegistry()
    registry.register(ExternalTool(SINGLE, adapter=ScriptedAdapter()))
    (openai,) = registry.to_openai_tools(strict=True)
    assert openai == {
        "type": "function",
        "function": {
            "name": "one",
            "description": "One thing.",
            "parameters": SINGLE.parameters,
            "strict": True,
        },
    }
    (anthropic,) = registry.to_anthropic_tools()
    assert anthropic["input_schema"] == SINGLE.parameters
    (mcp,) = registry.to_mcp_tools()
    assert mcp["inputSchema"] == SINGLE.parameters


def test_build_external_tools_split_and_unknown_adapter() -> None:
    adapters = ToolAdapterRegistry()
    with pytest.raises(UnknownAdapterError, match="known: none"):
        build_external_tools(CLI_CONFIG, adapters)
    adapter = ScriptedAdapter()
    adapter.adapter_type = "cli"
    adapters.register_adapter(adapter)
    (combined,) = build_external_tools(CLI_CONFIG, adapters)
    assert combined.name == "files"
    split = build_external_tools(CLI_CONFIG, adapters, split_actions=True)
    assert [t.name for t in split] == ["files_read", "files_list"]
    assert split[0].execute(path="p").ok
    assert adapter.calls[-1][1] == "read"


def test_definition_errors() -> None:
    with pytest.raises(ToolDefinitionError, match="unknown action 'nope'"):
        ExternalTool(CLI_CONFIG, adapter=ScriptedAdapter(), action="nope")
    with pytest.raises(ToolDefinitionError, match="must match"):
        ExternalTool(SINGLE, adapter=ScriptedAdapter(), name="bad name")
    bad_schema = SINGLE.model_copy(update={"parameters": {"type": "object", "properties": 3}})
    with pytest.raises(ToolDefinitionError, match="not a valid JSON schema"):
        ExternalTool(bad_schema, adapter=ScriptedAdapter())
