"""Tool search: BM25 ranking, the search-mode view, loading found tools, bad queries."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable

import pytest

pytest.importorskip("bm25s")

from tools import LocalToolRegistry
from tools.routing import (
    RoutingConfigError,
    ToolCategory,
    ToolIndex,
    ToolManual,
    ToolSearchTool,
)

EXTRA_TOOLS = {
    "github_create_issue": ("Create a new issue in a GitHub repository with a title and body.", "planning"),
    "github_list_pull_requests": ("List the open pull requests of a GitHub repository.", "search"),
    "slack_post_message": ("Post a message to a Slack channel.", "web"),
    "jira_transition_ticket": ("Move a Jira ticket to another status, e.g. 'In Progress'.", "planning"),
    "postgres_run_sql": ("Run a read-only SQL query against the Postgres database.", "search"),
    "s3_upload_object": ("Upload a file to an Amazon S3 bucket.", "file-write"),
    "calendar_find_free_slot": ("Find a free meeting slot in the team calendar.", "search"),
    "weather_forecast": ("The weather forecast for a city for the next days.", "web"),
}


@pytest.fixture
def registry(coding_registry: LocalToolRegistry) -> LocalToolRegistry:
    for name, (description, category) in EXTRA_TOOLS.items():
        coding_registry.register(
            _echo(name),
            name=name,
            description=description,
            manual=ToolManual(name=name, category=ToolCategory(category)),
        )
    return coding_registry


def _echo(name: str) -> Callable[..., str]:
    def run(query: str = "") -> str:
        return name

    return run


@pytest.mark.parametrize(
    ("query", "best"),
    [
        ("open an issue on github", "github_create_issue"),
        ("send a slack message to the team channel", "slack_post_message"),
        ("sql query on the database", "postgres_run_sql"),
        ("upload file to s3 bucket", "s3_upload_object"),
        ("searching file contents with a regular expression", "grep"),
        ("what will the weather be tomorrow in Lisbon", "weather_forecast"),
        ("apply a unified diff", "patch"),
    ],
)
def test_index_finds_the_tool(registry: LocalToolRegistry, query: str, best: str) -> None:
    index = ToolIndex([(m, registry.get_tool(m.name).description) for m in registry.manuals()])  # type: ignore[union-attr]
    hits = index.search(query, 3)
    assert hits[0][0] == best
    assert [score for _, score in hits] == sorted((score for _, score in hits), reverse=True)


def test_index_edge_cases(registry: LocalToolRegistry) -> None:
    index = ToolIndex([(m, "") for m in registry.manuals()])
    assert index.search("zzzz qqqq", 5) == []
    assert index.search("the and of", 5) == []  # stop words only
    assert index.search("", 5) == []
    assert index.search("issue", 0) == []
    assert len(index.search("github", 100)) == 2
    assert ToolIndex([]).search("anything", 5) == []
    assert len(index.search("issue " * 10_000, 5)) >= 1


def test_search_mode_exports_pinned_tools_and_tool_search(registry: LocalToolRegistry) -> None:
    view = registry.for_agent("main").with_tool_search(["read"])
    assert view.searchable
    assert [t["function"]["name"] for t in view.to_openai_tools()] == ["read", "tool_search"]
    assert [t["name"] for t in view.to_anthropic_tools()] == ["read", "tool_search"]
    assert [t["name"] for t in view.to_mcp_tools()] == ["read", "tool_search"]
    strict = view.to_openai_tools(strict=True)[-1]["function"]
    assert strict["strict"] is True
    assert strict["parameters"]["required"] == ["query", "limit"]
    assert view.names() == registry.names()  # every tool of the agent stays callable


def test_found_tools_are_loaded_and_callable(registry: LocalToolRegistry) -> None:
    view = registry.for_agent("main").with_tool_search(["read"])
    result = view.call_tool_raw("tool_search", '{"query": "create a github issue", "limit": 2}')
    assert result.status == "success"
    data = result.data
    assert data["matches"][0] == {
        "name": "github_create_issue",
        "description": "Create a new issue in a GitHub repository with a title and body.",
        "category": "planning",
        "parameters": registry.to_openai_tools(names=["github_create_issue"])[0]["function"]["parameters"],
    }
    assert data["note"] == "These tools are loaded: call them by name."
    found = [m["name"] for m in data["matches"]]
    assert view.loaded() == found
    exported = [t["function"]["name"] for t in view.to_openai_tools()]
    assert exported == [n for n in registry.names() if n in {"read", *found}] + ["tool_search"]
    assert view.call_tool("github_create_issue", query="x").data == "github_create_issue"
    json.dumps(data)


def test_calling_an_unloaded_tool_of_the_agent_loads_it(registry: LocalToolRegistry) -> None:
    view = registry.for_agent("main").with_tool_search()
    assert [t["function"]["name"] for t in view.to_openai_tools()] == ["tool_search"]
    assert asyncio.run(view.acall_tool("weather_forecast", query="Lisbon")).status == "success"
    assert view.loaded() == ["weather_forecast"]
    assert [t["function"]["name"] for t in view.to_openai_tools()] == ["weather_forecast", "tool_search"]


def test_search_only_finds_the_agents_own_tools(registry: LocalToolRegistry, calls: list[str]) -> None:
    view = registry.for_agent("reviewer").with_tool_search(["read"])
    data = view.call_tool("tool_search", query="edit write replace text in a file").data
    names = [m["name"] for m in data["matches"]]
    assert "edit" not in names
    assert "write" not in names
    assert set(names) <= set(view.names())
    denied = view.call_tool("edit", path="x")
    assert denied.error is not None
    assert denied.error.type == "permission_denied"
    assert denied.error.message.endswith("Use tool_search to find more of them.")
    assert "edit" not in view.loaded()
    assert calls == []


def test_no_match_says_what_to_do(registry: LocalToolRegistry) -> None:
    view = registry.for_agent("main").with_tool_search()
    data = view.call_tool("tool_search", query="zzzz").data
    assert data == {
        "query": "zzzz",
        "matches": [],
        "note": "No tool matches; try other words (what you want to do, e.g. 'read a file').",
    }


@pytest.mark.parametrize(
    "arguments", ['{"query": ""}', '{"query": "' + "x" * 501 + '"}', "{}", '{"query": "a", "limit": 99}', "nope"]
)
def test_bad_search_arguments_are_validation_errors(registry: LocalToolRegistry, arguments: str) -> None:
    view = registry.for_agent("main").with_tool_search()
    result = view.call_tool_raw("tool_search", arguments)
    assert result.error is not None
    assert result.error.type == "validation_error"
    assert view.loaded() == []


def test_search_tool_lookup(registry: LocalToolRegistry) -> None:
    view = registry.for_agent("main").with_tool_search()
    assert isinstance(view.get_tool("tool_search"), ToolSearchTool)
    bound = view.get("tool_search")
    assert bound is not None
    assert bound(query="slack")["data"]["matches"][0]["name"] == "slack_post_message"
    assert registry.for_agent("main").get_tool("tool_search") is None
    assert registry.for_agent("main").call_tool("tool_search", query="x").error is not None


def test_pinning_a_tool_the_agent_may_not_use_is_an_error(registry: LocalToolRegistry) -> None:
    with pytest.raises(RoutingConfigError, match=r"pinned tools 'edit' are not tools of the reviewer agent"):
        registry.for_agent("reviewer").with_tool_search(["read", "edit"])
    with pytest.raises(RoutingConfigError, match="search_limit must be between 1 and 20"):
        registry.for_agent("reviewer").with_tool_search(search_limit=0)


def test_a_registered_tool_named_tool_search_is_an_error(registry: LocalToolRegistry) -> None:
    def tool_search(q: str) -> str:
        """Mine."""
        return q

    registry.register(tool_search)
    with pytest.raises(RoutingConfigError, match="rename that tool"):
        registry.for_agent("main").with_tool_search()


def test_index_is_rebuilt_when_the_registry_changes(registry: LocalToolRegistry) -> None:
    view = registry.for_agent("main").with_tool_search()
    assert view.call_tool("tool_search", query="kubernetes pods").data["matches"] == []

    def list_pods(namespace: str = "default") -> list[str]:
        """List the Kubernetes pods of a namespace."""
        return [namespace]

    registry.register(list_pods)
    assert view.call_tool("tool_search", query="kubernetes pods").data["matches"][0]["name"] == "list_pods"
