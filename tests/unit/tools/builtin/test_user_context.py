"""UserContextTool with a hand-written fake bridge: argument rules, dispatch, output."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from tools import LocalToolRegistry
from tools.builtin.context_bridge import ContextBridge
from tools.builtin.legacy import legacy_tools
from tools.builtin.user_context import UserContextTool

CALENDAR = {
    "timezone": "UTC",
    "now": "2026-11-26T09:00:00+00:00",
    "events": [
        {
            "title": "Stand-up",
            "start": "2026-11-26T09:30:00+00:00",
            "end": "2026-11-26T09:45:00+00:00",
        }
    ],
}


class FakeBridge(ContextBridge):
    """Answers from canned data and records what the tool asked for."""

    def __init__(self, finance_answer: dict[str, Any] | None = None) -> None:
        super().__init__("http://127.0.0.1:1")
        self.fetches: list[tuple[list[str] | None, str, str | None]] = []
        self.queries: list[dict[str, Any]] = []
        self.finance_answer = finance_answer or {
            "status": "ok",
            "result": {"total": 0},
            "errors": [],
        }

    def fetch(
        self,
        categories: Sequence[str] | None,
        user_id: str = "default",
        *,
        destination: str | None = None,
    ) -> dict[str, Any]:
        self.fetches.append((list(categories) if categories else None, user_id, destination))
        cats: dict[str, Any] = {}
        for name in categories or ["calendar", "health"]:
            if name == "calendar":
                cats[name] = {"status": "ok", "platforms": ["ics"], "data": CALENDAR}
            else:
                cats[name] = {
                    "status": "not_configured",
                    "data": None,
                    "reason": f"no {name} source",
                }
        return {
            "user_id": user_id,
            "generated_at": "2026-11-26T09:00:00Z",
            "timezone": "UTC",
            "categories": cats,
        }

    def query_finance(self, user_id: str, query: Mapping[str, Any]) -> dict[str, Any]:
        self.queries.append(dict(query))
        return self.finance_answer


@pytest.fixture
def bridge() -> FakeBridge:
    return FakeBridge()


@pytest.fixture
def registry(bridge: FakeBridge) -> LocalToolRegistry:
    registry = LocalToolRegistry()
    tool = UserContextTool(context_bridge=bridge, user_id="alice")
    registry.register(tool)
    for alias in legacy_tools(user_context=tool):
        registry.register(alias)
    return registry


def test_summary_of_everything(registry: LocalToolRegistry, bridge: FakeBridge) -> None:
    result = registry.call_tool("user_context")
    assert result.ok
    assert bridge.fetches == [(None, "alice", None)]
    assert result.data == {
        "action": "summary",
        "generated_at": "2026-11-26T09:00:00Z",
        "timezone": "UTC",
        "categories": {
            "calendar": {
                "status": "ok",
                "timezone": "UTC",
                "now": "2026-11-26T09:00:00+00:00",
                "today": [
                    {
                        "title": "Stand-up",
                        "start": "09:30",
                        "end": "09:45",
                        "all_day": False,
                        "location": None,
                    }
                ],
                "next_event": {
                    "title": "Stand-up",
                    "start": "09:30",
                    "end": "09:45",
                    "all_day": False,
                    "location": None,
                    "date": "2026-11-26",
                    "starts_in_minutes": 30,
                },
                "upcoming": [],
                "counts": {"today": 1, "window": 1},
            },
            "health": {"status": "not_configured", "reason": "no health source"},
        },
        "alerts": ["'Stand-up' starts in 30 minutes"],
    }


def test_without_alerts(registry: LocalToolRegistry) -> None:
    data = registry.call_tool("user_context", category="calendar", include_alerts=False).data
    assert "alerts" not in data
    assert "alerts" not in data["categories"]["calendar"]


@pytest.mark.parametrize(
    ("category", "expected"),
    [
        ("calendar", ["calendar"]),
        ("navigation", ["commute"]),
        ("calendar, weather", ["calendar", "weather"]),
        (["weather", "weather", "navigation"], ["weather", "commute"]),
        ("all", None),
        (["calendar", "all"], None),
    ],
)
def test_category_forms(registry: LocalToolRegistry, bridge: FakeBridge, category: Any, expected: Any) -> None:
    assert registry.call_tool("user_context", category=category).ok
    assert bridge.fetches[-1][0] == expected


def test_destination_alone_means_commute(registry: LocalToolRegistry, bridge: FakeBridge) -> None:
    assert registry.call_tool("user_context", destination="office").ok
    assert bridge.fetches[-1] == (["commute"], "alice", "office")
    assert registry.call_tool("get_commute_time", destination="gym").ok
    assert bridge.fetches[-1] == (["commute"], "alice", "gym")


def test_finance_queries(registry: LocalToolRegistry, bridge: FakeBridge) -> None:
    result = registry.call_tool(
        "user_context",
        finance_action="search",
        search="coffee",
        page=2,
        per_page=5,
        sort="amount",
        sort_dir="asc",
    )
    assert result.data == {
        "action": "query",
        "category": "finance",
        "finance_action": "search",
        "status": "ok",
        "result": {"total": 0},
        "errors": [],
    }
    assert bridge.queries[-1] == {
        "action": "search",
        "search": "coffee",
        "category": None,
        "sort": "amount",
        "sort_dir": "asc",
        "page": 2,
        "per_page": 5,
        "group_by": None,
        "date_from": None,
        "date_to": None,
    }
    registry.call_tool("user_context", category="finance", action="query")
    assert bridge.queries[-1]["action"] == "transactions"
    registry.call_tool("user_context", group_by="month", date_from="2026-01-01", date_to="2026-03-31")
    assert bridge.queries[-1]["action"] == "summary"
    assert (bridge.queries[-1]["date_from"], bridge.queries[-1]["date_to"]) == ("2026-01-01", "2026-03-31")


def test_transaction_category_filter(registry: LocalToolRegistry, bridge: FakeBridge) -> None:
    result = registry.call_tool("user_context", transaction_category="Groceries", finance_action="summary")
    assert result.error is None, result.error
    assert (bridge.queries[-1]["action"], bridge.queries[-1]["category"]) == ("summary", "Groceries")
    wrong = registry.call_tool("user_context", category="calendar", transaction_category="Groceries")
    assert wrong.error is not None
    assert wrong.error.message.startswith("transaction_category can only be used with category='finance'")
    too_long = registry.call_tool("user_context", transaction_category="x" * 101)
    assert too_long.error is not None and too_long.error.type == "validation_error"


def test_query_of_other_categories_returns_details(registry: LocalToolRegistry) -> None:
    data = registry.call_tool("user_context", category=["calendar", "gaming"], action="query").data
    assert data["categories"]["calendar"] == {"status": "ok", "data": CALENDAR}
    assert data["categories"]["gaming"] == {
        "status": "not_configured",
        "reason": "no gaming source",
    }


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (
            {"category": "calendar", "finance_action": "search", "search": "x"},
            "finance_action, search can only be used with category='finance' on its own. Example: "
            "user_context(category='finance', action='query', "
            "finance_action='search', search='coffee')",
        ),
        (
            {"category": "all", "page": 2},
            "page can only be used with category='finance' on its own. Example: "
            "user_context(category='finance', action='query', "
            "finance_action='search', search='coffee')",
        ),
        (
            {"category": "weather", "destination": "office"},
            "destination only applies to the commute category. Example: "
            "user_context(category='commute', destination='office')",
        ),
        (
            {"category": "finance", "page": 0},
            "page must be 1 or more (pages start at 1), got 0. Example: "
            "user_context(category='finance', finance_action='transactions', page=1)",
        ),
        (
            {"category": "finance", "per_page": 500},
            "per_page must be between 1 and 100, got 500. Example: "
            "user_context(category='finance', finance_action='transactions', per_page=20)",
        ),
        (
            {"finance_action": "search"},
            "finance_action='search' needs the words to look for in search. Example: "
            "user_context(category='finance', finance_action='search', search='coffee')",
        ),
        (
            {"finance_action": "categories", "group_by": "month"},
            "group_by only applies to finance_action='summary'. Example: "
            "user_context(category='finance', finance_action='summary', group_by='month')",
        ),
        (
            {"finance_action": "summary", "date_from": "2026-02-01", "date_to": "2026-01-01"},
            "date_from (2026-02-01) is after date_to (2026-01-01). Example: "
            "user_context(category='finance', finance_action='summary', "
            "date_from='2026-01-01', date_to='2026-01-31')",
        ),
    ],
)
def test_bad_combinations_say_the_right_call(
    registry: LocalToolRegistry, bridge: FakeBridge, arguments: dict[str, Any], message: str
) -> None:
    result = registry.call_tool("user_context", **arguments)
    assert result.error is not None
    assert (result.error.type, result.error.message) == ("validation_error", message)
    assert bridge.fetches == []
    assert bridge.queries == []


@pytest.mark.parametrize(
    "arguments",
    [
        {"category": "spaceships"},
        {"action": "delete"},
        {"user_id": "bob"},
        {"search": "x" * 201},
        {"date_from": "yesterday"},
    ],
)
def test_schema_violations_are_validation_errors(registry: LocalToolRegistry, arguments: dict[str, Any]) -> None:
    result = registry.call_tool("user_context", **arguments)
    assert result.error is not None
    assert result.error.type == "validation_error"


def test_service_side_invalid_query_becomes_validation_error() -> None:
    bridge = FakeBridge({"status": "invalid", "reason": "invalid finance query: page: too big"})
    result = UserContextTool(context_bridge=bridge).execute(category="finance", page=3)
    assert result.error is not None
    assert result.error.type == "validation_error"
    assert result.error.message.startswith("invalid finance query: page: too big. Example: ")


def test_old_names_and_strict_export(registry: LocalToolRegistry) -> None:
    exported = {
        t["function"]["name"]: t["function"] for t in registry.to_openai_tools(strict=True, on_unsupported="raise")
    }
    assert set(exported) == {
        "user_context",
        "get_user_context",
        "get_daily_briefing",
        "get_commute_time",
        "query_finance",
    }
    assert all(f["strict"] is True for f in exported.values())
    assert exported["get_daily_briefing"]["parameters"]["properties"] == {}
    props = exported["user_context"]["parameters"]["properties"]
    assert props["finance_action"]["description"].startswith("Finance only:")
