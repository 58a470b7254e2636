"""MCP tools placed by category and routed per agent, against the reference servers."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("mcp")
pytest.importorskip("mcp_server_time")
pytest.importorskip("mcp_server_git")

from tools import LocalToolRegistry
from tools.external.mcp import MCPConfigError, MCPToolset
from tools.routing import ToolCategory, ToolManual

pytestmark = pytest.mark.mcp

GIT_ENV = {
    "GIT_AUTHOR_NAME": "T",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "T",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
    "PATH": "/usr/bin:/bin",
}


def git(repo: Path, *argv: str) -> str:
    env = {**GIT_ENV, "HOME": str(repo)}
    done = subprocess.run(["git", *argv], cwd=repo, env=env, check=True, timeout=30, capture_output=True, text=True)
    return done.stdout


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("repo")
    git(path, "init", "-q", "-b", "main")
    (path / "README.md").write_text("hello\n")
    git(path, "add", "README.md")
    git(path, "commit", "-q", "-m", "first commit")
    return path


READ_ONLY = ["git_status", "git_diff_unstaged", "git_diff_staged", "git_diff", "git_log", "git_show", "git_branch"]
#: What the operator of a trusted git server declares: where its tools go.
WRITES = {"git_commit": "file-write", "git_add": "file-write", "git_reset": "file-write"}


def _registry(repo: Path, **options: object) -> Iterator[LocalToolRegistry]:
    command = [sys.executable, "-m", "mcp_server_git", "--repository", str(repo)]
    with MCPToolset(command, call_timeout=30, label="git", **options) as toolset:  # type: ignore[arg-type]
        registry = LocalToolRegistry()
        for tool in toolset.tools():
            registry.register(tool)
        yield registry


@pytest.fixture(scope="module")
def git_registry(repo: Path) -> Iterator[LocalToolRegistry]:
    """The git server as it comes: its annotations are a remote party's hints."""
    yield from _registry(repo)


@pytest.fixture(scope="module")
def trusted_registry(repo: Path) -> Iterator[LocalToolRegistry]:
    """The git server marked trusted, with the operator's categories."""
    yield from _registry(repo, trusted=True, default_category="file-read", categories=WRITES)


def test_an_untrusted_servers_read_only_hints_make_nothing_safe(git_registry: LocalToolRegistry) -> None:
    manuals = {m.name: m for m in git_registry.manuals()}
    status = manuals["git_status"]
    assert (status.source, status.server, status.category, status.mutating, status.risk) == (
        "mcp",
        "git",
        ToolCategory.UNCLASSIFIED,
        True,
        "moderate",
    )
    assert status.origin.notes == ("readOnlyHint ignored: the server is not trusted (mutating assumed)",)
    assert all(m.risk != "safe" and m.mutating for m in manuals.values())
    reset = manuals["git_reset"]
    assert (reset.risk, reset.origin.risk) == ("dangerous", "name")
    assert "the server marks it destructive (destructiveHint)" in reset.origin.notes
    for agent_type in ("reviewer", "explore", "plan", "researcher"):
        assert git_registry.for_agent(agent_type).names() == [], agent_type
    # nobody declared categories: only a name the heuristic knows is placed (create -> file-write)
    assert git_registry.for_agent("coder").names() == ["git_create_branch"]


def test_a_trusted_servers_hints_declare_its_read_only_tools(trusted_registry: LocalToolRegistry, repo: Path) -> None:
    manuals = {m.name: m for m in trusted_registry.manuals()}
    status = manuals["git_status"]
    assert (status.category, status.mutating, status.risk) == (ToolCategory.FILE_READ, False, "safe")
    assert (status.origin.category, status.origin.risk, status.origin.mutating) == (
        "operator",
        "trusted-hint",
        "trusted-hint",
    )
    assert manuals["git_commit"].category is ToolCategory.FILE_WRITE
    assert (manuals["git_commit"].risk, manuals["git_commit"].mutating) == ("moderate", True)
    assert manuals["git_reset"].risk == "dangerous"
    (repo / "README.md").write_text("changed\n")
    git(repo, "add", "README.md")
    reviewer = trusted_registry.for_agent("reviewer")
    assert reviewer.names() == READ_ONLY
    assert "git_commit" not in [t["name"] for t in reviewer.to_mcp_tools()]
    status_call = reviewer.call_tool("git_status", repo_path=str(repo))
    assert status_call.status == "success"
    denied = reviewer.call_tool("git_commit", repo_path=str(repo), message="sneaky")
    assert denied.error is not None
    assert denied.error.type == "permission_denied"
    assert git(repo, "log", "--oneline").count("\n") == 1
    coder = trusted_registry.for_agent("coder")
    assert {"git_commit", "git_add", "git_reset"} <= set(coder.names())
    assert coder.call_tool("git_commit", repo_path=str(repo), message="second").status == "success"
    assert git(repo, "log", "--oneline").count("\n") == 2


def test_toolset_categories_and_server_default() -> None:
    command = [sys.executable, "-m", "mcp_server_time", "--local-timezone", "UTC"]
    with MCPToolset(
        command,
        prefix="time",
        call_timeout=30,
        label="time-server",
        categories={"convert_time": "compute"},
        default_category=ToolCategory.PLANNING,
    ) as toolset:
        manuals = {tool.name: tool.get_manual() for tool in toolset.tools()}
    assert manuals["time_convert_time"] == manuals["time_convert_time"].model_copy(
        update={"category": ToolCategory.COMPUTE, "source": "mcp", "server": "time-server"}
    )
    assert manuals["time_get_current_time"].category is ToolCategory.PLANNING
    assert isinstance(manuals["time_get_current_time"], ToolManual)


def test_unknown_categories_in_toolset_options_fail_at_construction() -> None:
    with pytest.raises(MCPConfigError, match=r"categories\['x'\]: unknown category 'searching'; allowed: file-read"):
        MCPToolset(["python", "-m", "x"], categories={"x": "searching"})
    with pytest.raises(MCPConfigError, match="default_category: unknown category 'misc'"):
        MCPToolset(["python", "-m", "x"], default_category="misc")


def test_categories_naming_tools_the_server_lacks_are_logged(caplog: pytest.LogCaptureFixture) -> None:
    command = [sys.executable, "-m", "mcp_server_time", "--local-timezone", "UTC"]
    with MCPToolset(command, call_timeout=30, label="t", categories={"convert_tme": "compute"}) as toolset:
        with caplog.at_level("WARNING", logger="tools.external.mcp.toolset"):
            toolset.tools()
    assert "MCP server t has no tool 'convert_tme' named in categories" in caplog.text
