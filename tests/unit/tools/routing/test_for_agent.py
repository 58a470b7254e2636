"""registry.for_agent(...): the spec's tables through the view, its export and its calls."""

from __future__ import annotations

import asyncio
import json

import pytest

from tools import InMemoryMetrics, LocalToolRegistry
from tools.routing import (
    CODING_TOOL_MANUALS,
    DEFAULT_AGENT_PROFILES,
    AgentToolOverride,
    ToolCategory,
    ToolManual,
    ToolRouter,
    ToolRoutingConfig,
    ToolView,
)

#: The agent-type table of the routing spec over the fourteen coding tools.
EXPECTED_CODING_TOOLS: dict[str, list[str]] = {
    "main": [m.name for m in CODING_TOOL_MANUALS],
    "plan": ["read", "glob", "grep", "webfetch", "websearch", "task", "skill", "lsp"],
    "explore": ["read", "glob", "grep", "task", "lsp"],
    "debugger": ["read", "glob", "grep", "edit", "bash", "skill", "lsp"],
    "researcher": ["read", "glob", "grep", "webfetch", "websearch", "task", "skill", "lsp"],
    "docs-generator": ["read", "glob", "grep", "edit"],
    "readme-generator": ["read", "glob", "grep", "edit"],
    "coder": ["read", "glob", "grep", "edit", "write", "patch", "bash", "skill"],
    "test-writer": ["read", "glob", "grep", "edit", "write", "bash", "skill"],
    "reviewer": ["read", "glob", "grep", "skill", "lsp"],
}

#: tooldeck's own tools each agent gets besides the coding tools (by category).
EXPECTED_BUILTIN_TOOLS: dict[str, list[str]] = {
    "main": [
        "math_solver",
        "execute_code",
        "web",
        "store_knowledge",
        "search_knowledge",
        "user_context",
        "web_search",
        "load_web_page",
        "get_user_context",
        "get_daily_briefing",
        "get_commute_time",
        "query_finance",
    ],
    "plan": ["web", "web_search", "load_web_page"],
    "explore": [],
    "debugger": ["execute_code"],
    "researcher": ["web", "web_search", "load_web_page"],
    "docs-generator": [],
    "readme-generator": [],
    "coder": ["execute_code"],
    "test-writer": ["execute_code"],
    "reviewer": [],
}


def test_the_ten_default_agent_types() -> None:
    assert list(DEFAULT_AGENT_PROFILES) == list(EXPECTED_CODING_TOOLS)


@pytest.mark.parametrize("agent_type", list(EXPECTED_CODING_TOOLS))
def test_agent_table_through_the_view_and_every_export(coding_registry: LocalToolRegistry, agent_type: str) -> None:
    view = coding_registry.for_agent(agent_type)
    expected = EXPECTED_CODING_TOOLS[agent_type]
    assert isinstance(view, ToolView)
    assert view.names() == expected
    assert list(view) == expected
    assert len(view) == len(expected)
    assert [t["function"]["name"] for t in view.to_openai_tools()] == expected
    assert [t["function"]["name"] for t in view.to_openai_tools(strict=True)] == expected
    assert [t["name"] for t in view.to_anthropic_tools()] == expected
    assert [t["name"] for t in view.to_mcp_tools()] == expected
    # the definitions are the registry's own, whole
    assert view.to_openai_tools() == coding_registry.to_openai_tools(names=expected)


@pytest.mark.parametrize("agent_type", list(EXPECTED_CODING_TOOLS))
def test_builtin_tools_are_routed_by_category(builtin_registry: LocalToolRegistry, agent_type: str) -> None:
    view = builtin_registry.for_agent(agent_type)
    assert view.names() == EXPECTED_CODING_TOOLS[agent_type] + EXPECTED_BUILTIN_TOOLS[agent_type]
    assert [t["function"]["name"] for t in view.to_openai_tools()] == view.names()


@pytest.mark.parametrize("agent_type", [a for a in EXPECTED_CODING_TOOLS if a != "main"])
def test_every_registered_tool_outside_the_agent_is_denied_and_never_runs(
    coding_registry: LocalToolRegistry, calls: list[str], agent_type: str
) -> None:
    view = coding_registry.for_agent(agent_type)
    expected = EXPECTED_CODING_TOOLS[agent_type]
    for name in coding_registry.names():
        if name in expected:
            continue
        result = view.call_tool(name, path="x")
        assert result.status == "error"
        assert result.error is not None
        assert result.error.type == "permission_denied"
        assert result.error.message == (
            f"The {agent_type} agent may not use the tool {name!r}. Tools it can use: {', '.join(expected)}."
        )
        assert result.error.details == {"agent_type": agent_type, "available": expected}
        assert view.get(name) is None
        assert view.get_tool(name) is None
        assert name not in view
    assert calls == []


def test_reviewer_never_gets_edit_on_any_call_path(coding_registry: LocalToolRegistry, calls: list[str]) -> None:
    view = coding_registry.for_agent("reviewer")
    results = [
        view.call_tool("edit", path="a"),
        view.call_tool_raw("edit", '{"path": "a"}'),
        view.call_tool_raw("edit", {"path": "a"}),
        asyncio.run(view.acall_tool("edit", path="a")),
        asyncio.run(view.acall_tool_raw("edit", '{"path": "a"}')),
    ]
    assert {r.error.type for r in results if r.error} == {"permission_denied"}
    assert len(results) == 5
    assert view("edit", path="a")["error_type"] == "permission_denied"
    assert calls == []


def test_allowed_calls_run_on_every_path(coding_registry: LocalToolRegistry, calls: list[str]) -> None:
    view = coding_registry.for_agent("reviewer")
    assert view.call_tool("read", path="a").data == {"tool": "read", "path": "a"}
    assert view.call_tool_raw("grep", '{"path": "b"}').data == {"tool": "grep", "path": "b"}
    assert asyncio.run(view.acall_tool("glob", path="c")).status == "success"
    assert asyncio.run(view.acall_tool_raw("lsp", {"path": "d"})).status == "success"
    assert view("skill")["status"] == "success"
    bound = view.get("read")
    assert bound is not None
    assert bound(path="e")["data"] == {"tool": "read", "path": "e"}
    assert bound.call(path="f").status == "success"
    assert asyncio.run(bound.acall(path="g")).status == "success"
    assert view.get_tool("read") is coding_registry.get_tool("read")
    assert calls == ["read", "grep", "glob", "lsp", "skill", "read", "read", "read"]


def test_bad_arguments_to_an_allowed_tool_are_the_registrys_validation_error(
    coding_registry: LocalToolRegistry,
) -> None:
    view = coding_registry.for_agent("coder")
    result = view.call_tool_raw("read", "{not json")
    assert result.error is not None
    assert result.error.type == "validation_error"


def test_unknown_names_give_the_registrys_unknown_tool_result(coding_registry: LocalToolRegistry) -> None:
    view = coding_registry.for_agent("reviewer")
    result = view.call_tool("no_such_tool")
    assert result.error is not None
    assert result.error.type == "unknown_tool"
    assert result.to_dict()["error"] == coding_registry.call_tool("no_such_tool").to_dict()["error"]
    assert view.get("no_such_tool") is None
    assert "no_such_tool" not in view
    hostile = view.call_tool_raw("x" * 10_000, "{}")
    assert hostile.error is not None
    assert hostile.error.type == "unknown_tool"


def test_denied_calls_are_recorded_but_never_trip_the_breaker(
    coding_registry: LocalToolRegistry, metrics: InMemoryMetrics
) -> None:
    view = coding_registry.for_agent("reviewer")
    for _ in range(20):
        view.call_tool("bash", path="x")
    breaker = coding_registry.breaker("bash")
    assert breaker is not None
    assert breaker.state == "closed"
    stats = metrics.stats("bash")
    assert stats is not None
    assert stats.calls == 20
    assert stats.error_types == {"permission_denied": 20}


def test_view_re_resolves_when_the_registry_changes(coding_registry: LocalToolRegistry) -> None:
    view = coding_registry.for_agent("reviewer")
    assert "find_symbol" not in view

    def find_symbol(symbol: str) -> str:
        """Find where a symbol is defined."""
        return symbol

    coding_registry.register(
        find_symbol, manual=ToolManual(name="find_symbol", category=ToolCategory.NAVIGATION, mutating=False)
    )
    assert view.names()[-1] == "find_symbol"
    assert view.call_tool("find_symbol", symbol="x").data == "x"
    assert view.to_openai_tools()[-1]["function"]["name"] == "find_symbol"
    coding_registry.unregister("read")
    assert "read" not in view
    assert view.call_tool("read").error is not None


def test_a_replaced_tool_is_routed_by_its_new_manual(coding_registry: LocalToolRegistry, calls: list[str]) -> None:
    view = coding_registry.for_agent("reviewer")
    assert "read" in view

    def read(path: str) -> str:
        """Overwrite a file (badly named)."""
        calls.append("evil read")
        return path

    coding_registry.register(read, replace=True, manual=ToolManual(name="read", category=ToolCategory.FILE_WRITE))
    result = view.call_tool("read", path="x")
    assert result.error is not None
    assert result.error.type == "permission_denied"
    assert calls == []


def test_user_overrides_through_the_view(coding_registry: LocalToolRegistry) -> None:
    config = ToolRoutingConfig(
        global_deny=("grep",),
        profiles={
            "coder": AgentToolOverride(
                add_categories=(ToolCategory.WEB,), remove_categories=(ToolCategory.EXECUTION,), deny_tools=("patch",)
            ),
            "reviewer": AgentToolOverride(add_tools=("todoread",), deny_tools=("skill",)),
        },
    )
    router = ToolRouter(config=config)
    coder = coding_registry.for_agent("coder", router=router)
    assert coder.names() == ["read", "glob", "edit", "write", "webfetch", "websearch", "skill"]
    assert [t["function"]["name"] for t in coder.to_openai_tools()] == coder.names()
    reviewer = coding_registry.for_agent("reviewer", router=router)
    assert reviewer.names() == ["read", "glob", "todoread", "lsp"]
    assert reviewer.call_tool("grep").error is not None


def test_unknown_agent_type_gets_every_tool_with_a_warning(
    coding_registry: LocalToolRegistry, caplog: pytest.LogCaptureFixture
) -> None:
    view = coding_registry.for_agent("translator")
    with caplog.at_level("WARNING", logger="tools.routing.router"):
        assert view.names() == coding_registry.names()
    assert "agent type 'translator' has no tool profile" in caplog.text


def test_exports_are_new_lists_of_read_only_definitions(coding_registry: LocalToolRegistry) -> None:
    view = coding_registry.for_agent("reviewer")
    first = view.to_openai_tools()
    with pytest.raises(TypeError, match="read-only"):
        first[0]["function"]["name"] = "mutated"
    first[0] = {"type": "function", "function": {"name": "mutated"}}
    assert view.to_openai_tools()[0]["function"]["name"] == "read"
    json.dumps(view.to_mcp_tools())


def test_manuals_and_explain_on_the_view(coding_registry: LocalToolRegistry) -> None:
    view = coding_registry.for_agent("explore")
    assert [m.name for m in view.manuals()] == EXPECTED_CODING_TOOLS["explore"]
    manual = view.get_manual("task")
    assert manual is not None
    assert manual.category is ToolCategory.DELEGATION
    assert view.get_manual("edit") is None
    decisions = view.explain()
    assert [d.tool for d in decisions] == coding_registry.names()
    assert [d.tool for d in decisions if d.included] == view.names()
    assert view.explain_text().splitlines()[-1] == "explore gets 5 of 14 tools."
    assert repr(view) == "ToolView('explore', 5 tools)"


def test_views_without_a_router_share_the_registrys_router_and_its_index() -> None:
    registry = LocalToolRegistry()

    @registry.tool
    def look(path: str) -> str:
        """Look at a file."""
        return path

    coder, reviewer = registry.for_agent("coder"), registry.for_agent("reviewer")
    assert coder.router is reviewer.router is registry.for_agent("coder").router
    own = ToolRouter()
    assert registry.for_agent("coder", own).router is own
