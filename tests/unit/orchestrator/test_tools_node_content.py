"""What the model receives in a tool message: status and data, or status, error and error_type.

The envelope's metadata (request id, timestamps, durations, attempts) is for the
application: it stays in the node's ``tool_results`` records, never in the tool message.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from orchestrator.graph import ToolsNode
from tools import LocalToolRegistry


def call(call_id: str, name: str, arguments: Any) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def state_with(*calls: Any) -> dict[str, Any]:
    return {"messages": [{"role": "assistant", "content": None, "tool_calls": list(calls)}]}


@pytest.fixture
def registry() -> LocalToolRegistry:
    registry = LocalToolRegistry()

    def add(a: int, b: int) -> int:
        """Add two integers.

        Args:
            a: First.
            b: Second.
        """
        return a + b

    def crash() -> str:
        """Fail with an internal error."""
        raise RuntimeError("internal detail")

    def rows() -> list[str]:
        """Many rows."""
        return [f"row {i}" for i in range(3000)]

    registry.register(add)
    registry.register(crash)
    registry.register(rows)
    return registry


@pytest.mark.parametrize("entry", ["sync", "async"])
def test_tool_messages_carry_only_what_the_model_can_use(registry: LocalToolRegistry, entry: str) -> None:
    state = state_with(
        call("ok", "add", {"a": 1, "b": 2}),
        call("bad", "add", {"a": "x"}),
        call("boom", "crash", {}),
        call("who", "nope", {}),
    )
    with ToolsNode(registry) as node:
        update = node(state) if entry == "sync" else asyncio.run(node.ainvoke(state))
    bodies = [json.loads(m["content"]) for m in update["messages"]]
    assert bodies[0] == {"status": "success", "data": 3}
    for body in bodies[1:]:
        assert set(body) == {"status", "error", "error_type"}
        assert body["status"] == "error"
    assert [b["error_type"] for b in bodies[1:]] == ["validation_error", "execution_error", "unknown_tool"]
    assert "a: Input should be a valid integer" in bodies[1]["error"]  # field errors stay in the text


def test_metadata_stays_in_the_trace_records(registry: LocalToolRegistry) -> None:
    with ToolsNode(registry) as node:
        update = node(state_with(call("ok", "add", {"a": 1, "b": 2}), call("boom", "crash", {})))
    for record in update["tool_results"]:
        metadata = record["metadata"]
        assert record["request_id"] == metadata["request_id"]
        assert record["request_id"]
        assert {"tool_name", "tool_version", "started_at", "duration_ms", "attempts"} <= set(metadata)
    # The redacted error still lets a person find the traceback: its request id is in the text.
    boom = update["tool_results"][1]
    assert boom["request_id"] in json.loads(update["messages"][1]["content"])["error"]


def test_cut_output_keeps_the_model_view(registry: LocalToolRegistry) -> None:
    with ToolsNode(registry, max_output_chars=1000) as node:
        update = node(state_with(call("r", "rows", {})))
    body = json.loads(update["messages"][0]["content"])
    assert set(body) == {"status", "data", "truncated"}
    assert update["tool_results"][0]["truncated"] is True
    assert update["tool_results"][0]["metadata"]["tool_name"] == "rows"
