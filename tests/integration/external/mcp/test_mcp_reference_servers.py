"""MCPToolset against the reference servers mcp-server-time and mcp-server-git (test extra)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("mcp")
pytest.importorskip("mcp_server_time")
pytest.importorskip("mcp_server_git")

import mcp_types

from tools import LocalToolRegistry
from tools.external.mcp import MCPTool, MCPToolset

pytestmark = pytest.mark.mcp


@pytest.fixture(scope="module")
def time_server() -> Iterator[MCPToolset]:
    command = [sys.executable, "-m", "mcp_server_time", "--local-timezone", "UTC"]
    with MCPToolset(command, prefix="time", call_timeout=30) as toolset:
        yield toolset


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("repo")
    env = {
        "GIT_AUTHOR_NAME": "T",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "T",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
        "HOME": str(path),
        "PATH": "/usr/bin:/bin",
    }
    for argv in (
        ["git", "init", "-q", "-b", "main"],
        ["git", "add", "README.md"],
        ["git", "commit", "-q", "-m", "first commit"],
    ):
        if argv[1] == "add":
            (path / "README.md").write_text("hello\n")
        subprocess.run(argv, cwd=path, env=env, check=True, timeout=30)
    (path / "README.md").write_text("hello, changed\n")
    return path


@pytest.fixture(scope="module")
def git_server(repo: Path) -> Iterator[MCPToolset]:
    command = [sys.executable, "-m", "mcp_server_git", "--repository", str(repo)]
    with MCPToolset(command, call_timeout=30) as toolset:
        yield toolset


def test_time_server_tools_are_listed_with_their_schemas(time_server: MCPToolset) -> None:
    tools = {tool.name: tool for tool in time_server.tools()}

    assert set(tools) == {"time_get_current_time", "time_convert_time"}
    current = tools["time_get_current_time"]
    assert current.remote_name == "get_current_time"
    assert current.input_schema()["required"] == ["timezone"]
    assert current.output_schema() is not None


def test_time_server_call_returns_structured_data(time_server: MCPToolset) -> None:
    result = time_server.call("time_get_current_time", {"timezone": "Europe/Lisbon"})

    assert result.ok, result
    assert result.data["timezone"] == "Europe/Lisbon"
    assert set(result.data) == {"timezone", "datetime", "day_of_week", "is_dst"}


def test_time_server_through_a_registry(time_server: MCPToolset) -> None:
    registry = LocalToolRegistry()
    for tool in time_server.tools():
        registry.register(tool)

    out = registry("time_convert_time", source_timezone="UTC", time="12:00", target_timezone="Asia/Tokyo")

    assert out["status"] == "success"
    assert out["data"]["target"]["timezone"] == "Asia/Tokyo"
    assert out["data"]["target"]["datetime"][11:16] == "21:00"
    assert out["data"]["time_difference"] == "+9.0h"


def test_time_server_bad_arguments(time_server: MCPToolset) -> None:
    missing = time_server.call("time_get_current_time", {})
    wrong_type = time_server.call("time_get_current_time", {"timezone": 5})
    bad_value = time_server.call("time_get_current_time", {"timezone": "Mars/Olympus"})

    assert missing.error is not None
    assert missing.error.type == "validation_error"
    assert "timezone" in missing.error.message
    assert wrong_type.error is not None
    assert wrong_type.error.type == "validation_error"
    assert bad_value.error is not None
    assert bad_value.error.type == "execution_error"
    assert "Invalid timezone" in bad_value.error.message


def test_time_server_unknown_tool(time_server: MCPToolset) -> None:
    local = time_server.call("get_the_weather", {})
    # Bypassing the listing: the server itself answers with a JSON-RPC -32602 error.
    remote = MCPTool(
        caller=time_server,
        remote=mcp_types.Tool(name="get_the_weather", input_schema={"type": "object"}),
        name="get_the_weather",
        call_timeout=30,
    ).execute()

    assert local.error is not None
    assert local.error.type == "unknown_tool"
    assert "time_get_current_time" in local.error.message
    assert remote.error is not None
    assert remote.error.type == "validation_error"
    assert remote.error.message == "Unknown tool: get_the_weather"


def test_git_server_lists_and_calls_tools(git_server: MCPToolset, repo: Path) -> None:
    names = {tool.name for tool in git_server.tools()}
    status = git_server.call("git_status", {"repo_path": str(repo)})
    log = git_server.call("git_log", {"repo_path": str(repo), "max_count": 1})

    assert {"git_status", "git_log", "git_diff_unstaged", "git_show"} <= names
    assert status.ok, status
    assert "modified:   README.md" in status.data
    assert log.ok, log
    assert "first commit" in str(log.data)


def test_git_server_bad_arguments_and_unknown_tool(git_server: MCPToolset, repo: Path) -> None:
    missing = git_server.call("git_status", {})
    injected = git_server.call("git_diff", {"repo_path": str(repo), "target": "--output=/x"})
    unknown = git_server.call("git_push", {"repo_path": str(repo)})

    assert missing.error is not None
    assert missing.error.type == "validation_error"
    assert "repo_path" in missing.error.message
    assert injected.error is not None
    assert injected.error.type == "execution_error"
    assert "cannot start with '-'" in injected.error.message
    assert unknown.error is not None
    assert unknown.error.type == "unknown_tool"
