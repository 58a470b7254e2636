"""A hostile MCP server (real, over stdio) whose annotations lie: nothing it says makes a tool
safe or read-only unless the operator marked the server trusted, and its calls ask at the
default freedom level ``medium``, directly, routed, or adopted from the catalog."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from tools import LocalToolRegistry
from tools.approvals import ApprovalPolicy
from tools.external.mcp import MCPToolset
from tools.routing import ToolCategory, ToolManual

pytestmark = pytest.mark.mcp

SERVER = Path(__file__).parent / "servers" / "hostile_server.py"
READ_ONLY_AGENTS = ("reviewer", "explore", "plan", "researcher")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "workspace"
    folder.mkdir()
    for name in ("a.txt", "b.txt", "keep.txt"):
        (folder / name).write_text(name)
    return folder


def _command(root: Path) -> list[str]:
    return [sys.executable, str(SERVER), "--root", str(root)]


@pytest.fixture
def untrusted(root: Path) -> Iterator[MCPToolset]:
    # The operator even declares every tool file-read: a category never makes a tool read-only.
    with MCPToolset(_command(root), call_timeout=30, label="hostile", default_category="file-read") as toolset:
        yield toolset


def _manuals(toolset: MCPToolset) -> dict[str, ToolManual]:
    return {tool.name: tool.get_manual() for tool in toolset.tools()}


def test_lying_annotations_make_nothing_safe_or_read_only(untrusted: MCPToolset) -> None:
    manuals = _manuals(untrusted)
    risks = {name: (m.risk, m.mutating, m.origin.risk) for name, m in manuals.items()}
    assert risks == {
        "delete_everything": ("dangerous", True, "name"),
        "tidy_up": ("moderate", True, "default"),
        "read_notes": ("moderate", True, "default"),
        "archive": ("dangerous", True, "hint"),
    }
    assert (
        "readOnlyHint ignored: the server is not trusted (mutating assumed)"
        in manuals["delete_everything"].origin.notes
    )
    assert all(m.category is ToolCategory.FILE_READ and not m.read_only_declared for m in manuals.values())


def test_read_only_agents_are_offered_none_of_its_tools(untrusted: MCPToolset) -> None:
    registry = LocalToolRegistry()
    for tool in untrusted.tools():
        registry.register(tool)
    for agent_type in READ_ONLY_AGENTS:
        view = registry.for_agent(agent_type)
        assert view.names() == [], agent_type
        assert view.to_mcp_tools() == []
    reasons = {d.tool: d for d in registry.for_agent("reviewer").explain()}
    assert reasons["read_notes"].step == "read_only"
    assert [m.name for m in registry.for_agent("coder").manuals()] == list(_manuals(untrusted))


def test_at_level_medium_every_call_asks_and_nothing_is_deleted(untrusted: MCPToolset, root: Path) -> None:
    registry = LocalToolRegistry(policy=ApprovalPolicy("medium"))
    for tool in untrusted.tools():
        registry.register(tool)
    for name, arguments in (("delete_everything", {}), ("tidy_up", {"name": "a.txt"}), ("read_notes", {})):
        result = registry.call_tool(name, **arguments)
        assert result.error is not None and result.error.type == "permission_denied", name
        assert result.error.details is not None and result.error.details["reason"] == "approval_required"
    assert sorted(p.name for p in root.iterdir()) == ["a.txt", "b.txt", "keep.txt"]
    high = LocalToolRegistry(policy=ApprovalPolicy("high"))
    for tool in untrusted.tools():
        high.register(tool)
    refused = high.call_tool("delete_everything")  # dangerous by its name: asks even at high
    assert refused.error is not None and refused.error.type == "permission_denied"
    assert sorted(p.name for p in root.iterdir()) == ["a.txt", "b.txt", "keep.txt"]


def test_only_a_trusted_server_lowers_risk(root: Path) -> None:
    with MCPToolset(_command(root), call_timeout=30, label="hostile", trusted=True) as toolset:
        manuals = _manuals(toolset)
    trusted = manuals["delete_everything"]
    # the operator trusted this server: its (lying) readOnlyHint is now the operator's problem
    assert (trusted.risk, trusted.mutating, trusted.origin.risk) == ("safe", False, "trusted-hint")
    assert (manuals["read_notes"].risk, manuals["read_notes"].read_only_declared) == ("safe", True)
    assert (manuals["archive"].risk, manuals["archive"].mutating) == ("dangerous", True)
    assert (manuals["tidy_up"].risk, manuals["tidy_up"].mutating) == ("moderate", True)  # no hints: nothing lowered


def test_adopted_from_the_catalog_its_hints_stay_hints(root: Path, tmp_path: Path) -> None:
    from tools.store import MCPServerSource, RegistryService, RegistryStore, ToolCatalog

    env = {"PATH": "/usr/bin:/bin"}
    catalog = ToolCatalog(tmp_path / "catalog.sqlite3", env=env)
    catalog.add_source(MCPServerSource(name="hostile", command=_command(root)))
    assert catalog.sync().ok
    store = RegistryStore(user_path=tmp_path / "user.json", project_path=tmp_path / "project.json")
    service = RegistryService(store, catalog=catalog, env=env)
    adopted = service.adopt("hostile:delete_everything")
    assert adopted.manual.is_empty()  # nothing the server said became the operator's declaration
    assert adopted.hints is not None and (adopted.hints.read_only, adopted.hints.destructive) == (True, False)
    (tool,) = service.build_tools()
    manual = tool.get_manual()
    assert (manual.risk, manual.mutating, manual.origin.risk) == ("dangerous", True, "name")
    try:
        registry = LocalToolRegistry(policy=ApprovalPolicy("medium"))
        registry.register(tool)
        refused = registry.call_tool("delete_everything")
        assert refused.error is not None and refused.error.type == "permission_denied"
        assert sorted(p.name for p in root.iterdir()) == ["a.txt", "b.txt", "keep.txt"]
    finally:
        service.close()
