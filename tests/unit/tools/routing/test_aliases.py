"""Old names (``alias_of``) share every routing decision of their tool: a deny covers every
name of a tool, and an old name is never reachable when its tool is not."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tools import LocalToolRegistry
from tools.builtin.legacy import legacy_tools
from tools.routing import AgentToolOverride, ToolCategory, ToolManual, ToolRouter, ToolRoutingConfig

OLD_WEB = ["web_search", "load_web_page"]


@pytest.fixture
def web_registry() -> Iterator[LocalToolRegistry]:
    from tools.builtin import WebTool

    registry = LocalToolRegistry()
    web = WebTool()
    registry.register(web)
    for alias in legacy_tools(web=web):
        registry.register(alias, hidden=True)
    registry.register(lambda x: x, name="echo", manual=ToolManual(name="echo", category=ToolCategory.WEB))
    yield registry
    registry.close()


def test_the_old_web_names_declare_alias_of(web_registry: LocalToolRegistry) -> None:
    for name in OLD_WEB:
        manual = web_registry.get_manual(name)
        assert manual is not None
        assert (manual.alias_of, manual.category, manual.risk) == ("web", ToolCategory.WEB, "moderate")


def test_a_global_deny_of_the_tool_denies_its_old_names(web_registry: LocalToolRegistry) -> None:
    router = ToolRouter(config=ToolRoutingConfig(global_deny=("web",)))
    view = web_registry.for_agent("main", router)
    assert view.names() == ["echo"]
    refused = view.call_tool("web_search", query="x")
    assert refused.error is not None and refused.error.type == "permission_denied"
    decisions = {d.tool: d for d in view.explain()}
    assert (decisions["web"].included, decisions["web"].aliases) == (False, tuple(OLD_WEB))
    assert decisions["web"].reason.endswith("Its old names web_search, load_web_page follow this decision.")
    for name in OLD_WEB:
        old = decisions[name]
        assert (old.included, old.step, old.alias_of) == (False, "global_deny", "web")
        assert old.reason == (
            "Follows web (it is an old name of it): Excluded: the config's global_deny names it (a deny always wins)."
        )


def test_a_deny_of_an_old_name_denies_the_tool_and_its_other_names(web_registry: LocalToolRegistry) -> None:
    config = ToolRoutingConfig(profiles={"main": AgentToolOverride(deny_tools=("load_web_page",))})
    assert web_registry.for_agent("main", ToolRouter(config=config)).names() == ["echo"]


def test_old_names_follow_their_tools_profile_decision(web_registry: LocalToolRegistry) -> None:
    assert web_registry.for_agent("researcher").names() == ["web", *OLD_WEB]  # web is declared read-only
    assert web_registry.for_agent("coder").names() == []  # coder has no web category
    added = ToolRoutingConfig(profiles={"coder": AgentToolOverride(add_tools=("web_search",))})
    assert web_registry.for_agent("coder", ToolRouter(config=added)).names() == ["web", *OLD_WEB]


def test_old_names_follow_the_operators_manual_of_their_tool(web_registry: LocalToolRegistry) -> None:
    from tools.routing import ManualOverride

    config = ToolRoutingConfig(manuals={"web": ManualOverride(category=ToolCategory.PLANNING)})
    router = ToolRouter(config=config)
    assert web_registry.for_agent("researcher", router).names() == []  # planning: not a researcher category
    assert web_registry.for_agent("plan", router).names() == ["web", *OLD_WEB]


def test_an_old_name_whose_tool_is_not_registered_decides_alone() -> None:
    manuals = [ToolManual(name="old", category=ToolCategory.SEARCH, mutating=False, alias_of="gone")]
    router = ToolRouter()
    assert [m.name for m in router.resolve("reviewer", manuals)] == ["old"]
    (decision,) = router.explain("reviewer", manuals)
    assert decision.alias_of is None


def test_module_old_names_follow_the_module_tools(tmp_path: object) -> None:
    from pathlib import Path

    from tests.unit.tools.builtin.modules.support import make_toolkit, registry_for

    assert isinstance(tmp_path, Path)
    registry = registry_for(make_toolkit(tmp_path))
    assert registry.for_agent("reviewer").names() == []  # list_modules is safe, but module_admin is not routed
    denied = ToolRoutingConfig(global_deny=("module_admin",))
    names = registry.for_agent("main", ToolRouter(config=denied)).names()
    assert "promote_draft" not in names and "list_modules" not in names
    assert "module_pipeline" in names and "install_module" in names
