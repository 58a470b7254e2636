"""MCPToolset against a real SDK-built server (tests/.../servers/sdk_server.py) over stdio."""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

import mcp_types

from tools import LocalToolRegistry, ToolError
from tools.external.mcp import MCPProgress, MCPTool, MCPToolset
from tools.external.mcp._results import result_data

pytestmark = pytest.mark.mcp


@pytest.fixture(scope="module")
def progress_events() -> list[MCPProgress]:
    return []


@pytest.fixture(scope="module")
def sdk(sdk_server_cmd: list[str], progress_events: list[MCPProgress]) -> Iterator[MCPToolset]:
    """One persistent toolset shared by the read-only tests of this module."""
    with MCPToolset(
        sdk_server_cmd,
        progress_callback=progress_events.append,
        server_log_level="debug",
        call_timeout=20,
    ) as toolset:
        yield toolset


def _data(result: Any) -> Any:
    assert result.ok, result
    return result.data


def test_lists_server_tools_with_their_schemas(sdk: MCPToolset) -> None:
    tools = {tool.remote_name: tool for tool in sdk.tools()}

    assert {"echo", "add", "fail", "hang", "progress", "pid", "weird.name/with spaces"} <= set(tools)
    echo = tools["echo"]
    assert isinstance(echo, MCPTool)
    assert echo.name == "echo"
    assert echo.description == "Return the text unchanged."
    assert echo.version == "9.9.9"  # the server's announced version
    assert echo.input_schema() == {
        "type": "object",
        "properties": {"text": {"title": "Text", "type": "string"}},
        "required": ["text"],
        "title": "echoArguments",
    }
    assert tools["add"].output_schema() == {
        "type": "object",
        "properties": {"total": {"description": "The sum", "title": "Total", "type": "integer"}},
        "required": ["total"],
        "title": "Sum",
    }
    assert tools["weird.name/with spaces"].name == "weird_name_with_spaces"


def test_text_and_structured_results(sdk: MCPToolset) -> None:
    assert _data(sdk.call("echo", {"text": "héllo"})) == {"result": "héllo"}
    assert _data(sdk.call("add", {"a": 2, "b": 40})) == {"total": 42}


def test_images_are_summarised_not_inlined(sdk: MCPToolset) -> None:
    assert _data(sdk.call("picture")) == "[image: image/png, 32 bytes]"
    assert _data(sdk.call("mixed")) == "first line\n[image: image/png, 30 bytes]"


def test_is_error_result_becomes_execution_error_with_server_text(sdk: MCPToolset) -> None:
    result = sdk.call("fail", {"reason": "the disk is full"})

    assert result.to_dict() | {"_metadata": None} == {
        "status": "error",
        "error": "Error executing tool fail: the disk is full",
        "error_type": "execution_error",
        "retryable": False,
        "_metadata": None,
    }


def test_bad_arguments_are_caught_before_sending(sdk: MCPToolset) -> None:
    result = sdk.call("add", {"a": "two", "b": 2})

    assert result.error is not None
    assert result.error.type == "validation_error"
    assert "a" in result.error.message
    assert "integer" in result.error.message


def test_unknown_tool_lists_the_available_ones(sdk: MCPToolset) -> None:
    result = sdk.call("nope", {})

    assert result.error is not None
    assert result.error.type == "unknown_tool"
    assert "echo" in result.error.message


def test_a_tool_the_server_no_longer_has_is_an_error_envelope(sdk: MCPToolset) -> None:
    # MCPServer answers unknown tools with an isError result (mcp-server-time, built on the
    # low-level server, answers with a JSON-RPC -32602 error: see the reference tests).
    gone = MCPTool(
        caller=sdk,
        remote=mcp_types.Tool(name="gone", input_schema={"type": "object"}),
        name="gone",
        call_timeout=10,
    )
    result = gone.execute()

    assert result.error is not None
    assert result.error.type == "execution_error"
    assert result.error.message == "Unknown tool: gone"


def test_server_side_argument_errors_reach_the_model(sdk: MCPToolset) -> None:
    raw = sdk.call_remote("add", {"a": "x"}, timeout=10)
    with pytest.raises(ToolError) as caught:
        result_data(raw, tool="add")
    assert "validation error" in caught.value.message.lower()


def test_progress_and_server_logs_are_surfaced(
    sdk: MCPToolset, progress_events: list[MCPProgress], caplog: pytest.LogCaptureFixture
) -> None:
    progress_events.clear()
    with caplog.at_level(logging.DEBUG, logger="tools.external.mcp"):
        assert _data(sdk.call("progress", {"steps": 3})) == {"result": "did 3 steps"}

    assert progress_events == [
        MCPProgress("progress", 1.0, 3.0, "step 1"),
        MCPProgress("progress", 2.0, 3.0, "step 2"),
        MCPProgress("progress", 3.0, 3.0, "step 3"),
    ]
    server_logs = [(r.levelno, r.getMessage()) for r in caplog.records if r.name.endswith("_connect")]
    assert (logging.INFO, "MCP server sdk_server.py: starting") in server_logs
    assert (logging.WARNING, "MCP server sdk_server.py: almost done") in server_logs
    assert (logging.DEBUG, "MCP server sdk_server.py: debug detail") in server_logs


def test_concurrent_calls_from_threads_share_one_session(sdk: MCPToolset) -> None:
    echo = sdk.tool("echo")
    first_pid = _data(sdk.call("pid"))["result"]
    texts = [f"message {i}" for i in range(64)]

    with ThreadPoolExecutor(max_workers=16) as pool:
        results = list(pool.map(lambda text: echo.execute(text=text), texts))

    assert [_data(result)["result"] for result in results] == texts
    assert _data(sdk.call("pid"))["result"] == first_pid == sdk.server_pid


def test_timeout_gives_a_timeout_envelope_and_the_session_survives(sdk: MCPToolset) -> None:
    result = sdk.call("hang", {}, timeout=0.5)

    assert result.error is not None
    assert result.error.type == "timeout"
    assert result.error.retryable
    assert _data(sdk.call("echo", {"text": "still here"})) == {"result": "still here"}


def test_tools_register_and_export_like_any_other(sdk: MCPToolset) -> None:
    registry = LocalToolRegistry()
    for tool in sdk.tools():
        registry.register(tool)

    assert registry.call_tool("add", a=1, b=1).data == {"total": 2}
    exported = {t["function"]["name"]: t for t in registry.to_openai_tools(strict=True)}
    assert exported["echo"]["function"]["parameters"]["required"] == ["text"]
    assert exported["echo"]["function"]["strict"] is True


def test_a_crash_is_an_upstream_error_and_the_next_call_restarts(
    gone: Callable[[int], bool], sdk_server_cmd: list[str]
) -> None:
    with MCPToolset(sdk_server_cmd, call_timeout=20) as toolset:
        old_pid = _data(toolset.call("pid"))["result"]

        crashed = toolset.call("crash")
        assert crashed.error is not None
        assert crashed.error.type == "upstream_error"
        assert crashed.error.retryable
        assert "closed the connection" in crashed.error.message
        assert gone(old_pid)

        new_pid = _data(toolset.call("pid"))["result"]
        assert new_pid != old_pid
        # A server stuck in a blocking call: the call times out, close() still kills it.
        blocked = toolset.call("block", {"seconds": 600}, timeout=0.5)
        assert blocked.error is not None
        assert blocked.error.type == "timeout"
    assert gone(new_pid)


def test_spawn_per_call_uses_a_fresh_server_each_time(gone: Callable[[int], bool], sdk_server_cmd: list[str]) -> None:
    with MCPToolset(sdk_server_cmd, persistent=False, prefix="t", call_timeout=20) as toolset:
        assert not toolset.persistent
        names = [tool.name for tool in toolset.tools()]
        listing_pid = toolset.server_pid
        call_pid = _data(toolset.call("t_pid"))["result"]

    assert names
    assert all(name.startswith("t_") for name in names)
    assert "t_weird_name_with_spaces" in names
    assert listing_pid is not None
    assert call_pid != listing_pid
    assert gone(listing_pid)
    assert gone(call_pid)


def test_close_kills_the_server_and_its_children_and_later_calls_fail(
    gone: Callable[[int], bool],
    sdk_server_cmd: list[str],
) -> None:
    before = set(threading.enumerate())
    toolset = MCPToolset(sdk_server_cmd, call_timeout=20)
    echo = toolset.tool("echo")
    server_pid = _data(toolset.call("pid"))["result"]
    grandchild = _data(toolset.call("spawn_child"))["result"]

    toolset.close()
    toolset.close()  # idempotent

    assert gone(server_pid)
    assert gone(grandchild)
    late = echo.execute(text="late")
    assert late.error is not None
    assert "closed" in late.error.message
    assert not [t for t in set(threading.enumerate()) - before if t.name.startswith("tooldeck")]


@pytest.mark.parametrize(
    ("script", "expected_type", "expected_text"),
    [
        ("garbage_server.py", "timeout", "did not answer"),
        ("exit_server.py", "upstream_error", "closed the connection"),
        ("stubborn_server.py", "timeout", "did not answer"),
    ],
)
def test_broken_servers_give_error_envelopes_and_leave_no_process(
    servers_dir: Path,
    gone: Callable[[int], bool],
    script: str,
    expected_type: str,
    expected_text: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    toolset = MCPToolset([sys.executable, str(servers_dir / script)], connect_timeout=1.0, call_timeout=3.0)
    tool = MCPTool(
        caller=toolset,
        remote=mcp_types.Tool(name="anything", input_schema={"type": "object"}),
        name="anything",
        call_timeout=3.0,
    )
    with caplog.at_level(logging.WARNING, logger="tools.external.mcp"):
        result = tool.execute()
        pid = toolset.server_pid
        toolset.close()

    assert result.error is not None
    assert result.error.type == expected_type
    assert expected_text in result.error.message
    assert pid is not None
    assert gone(pid)
    if script == "garbage_server.py":
        assert any("malformed message" in r.getMessage() for r in caplog.records)


def test_a_missing_command_is_an_upstream_error(tmp_path: Any) -> None:
    with MCPToolset([str(tmp_path / "no-such-server")], call_timeout=5) as toolset:
        with pytest.raises(ToolError) as caught:
            toolset.tools()
    assert caught.value.error_type == "upstream_error"
    assert "could not be started" in caught.value.message
