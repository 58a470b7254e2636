"""Our registry served over MCP, called by the SDK's own ClientSession and by MCPToolset."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from tools.external.mcp import MCPToolset

pytestmark = pytest.mark.mcp


def _server_argv(*extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "tools.external.mcp",
        "--registry",
        "registry_factory:build",
        *extra,
    ]


async def _sdk_session_run(env: dict[str, str], servers_dir: Path) -> dict[str, Any]:
    """Drive our server with the SDK's ClientSession; return what it saw."""
    params = StdioServerParameters(
        command=sys.executable,
        args=_server_argv()[1:],
        env=env,
        cwd=servers_dir,
    )
    seen: dict[str, Any] = {}
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        init = await session.initialize()
        seen["server"] = init.server_info.name
        listed = await session.list_tools()
        seen["tools"] = {tool.name: tool for tool in listed.tools}
        seen["forecast"] = await session.call_tool("forecast", {"city": "Lisbon", "days": 2})
        seen["atlantis"] = await session.call_tool("forecast", {"city": "Atlantis"})
        seen["bad_days"] = await session.call_tool("forecast", {"city": "Oslo", "days": 99})
        seen["add"] = await session.call_tool("add", {"a": 2, "b": 3})
        seen["shout"] = await session.call_tool("shout", {"text": "hi"})
        seen["broken"] = await session.call_tool("broken", {})
        seen["unknown"] = await session.call_tool("nope", {"x": 1})
        seen["no_args"] = await session.call_tool("add", None)
    return seen


@pytest.fixture(scope="module")
def sdk_view(servers_dir: Path, mcp_env: dict[str, str]) -> dict[str, Any]:
    return anyio.run(_sdk_session_run, mcp_env, servers_dir)


def _text(result: Any) -> str:
    return "\n".join(block.text for block in result.content)


def test_sdk_client_lists_every_tool_with_schemas(sdk_view: dict[str, Any], servers_dir: Path) -> None:
    spec = importlib.util.spec_from_file_location("registry_factory", servers_dir / "registry_factory.py")
    assert spec is not None
    assert spec.loader is not None
    factory = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(factory)
    expected = {entry["name"]: entry for entry in factory.build().to_mcp_tools()}

    tools = sdk_view["tools"]
    assert sdk_view["server"] == "tooldeck"
    assert set(tools) == {"forecast", "broken", "add", "shout"}
    for name, tool in tools.items():
        assert tool.input_schema == expected[name]["inputSchema"]
        assert tool.description == expected[name]["description"]
    assert tools["forecast"].output_schema == expected["forecast"]["outputSchema"]
    assert tools["add"].description == "Add two integers."


def test_sdk_client_success_has_json_text_and_structured_content(sdk_view: dict[str, Any]) -> None:
    forecast = sdk_view["forecast"]

    assert forecast.is_error is False
    assert json.loads(_text(forecast)) == {"city": "Lisbon", "days": 2, "summary": "sunny"}
    assert forecast.structured_content == {"city": "Lisbon", "days": 2, "summary": "sunny"}
    assert _text(sdk_view["add"]) == "5"
    assert _text(sdk_view["shout"]) == "HI"  # the tool's print() did not corrupt the stream


def test_sdk_client_errors_are_is_error_results_with_model_messages(
    sdk_view: dict[str, Any],
) -> None:
    atlantis = sdk_view["atlantis"]
    bad_days = sdk_view["bad_days"]
    broken = sdk_view["broken"]
    unknown = sdk_view["unknown"]

    assert atlantis.is_error is True
    assert _text(atlantis) == "No forecast for 'Atlantis': it is not a real city; pick another."
    assert bad_days.is_error is True
    assert "days" in _text(bad_days)
    assert broken.is_error is True
    assert "internal error" in _text(broken)
    assert "hunter2" not in _text(broken)
    assert unknown.is_error is True
    assert "nope" in _text(unknown)
    assert "forecast" in _text(unknown)
    assert sdk_view["no_args"].is_error is True


def test_our_toolset_talks_to_our_server(
    servers_dir: Path, mcp_env: dict[str, str], gone: Callable[[int], bool]
) -> None:
    with MCPToolset(_server_argv(), env=mcp_env, cwd=servers_dir, prefix="td") as toolset:
        names = sorted(tool.name for tool in toolset.tools())
        ok = toolset.call("td_forecast", {"city": "Porto"})
        invalid = toolset.call("td_forecast", {"days": 3})
        pid = toolset.server_pid

    assert names == ["td_add", "td_broken", "td_forecast", "td_shout"]
    assert ok.data == {"city": "Porto", "days": 1, "summary": "sunny"}
    assert invalid.error is not None
    assert invalid.error.type == "validation_error"
    assert pid is not None
    assert gone(pid)


def test_streamable_http_both_ways(start_http_server: Callable[[list[str]], str]) -> None:
    url = start_http_server(_server_argv("--transport", "http"))

    with MCPToolset(url=url, call_timeout=30) as toolset:
        names = {tool.name for tool in toolset.tools()}
        result = toolset.call("add", {"a": 20, "b": 22})
        failure = toolset.call("forecast", {"city": "Atlantis"})

    assert names == {"forecast", "broken", "add", "shout"}
    assert result.data == "42"  # no output schema: the text block, as the server sent it
    assert failure.error is not None
    assert failure.error.type == "execution_error"
    assert "Atlantis" in failure.error.message


def test_cli_rejects_a_bad_registry_spec(servers_dir: Path, mcp_env: dict[str, str]) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "tools.external.mcp", "--registry", "registry_factory:not_a_registry"],
        cwd=servers_dir,
        env={"PATH": "/usr/bin:/bin", **mcp_env},
        capture_output=True,
        timeout=60,
        check=False,
    )

    assert run.returncode == 1
    assert b"not a tool registry" in run.stderr
    assert run.stdout == b""
