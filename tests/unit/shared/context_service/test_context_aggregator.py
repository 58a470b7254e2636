"""ContextAggregator with the file adapters: statuses per category, caching, failures."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from shared.adapters import AdapterRegistry, BaseAdapter, FinanceQuery, register_adapter
from shared.context_service import ContextAggregator, ServiceConfig, UnknownUserError


def _config(folder: Path, csv_columns: dict[str, str], extra: list[dict[str, Any]] | None = None) -> ServiceConfig:
    adapters: list[dict[str, Any]] = [
        {"category": "calendar", "platform": "ics", "path": str(folder / "calendar.ics")},
        {
            "category": "finance",
            "platform": "csv",
            "path": str(folder / "statement.csv"),
            "columns": csv_columns,
        },
        {"category": "finance", "platform": "ofx", "path": str(folder / "statement.ofx")},
        *(extra or []),
    ]
    return ServiceConfig.model_validate({"users": {"default": {"timezone": "Europe/Lisbon", "adapters": adapters}}})


@pytest.fixture
def folder(tmp_path: Path, examples: Path) -> Path:
    for name in ("calendar.ics", "statement.csv", "statement.ofx"):
        shutil.copy(examples / name, tmp_path / name)
    return tmp_path


class _Ticker:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def ticker() -> _Ticker:
    return _Ticker()


@pytest.fixture
def aggregator(
    folder: Path, csv_columns: dict[str, str], clock: Callable[[], datetime], ticker: _Ticker
) -> Iterator[ContextAggregator]:
    agg = ContextAggregator(_config(folder, csv_columns), clock=clock, monotonic=ticker)
    yield agg
    agg.close()


def test_statuses_per_category(aggregator: ContextAggregator) -> None:
    out = aggregator.context("default", ["calendar", "finance", "health", "weather", "spaceships"])
    cats = out["categories"]
    assert {name: entry["status"] for name, entry in cats.items()} == {
        "calendar": "ok",
        "finance": "ok",
        "health": "not_configured",
        "weather": "not_configured",
        "spaceships": "unknown_category",
    }
    assert cats["finance"]["platforms"] == ["csv", "ofx"]
    assert cats["finance"]["record_count"] == 31
    assert cats["health"] == {
        "status": "not_configured",
        "data": None,
        "reason": "no health source is configured for this user",
    }
    assert cats["spaceships"]["reason"].startswith("unknown category 'spaceships'; known: calendar, finance")
    assert cats["calendar"]["data"]["now"] == "2026-11-26T09:00:00+00:00"


def test_all_categories_by_default(aggregator: ContextAggregator) -> None:
    out = aggregator.context("default")
    assert list(out["categories"]) == [
        "calendar",
        "finance",
        "weather",
        "commute",
        "health",
        "fitness",
        "gaming",
        "social",
    ]


def test_unknown_user(aggregator: ContextAggregator) -> None:
    with pytest.raises(UnknownUserError, match="unknown user_id 'bob'; known users: default"):
        aggregator.context("bob")


def test_results_are_cached_until_the_file_changes(
    aggregator: ContextAggregator, folder: Path, ticker: _Ticker
) -> None:
    first = aggregator.finance_query("default", FinanceQuery(action="search", search="netflix"))
    assert first["result"]["total"] == 2
    csv = folder / "statement.csv"
    with csv.open("a") as handle:
        handle.write("2026-11-21,NETFLIX EXTRA,-4.00,Subscriptions,\n")
    os.utime(csv, ns=(10**18, 10**18))  # a different mtime even on coarse file systems
    again = aggregator.finance_query("default", FinanceQuery(action="search", search="netflix"))
    assert again["result"]["total"] == 3


def test_cache_expires_after_ttl(
    folder: Path, csv_columns: dict[str, str], clock: Callable[[], datetime], ticker: _Ticker
) -> None:
    calls: list[int] = []

    @register_adapter(category="health", platform="counter")
    class Counter(BaseAdapter[int]):
        def fetch_raw(self, config: Mapping[str, Any]) -> Any:
            calls.append(1)
            return [len(calls)]

        def transform(self, raw: Any) -> list[int]:
            return list(raw)

    registry = AdapterRegistry([Counter])
    config = ServiceConfig.model_validate(
        {
            "cache_ttl_seconds": 30,
            "users": {"default": {"adapters": [{"category": "health", "platform": "counter"}]}},
        }
    )
    agg = ContextAggregator(config, registry=registry, clock=clock, monotonic=ticker)
    try:
        assert agg.context("default", ["health"])["categories"]["health"]["data"] == [1]
        ticker.now = 29
        assert agg.context("default", ["health"])["categories"]["health"]["data"] == [1]
        ticker.now = 31
        assert agg.context("default", ["health"])["categories"]["health"]["data"] == [2]
    finally:
        agg.close()


def test_one_broken_source_never_fails_the_others(
    folder: Path, csv_columns: dict[str, str], clock: Callable[[], datetime]
) -> None:
    (folder / "statement.ofx").write_text("not ofx at all\n")
    (folder / "calendar.ics").write_text("BEGIN:VCALENDAR\nthis is wrong\nEND:VCALENDAR\n")
    agg = ContextAggregator(_config(folder, csv_columns), clock=clock)
    try:
        cats = agg.context("default", ["calendar", "finance"])["categories"]
    finally:
        agg.close()
    assert cats["calendar"]["status"] == "error"
    assert cats["calendar"]["reason"].startswith("calendar.ics line 2: not a valid iCalendar file")
    assert cats["finance"]["status"] == "partial"
    assert cats["finance"]["reason"] == "statement.ofx line 1: not an OFX file: the OFX header is missing or malformed"
    assert cats["finance"]["data"]["transaction_count"] == 25


def test_an_adapter_raising_is_contained(
    folder: Path, csv_columns: dict[str, str], clock: Callable[[], datetime]
) -> None:
    @register_adapter(category="health", platform="exploding")
    class Exploding(BaseAdapter[int]):
        def fetch(self, config: Mapping[str, Any]) -> Any:  # breaks the never-raise contract
            raise RuntimeError("password=hunter2")

        def fetch_raw(self, config: Mapping[str, Any]) -> Any:
            return []

        def transform(self, raw: Any) -> list[int]:
            return []

    registry = AdapterRegistry.with_builtin_adapters()
    registry.add(Exploding)
    extra = [
        {"category": "health", "platform": "exploding"},
        {"category": "gaming", "platform": "steam"},
    ]
    agg = ContextAggregator(_config(folder, csv_columns, extra), registry=registry, clock=clock)
    try:
        cats = agg.context("default", ["health", "gaming", "finance"])["categories"]
    finally:
        agg.close()
    assert cats["health"]["status"] == "error"
    assert cats["health"]["reason"] == "the exploding adapter failed unexpectedly (RuntimeError)"
    assert "hunter2" not in str(cats)
    assert cats["gaming"]["reason"] == "no 'steam' adapter for gaming; available: none"
    assert cats["finance"]["status"] == "ok"


def test_finance_query_statuses(folder: Path, csv_columns: dict[str, str], clock: Callable[[], datetime]) -> None:
    config = ServiceConfig.model_validate({"users": {"default": {}}})
    agg = ContextAggregator(config, clock=clock)
    try:
        assert agg.finance_query("default", FinanceQuery())["status"] == "not_configured"
    finally:
        agg.close()
    (folder / "statement.csv").write_text("nothing,useful\n")
    (folder / "statement.ofx").unlink()
    agg = ContextAggregator(_config(folder, csv_columns), clock=clock)
    try:
        answer = agg.finance_query("default", FinanceQuery())
    finally:
        agg.close()
    assert answer["status"] == "error"
    assert [e["platform"] for e in answer["errors"]] == ["csv", "ofx"]
    assert "statement.ofx: file not found" in answer["reason"]


def test_health_lists_adapters_without_user_data(aggregator: ContextAggregator, folder: Path) -> None:
    health = aggregator.health()
    assert health["status"] == "ok"
    assert [a["platform"] for a in health["adapters"]] == [
        "ics",
        "csv",
        "ofx",
        "open-meteo",
        "osrm",
    ]
    assert str(folder) not in str(health)


def test_warm_up_reads_each_source_once(clock: Callable[[], datetime]) -> None:
    calls: list[int] = []

    @register_adapter(category="health", platform="counter")
    class Counter(BaseAdapter[int]):
        def fetch_raw(self, config: Mapping[str, Any]) -> Any:
            calls.append(1)
            return [7]

        def transform(self, raw: Any) -> list[int]:
            return list(raw)

    config = ServiceConfig.model_validate(
        {"users": {"default": {"adapters": [{"category": "health", "platform": "counter"}]}}}
    )
    agg = ContextAggregator(config, registry=AdapterRegistry([Counter]), clock=clock)
    try:
        agg.warm_up()
        assert agg.context("default", ["health"])["categories"]["health"]["data"] == [7]
    finally:
        agg.close()
    assert calls == [1]
