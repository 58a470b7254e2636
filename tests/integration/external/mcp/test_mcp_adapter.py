"""MCPAdapter: the ToolAdapter protocol over a real SDK-built server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytest.importorskip("mcp")

from tools.external import ToolAdapter, ToolAdapterRegistry, ToolConfig
from tools.external.mcp import MCPAdapter

pytestmark = pytest.mark.mcp


@pytest.fixture(scope="module")
def adapter(sdk_server_cmd: list[str]) -> Iterator[MCPAdapter]:
    config = ToolConfig(
        id="test-server",
        name="test_server",
        adapter_type="mcp",
        config={"command": sdk_server_cmd, "timeout": 20},
    )
    with MCPAdapter([config]) as mcp_adapter:
        yield mcp_adapter


def test_it_is_a_tool_adapter(adapter: MCPAdapter) -> None:
    adapters = ToolAdapterRegistry([adapter])

    assert isinstance(adapter, ToolAdapter)
    assert adapters.get_adapter("mcp") is adapter


def test_execute_calls_the_named_server_tool(adapter: MCPAdapter) -> None:
    result = adapter.execute("test-server", "add", {"a": 1, "b": 2})

    assert result.ok, result
    assert result.data == {"total": 3}


def test_execute_failures_are_envelopes(adapter: MCPAdapter) -> None:
    no_action = adapter.execute("test-server", None, {})
    bad_action = adapter.execute("test-server", "launch", {})
    bad_server = adapter.execute("nowhere", "add", {})
    bad_args = adapter.execute("test-server", "add", {"a": "one"})
    slow = adapter.execute("test-server", "hang", {}, timeout=0.3)

    assert no_action.error is not None
    assert no_action.error.type == "unknown_action"
    assert "echo" in no_action.error.message
    assert bad_action.error is not None
    assert bad_action.error.type == "unknown_action"
    assert bad_server.error is not None
    assert bad_server.error.type == "unknown_tool"
    assert bad_args.error is not None
    assert bad_args.error.type == "validation_error"
    assert slow.error is not None
    assert slow.error.type == "timeout"
