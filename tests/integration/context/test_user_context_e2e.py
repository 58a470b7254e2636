"""UserContextTool through LocalToolRegistry against the real service, as a model calls it."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from shared.adapters import AdapterRegistry, BaseAdapter, register_adapter
from tools import LocalToolRegistry
from tools.builtin.context_bridge import ContextBridge
from tools.builtin.legacy import legacy_tools
from tools.builtin.user_context import UserContextTool

Scripted = Any  # the `scripted` fixture's ScriptedServer (conftest.py)
KEY = "e2e-key"


@pytest.fixture
def examples_dir() -> Path:
    return Path(__file__).resolve().parents[3] / "examples" / "context"


def _registry(url: str, *, api_key: str | None = KEY, timeout: float = 5) -> LocalToolRegistry:
    registry = LocalToolRegistry()
    tool = UserContextTool(context_bridge=ContextBridge(url, api_key=api_key, timeout=timeout, sleep=lambda _: None))
    registry.register(tool)
    for alias in legacy_tools(user_context=tool):
        registry.register(alias)
    return registry


@pytest.fixture
def registry(
    scripted: Scripted,
    start_service: Callable[..., Any],
    make_config: Callable[..., dict[str, Any]],
) -> LocalToolRegistry:
    service = start_service(make_config(scripted.url), api_key=KEY)
    return _registry(service.url)


def test_daily_briefing(registry: LocalToolRegistry) -> None:
    result = registry.call_tool_raw("get_daily_briefing", "{}")
    assert result.ok, result.error
    data = result.data
    cats = data["categories"]
    assert {name: entry["status"] for name, entry in cats.items()} == {
        "calendar": "ok",
        "finance": "ok",
        "weather": "ok",
        "commute": "ok",
        "health": "not_configured",
        "fitness": "not_configured",
        "gaming": "not_configured",
        "social": "not_configured",
    }
    assert [e["title"] for e in cats["calendar"]["today"]] == [
        "Team stand-up",
        "Dentist appointment",
        "1:1 with Ana",
        "Gym",
    ]
    assert cats["weather"]["today"]["rain_chance_pct"] == 85
    assert (cats["commute"]["destination"], cats["commute"]["travel_time_min"]) == ("Office", 14)
    assert cats["finance"]["totals"][0]["income"] == "4925.00"
    assert data["alerts"] == [
        "'Team stand-up' starts in 30 minutes at Office, room 2.14",
        "Rain likely today (85% chance): take an umbrella",
    ]
    json.dumps(registry("get_daily_briefing"))  # the dict form is JSON-serialisable


def test_commute_alias_with_destination(registry: LocalToolRegistry) -> None:
    result = registry.call_tool_raw("get_commute_time", '{"destination": "home"}')
    assert result.ok
    commute = result.data["categories"]["commute"]
    assert (commute["status"], commute["origin"], commute["destination"]) == ("ok", "Home", "Home")
    unknown = registry.call_tool("user_context", category="navigation", destination="the moon")
    entry = unknown.data["categories"]["commute"]
    assert entry["status"] == "error"
    assert entry["reason"].startswith(
        "unknown place 'the moon'; use one of the configured places (home, nowhere, office)"
    )


def test_finance_queries_as_a_model_sends_them(registry: LocalToolRegistry) -> None:
    result = registry.call_tool_raw(
        "user_context",
        '{"finance_action": "search", "search": "pingo doce", "sort": "amount", '
        '"sort_dir": "asc", "page": 1, "per_page": 2, "group_by": null, "date_from": null, '
        '"date_to": null, "include_alerts": null, "destination": null, "category": null, '
        '"action": null, "transaction_category": null}',
    )
    assert result.ok, result.error
    body = result.data["result"]
    assert (body["total"], body["pages"]) == (4, 2)
    assert [t["amount"] for t in body["transactions"]] == ["-66.08", "-62.35"]
    summary = registry.call_tool(
        "user_context",
        category="finance",
        finance_action="summary",
        group_by="category",
        date_from="2026-11-01",
    )
    groups = {g["key"]: g["expenses"] for g in summary.data["result"]["groups"]}
    assert groups["Travel"] == "612.40"
    cats = registry.call_tool("query_finance", action="categories").data["result"]["categories"]
    assert cats[0] == {
        "category": "Housing",
        "count": 2,
        "income": "0",
        "expenses": "1700.00",
        "net": "-1700.00",
    }


def test_bad_calls_get_corrective_errors(registry: LocalToolRegistry) -> None:
    result = registry.call_tool_raw(
        "user_context", '{"category": "weather", "finance_action": "search", "search": "x"}'
    )
    assert result.error is not None
    assert result.error.type == "validation_error"
    assert "user_context(category='finance'" in result.error.message
    page = registry.call_tool("user_context", category="finance", page=0)
    assert page.error is not None
    assert page.error.message.startswith("page must be 1 or more")
    old_page = registry.call_tool("query_finance", page=0)
    assert old_page.error is not None
    assert old_page.error.message.startswith("Invalid arguments for tool 'query_finance':\n- page:")
    garbage = registry.call_tool_raw("user_context", "{not json")
    assert garbage.error is not None
    assert garbage.error.type == "validation_error"


def test_broken_files_are_reported_with_file_and_line(
    tmp_path: Path,
    examples_dir: Path,
    scripted: Scripted,
    start_service: Callable[..., Any],
    make_config: Callable[..., dict[str, Any]],
) -> None:
    config = make_config(scripted.url)
    broken = {
        "calendar.ics": ("SUMMARY:Gym", "SUMMARY Gym"),
        "statement.csv": ("-71.45", "lots"),
        "statement.ofx": ("<TRNAMT>-4.20", "<TRNAMT>four"),
    }
    for name, (old, new) in broken.items():
        (tmp_path / name).write_text(
            (examples_dir / name).read_text(encoding="utf-8").replace(old, new), encoding="utf-8"
        )
    for adapter in config["users"]["default"]["adapters"]:
        if "path" in adapter:
            adapter["path"] = str(tmp_path / Path(adapter["path"]).name)
    service = start_service(config, api_key=KEY)
    data = _registry(service.url).call_tool("user_context", category=["calendar", "finance", "weather"]).data
    cats = data["categories"]
    assert cats["calendar"]["status"] == "error"
    assert cats["calendar"]["reason"] == (
        "calendar.ics line 58: Content line could not be parsed into parts: 'SUMMARY Gym': Invalid content line"
    )
    assert cats["finance"]["status"] == "error"
    assert cats["finance"]["reason"] == (
        "statement.csv line 7: amount 'lots' is not a number; "
        "statement.ofx line 66: transaction #4: amount 'four' is not a number"
    )
    assert cats["weather"]["status"] == "ok"


def test_an_adapter_raising_through_the_whole_stack(
    scripted: Scripted, start_service: Callable[..., Any], make_config: Callable[..., dict[str, Any]]
) -> None:
    @register_adapter(category="health", platform="exploding")
    class Exploding(BaseAdapter[int]):
        def fetch(self, config: Mapping[str, Any]) -> Any:  # breaks the never-raise contract
            raise RuntimeError("token=abc123")

        def fetch_raw(self, config: Mapping[str, Any]) -> Any:
            return []

        def transform(self, raw: Any) -> list[int]:
            return []

    registry = AdapterRegistry.with_builtin_adapters()
    registry.add(Exploding)
    config = make_config(scripted.url, extra_adapters=[{"category": "health", "platform": "exploding"}])
    service = start_service(config, api_key=KEY, registry=registry)
    result = _registry(service.url).call_tool("user_context", category=["health", "calendar"])
    assert result.ok
    cats = result.data["categories"]
    assert cats["health"] == {"status": "error", "reason": "the exploding adapter failed unexpectedly (RuntimeError)"}
    assert cats["calendar"]["status"] == "ok"
    assert "abc123" not in str(result.to_dict())
