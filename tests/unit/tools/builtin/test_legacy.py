"""The old tool names: old schemas exported, old arguments mapped onto the new tools."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from tools import LocalToolRegistry, ToolDefinitionError
from tools.builtin import (
    CodeExecutorTool,
    ContextBridge,
    KnowledgeSearchTool,
    KnowledgeStoreTool,
    LegacyQueryFinance,
    LegacyWebSearch,
    MathSolverTool,
    SearchHit,
    SqliteKnowledgeStore,
    UserContextTool,
    WebTool,
    legacy_tools,
)

REQUIRED: Any = object()

#: The 10 non-module tools of the seed's "Exact Current Function Signatures" (the 17 module
#: and draft tools are a later issue): parameter -> (JSON type, default or REQUIRED).
OLD_SIGNATURES: dict[str, dict[str, tuple[str, Any]]] = {
    "web_search": {"query": ("string", REQUIRED), "num_results": ("integer", 5)},
    "math_solver": {"expression": ("string", REQUIRED), "show_steps": ("boolean", True)},
    "load_web_page": {"url": ("string", REQUIRED), "extract_links": ("boolean", False), "max_chars": ("integer", 8000)},
    "get_user_context": {
        "categories": ("array", None),
        "include_alerts": ("boolean", True),
        "destination": ("string", None),
    },
    "get_daily_briefing": {},
    "get_commute_time": {"destination": ("string", None)},
    "search_knowledge": {"query": ("string", REQUIRED), "top_k": ("integer", None)},  # None: limit's 5
    "store_knowledge": {"text": ("string", REQUIRED), "metadata": ("object", None)},
    "execute_code": {"code": ("string", REQUIRED), "language": ("string", "python")},
    "query_finance": {
        "action": ("string", "transactions"),
        "category": ("string", None),
        "search": ("string", None),
        "sort": ("string", "timestamp"),
        "sort_dir": ("string", "desc"),
        "page": ("integer", 1),
        "per_page": ("integer", 10),
        "group_by": ("string", "category"),
        "date_from": ("string", None),
        "date_to": ("string", None),
    },
}
RENAMED = {"web_search", "load_web_page", "get_user_context", "get_daily_briefing", "get_commute_time", "query_finance"}


class FakeBridge(ContextBridge):
    """Records what the tool asked the context service for; answers with empty data."""

    def __init__(self) -> None:
        super().__init__("http://127.0.0.1:1")
        self.fetches: list[tuple[list[str] | None, str | None]] = []
        self.queries: list[dict[str, Any]] = []

    def fetch(
        self, categories: Sequence[str] | None, user_id: str = "default", *, destination: str | None = None
    ) -> dict[str, Any]:
        self.fetches.append((list(categories) if categories else None, destination))
        cats = {c: {"status": "not_configured", "data": None, "reason": "none"} for c in categories or ["calendar"]}
        return {"user_id": user_id, "generated_at": "2026-11-26T09:00:00Z", "timezone": "UTC", "categories": cats}

    def query_finance(self, user_id: str, query: Mapping[str, Any]) -> dict[str, Any]:
        self.queries.append(dict(query))
        return {"status": "ok", "result": {"total": 0}, "errors": []}


class FakeSearch:
    """A search backend that records the count it was asked for."""

    name = "fake"

    def __init__(self) -> None:
        self.counts: list[int] = []

    def search(self, query: str, *, count: int) -> list[SearchHit]:
        self.counts.append(count)
        return [SearchHit(title=query, url="https://example.org/", snippet="s")]


@pytest.fixture
def bridge() -> FakeBridge:
    return FakeBridge()


@pytest.fixture
def search() -> FakeSearch:
    return FakeSearch()


@pytest.fixture
def registry(tmp_path: Path, bridge: FakeBridge, search: FakeSearch) -> Iterator[LocalToolRegistry]:
    """Every tool the service registers, wired the way the service wires them."""
    store = SqliteKnowledgeStore(tmp_path / "k.sqlite3")
    math, code = MathSolverTool(), CodeExecutorTool()
    web, context = WebTool(search_backend=search), UserContextTool(context_bridge=bridge)
    registry = LocalToolRegistry()
    for tool in (math, code, web, context, KnowledgeStoreTool(store=store), KnowledgeSearchTool(store=store)):
        registry.register(tool)
    for alias in legacy_tools(web=web, user_context=context):
        registry.register(alias)
    yield registry
    math.close()
    code.close()
    store.close()


def _type_and_default(node: Mapping[str, Any]) -> tuple[str, Any]:
    kinds = [node] if "type" in node else [b for b in node.get("anyOf", []) if b.get("type") != "null"]
    return kinds[0]["type"], node.get("default")


@pytest.mark.parametrize("name", list(OLD_SIGNATURES))
def test_old_names_export_their_old_parameters(registry: LocalToolRegistry, name: str) -> None:
    tool = registry.get_tool(name)
    assert tool is not None
    schema = tool.input_schema()
    props, required = schema.get("properties", {}), set(schema.get("required", ()))
    old = OLD_SIGNATURES[name]
    if name in RENAMED:
        assert set(props) == set(old)  # exactly the old signature
    for param, (kind, default) in old.items():
        assert param in props, param
        if default is REQUIRED:
            assert param in required, param
            assert props[param]["type"] == kind
        else:
            assert param not in required, param
            assert _type_and_default(props[param]) == (kind, default), param


def test_old_names_export_strict_without_warnings(
    registry: LocalToolRegistry, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        exported = {t["function"]["name"]: t["function"] for t in registry.to_openai_tools(strict=True)}
    for name in RENAMED:
        assert exported[name]["strict"] is True, name
    assert not [r for r in caplog.records if any(name in r.getMessage() for name in RENAMED)]
    assert exported["get_daily_briefing"]["parameters"] == {
        "type": "object",
        "properties": {},
        "required": [],
        "additionalProperties": False,
        "description": "This tool takes no arguments.",
    }
    assert exported["web_search"]["parameters"]["properties"]["num_results"] == {
        "type": ["integer", "null"],
        "description": "How many results to return (1-20; other values are brought into range). Defaults to 5.",
    }


def test_query_finance_maps_every_old_argument(registry: LocalToolRegistry, bridge: FakeBridge) -> None:
    result = registry.call_tool(
        "query_finance",
        action="transactions",
        category="Groceries",
        search="pingo",
        sort="merchant",
        sort_dir="asc",
        page=2,
        per_page=500,
        group_by="month",
        date_from="2026-01-01",
        date_to="2026-01-31",
    )
    assert result.error is None, result.error
    assert result.metadata["alias_of"] == "user_context"
    assert result.metadata["tool_name"] == "query_finance"
    assert bridge.queries == [
        {
            "action": "transactions",
            "search": "pingo",
            "category": "Groceries",
            "sort": "description",
            "sort_dir": "asc",
            "page": 2,
            "per_page": 100,  # brought into range
            "group_by": None,  # only summaries are grouped
            "date_from": "2026-01-01",
            "date_to": "2026-01-31",
        }
    ]
    registry.call_tool("query_finance", action="summary")
    assert (bridge.queries[-1]["action"], bridge.queries[-1]["group_by"]) == ("summary", "category")
    registry.call_tool("query_finance")  # every old default
    assert bridge.queries[-1] == {
        "action": "transactions",
        "search": None,
        "category": None,
        "sort": "date",
        "sort_dir": "desc",
        "page": 1,
        "per_page": 10,
        "group_by": None,
        "date_from": None,
        "date_to": None,
    }


@pytest.mark.parametrize(
    ("arguments", "fetched"),
    [
        ({}, (None, None)),
        ({"categories": []}, (None, None)),
        ({"categories": ["calendar", "calendar"]}, (["calendar"], None)),
        ({"categories": ["calendar"], "destination": "office"}, (["calendar"], None)),  # old: ignored
        ({"categories": ["navigation"], "destination": "office"}, (["commute"], "office")),
        ({"categories": ["all"], "destination": "office"}, (None, "office")),
        ({"destination": "gym"}, (["commute"], "gym")),
    ],
)
def test_get_user_context_maps_categories(
    registry: LocalToolRegistry, bridge: FakeBridge, arguments: dict[str, Any], fetched: tuple[Any, Any]
) -> None:
    result = registry.call_tool("get_user_context", **arguments)
    assert result.error is None, result.error
    assert bridge.fetches == [fetched]


def test_briefing_and_commute(registry: LocalToolRegistry, bridge: FakeBridge) -> None:
    briefing = registry.call_tool("get_daily_briefing")
    assert briefing.error is None
    assert "alerts" in briefing.data
    registry.call_tool("get_commute_time")
    registry.call_tool("get_commute_time", destination="office")
    assert bridge.fetches == [(None, None), (["commute"], None), (["commute"], "office")]


def test_web_search_maps_num_results(registry: LocalToolRegistry, search: FakeSearch) -> None:
    for num_results in (3, 0, 500):
        result = registry.call_tool("web_search", query="solar", num_results=num_results)
        assert result.error is None, result.error
    registry.call_tool("web_search", query="solar")
    assert search.counts == [3, 1, 20, 5]


@pytest.mark.parametrize(
    ("name", "arguments", "fragments"),
    [
        ("query_finance", {"action": "search"}, ["action='search' needs the words", "query_finance(action='search'"]),
        ("query_finance", {"action": "search", "search": "   "}, ["action='search' needs the words"]),
        ("query_finance", {"action": "delete"}, ["action:", "'transactions'"]),
        ("query_finance", {"page": 0}, ["page:"]),
        ("query_finance", {"category": "x" * 101}, ["category:"]),
        ("query_finance", {"finance_action": "summary"}, ["finance_action: unknown argument", "Accepted arguments"]),
        ("query_finance", {"date_from": "yesterday"}, ["date_from"]),
        ("get_user_context", {"categories": ["spaceships"]}, ["categories[0]:"]),
        ("get_user_context", {"categories": "calendar"}, ["categories:"]),
        ("get_user_context", {"category": "calendar"}, ["category: unknown argument"]),
        ("get_daily_briefing", {"category": "all"}, ["category: unknown argument"]),
        ("get_commute_time", {"destination": "x" * 201}, ["destination:"]),
        ("web_search", {}, ["query: required argument is missing"]),
        ("web_search", {"query": "x", "count": 3}, ["count: unknown argument"]),
        ("load_web_page", {"url": "http://x", "include_links": True}, ["include_links: unknown argument"]),
    ],
)
def test_bad_old_calls_are_validation_errors(
    registry: LocalToolRegistry, bridge: FakeBridge, name: str, arguments: dict[str, Any], fragments: list[str]
) -> None:
    result = registry.call_tool(name, **arguments)
    assert result.error is not None
    assert result.error.type == "validation_error"
    for fragment in fragments:
        assert fragment in result.error.message
    assert bridge.queries == [] and bridge.fetches == []


def test_nulls_from_a_strict_model_mean_the_old_defaults(registry: LocalToolRegistry, bridge: FakeBridge) -> None:
    nulls = dict.fromkeys(OLD_SIGNATURES["query_finance"])
    assert registry.call_tool("query_finance", **nulls).error is None
    assert (bridge.queries[-1]["per_page"], bridge.queries[-1]["sort"]) == (10, "date")


def test_an_alias_needs_its_own_target(bridge: FakeBridge) -> None:
    context = UserContextTool(context_bridge=bridge)
    with pytest.raises(ToolDefinitionError, match=r"onto 'web'.*given the tool 'user_context'"):
        LegacyWebSearch(target=context)
    assert LegacyQueryFinance(target=context).target is context
    assert legacy_tools() == []
