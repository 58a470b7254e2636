"""Hourly buckets per tool: counted, merged across stores, kept 30 days, bounded, read back.

The read interface (``series``, ``summary``) is what the console uses; ``MetricsHistory``
pins it so other stores (PostgreSQL) can implement the same.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from tools import ToolResult
from tools.telemetry import (
    LATENCY_BOUNDS_MS,
    HourBucket,
    MetricsHistory,
    MetricsStore,
    percentile,
)
from tools.telemetry.series import hour_key, hour_start

UTC = timezone.utc
NOW = datetime(2026, 6, 15, 12, 30, tzinfo=UTC)


def call(name: str, at: datetime, duration: float, error: str | None = None, message: str = "it failed") -> ToolResult:
    metadata = {"tool_name": name, "duration_ms": duration, "started_at": at.isoformat()}
    if error is None:
        return ToolResult.success(1, metadata)
    return ToolResult.failure(error, message, metadata=metadata)  # type: ignore[arg-type]


def store_at(path: Path, **options: Any) -> MetricsStore:
    return MetricsStore(path, flush_interval=None, clock=lambda: NOW, **options)


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "metrics.json"


def test_calls_are_counted_by_tool_and_utc_hour(path: Path) -> None:
    with store_at(path) as store:
        store.record(call("search", NOW - timedelta(hours=2), 3.0))
        store.record(call("search", NOW - timedelta(hours=2), 7.0, error="timeout"))
        store.record(call("search", NOW, 40.0))
        store.record(call("other", NOW, 1.0))
        local = datetime(2026, 6, 15, 14, 5, tzinfo=timezone(timedelta(hours=2)))  # 12:05 UTC
        store.record(call("search", local, 0.5, error="upstream_error"))
        hours = store.series("search")
    assert [b.start for b in hours] == [datetime(2026, 6, 15, 10, tzinfo=UTC), datetime(2026, 6, 15, 12, tzinfo=UTC)]
    early, late = hours
    assert (early.calls, early.failures, early.error_types, early.duration_ms, early.max_ms) == (
        2,
        1,
        {"timeout": 1},
        10.0,
        7.0,
    )
    assert (late.calls, late.failures, late.error_types) == (2, 1, {"upstream_error": 1})
    assert sum(early.histogram) == 2 and early.histogram[2] == 1 and early.histogram[3] == 1  # (2,5] and (5,10]


def test_buckets_from_several_stores_add_up_exactly(path: Path) -> None:
    rng = random.Random(7)
    expected: dict[str, list[float]] = {}
    stores = [store_at(path, compact_bytes=4_000) for _ in range(3)]
    try:
        for i in range(300):
            hour = NOW - timedelta(hours=rng.randrange(48))
            duration = rng.choice([0.5, 3.0, 30.0, 300.0, 70_000.0])
            stores[i % 3].record(call("tool", hour, duration))
            expected.setdefault(hour.strftime("%Y-%m-%dT%H"), []).append(duration)
            if i % 25 == 0:
                stores[i % 3].flush()
    finally:
        for store in stores:
            store.close()
    with store_at(path) as reader:
        hours = reader.series("tool")
    assert {b.start.strftime("%Y-%m-%dT%H"): b.calls for b in hours} == {k: len(v) for k, v in expected.items()}
    for bucket in hours:
        durations = expected[bucket.start.strftime("%Y-%m-%dT%H")]
        assert bucket.duration_ms == pytest.approx(sum(durations))
        assert bucket.max_ms == max(durations)


def test_percentiles_are_read_from_the_histogram_within_a_slot(path: Path) -> None:
    with store_at(path) as store:
        for i in range(100):  # 1..100 ms
            store.record(call("t", NOW, float(i + 1)))
        summary = store.summary("t")
    assert summary.calls == 100 and summary.failures == 0 and summary.success_rate == 1.0
    assert summary.p50_ms is not None and 20.0 <= summary.p50_ms <= 50.0  # the (20, 50] slot holds it
    assert summary.p95_ms is not None and 50.0 <= summary.p95_ms <= 100.0
    assert summary.avg_ms == pytest.approx(50.5)


def test_percentile_arithmetic() -> None:
    slots = len(LATENCY_BOUNDS_MS) + 1
    assert percentile([0] * slots, 0.5) is None
    one_slot = [0] * slots
    one_slot[3] = 10  # ten calls in (5, 10]
    assert percentile(one_slot, 0.5) == 7.5
    assert percentile(one_slot, 1.0) == 10.0
    assert percentile(one_slot, 1.0, max_ms=8.0) == 8.0  # never above the slowest call
    tail = [0] * slots
    tail[-1] = 4  # slower than the last bound: capped by the slowest call
    assert percentile(tail, 0.95, max_ms=90_000.0) is not None
    assert 60_000.0 <= percentile(tail, 0.95, max_ms=90_000.0) <= 90_000.0  # type: ignore[operator]


def test_summary_window_and_last_error(path: Path) -> None:
    with store_at(path, redact=lambda text: text.replace("hunter2", "***")) as store:
        store.record(call("t", NOW - timedelta(days=3), 5.0, error="timeout"))
        store.record(call("t", NOW - timedelta(hours=1), 5.0))
        store.record(call("t", NOW - timedelta(hours=1), 5.0, error="execution_error", message="password hunter2"))
        recent = store.summary("t", since=NOW - timedelta(days=1))
        everything = store.summary("t")
    assert (recent.calls, recent.failures, dict(recent.error_types)) == (2, 1, {"execution_error": 1})
    assert (everything.calls, everything.failures) == (3, 2)
    assert recent.last_error is not None and "hunter2" not in recent.last_error
    assert recent.last_error_type == "execution_error"
    assert recent.to_dict()["success_rate"] == 0.5


def test_since_and_until_select_hours(path: Path) -> None:
    with store_at(path) as store:
        for hours_ago in range(10):
            store.record(call("t", NOW - timedelta(hours=hours_ago), 1.0))
        window = store.series("t", since=NOW - timedelta(hours=5), until=NOW - timedelta(hours=2))
    # 07:xx .. 10:30 (the hour of `until` is partly inside): 07, 08, 09, 10
    assert [b.start.hour for b in window] == [7, 8, 9, 10]
    naive = NOW.replace(tzinfo=None) - timedelta(hours=1)
    with store_at(path) as store:
        assert [b.start.hour for b in store.series("t", since=naive)] == [11, 12]


def test_hours_past_the_retention_are_dropped_at_compaction(path: Path) -> None:
    with store_at(path) as store:
        store.record(call("t", NOW - timedelta(days=40), 1.0))
        store.record(call("t", NOW - timedelta(days=2), 1.0))
        assert len(store.series("t")) == 1  # reads leave out what is past the retention
        store.compact()
    import json

    assert list(json.loads(path.read_text())["series"]["t"]) == [(NOW - timedelta(days=2)).strftime("%Y-%m-%dT%H")]
    with store_at(path) as store:
        assert store.stats("t").calls == 2  # the all-time figures keep every call


def test_the_number_of_buckets_is_bounded_oldest_first(path: Path) -> None:
    with store_at(path, max_buckets=50) as store:
        for tool in ("a", "b"):
            for hours_ago in range(100):
                store.record(call(tool, NOW - timedelta(hours=hours_ago), 1.0))
        store.compact()
        kept = store.series("a") + store.series("b")
    assert len(kept) == 50
    assert min(b.start for b in kept) >= NOW - timedelta(hours=25)


def test_the_store_is_a_metrics_history(path: Path) -> None:
    store = store_at(path)
    try:
        assert isinstance(store, MetricsHistory)
    finally:
        store.close()
    merged = HourBucket.merged(
        [HourBucket(NOW, 1, 1, {"timeout": 1}, 2.0, 2.0), HourBucket(NOW, 2, 0, {}, 4.0, 3.0)], NOW
    )
    assert (merged.calls, merged.failures, merged.duration_ms, merged.max_ms) == (3, 1, 6.0, 3.0)
    assert merged.to_dict()["error_types"] == {"timeout": 1}


@pytest.mark.parametrize("moment", ["2026-01-01T00", "2026-11-25T13", "2028-02-29T23"])
def test_hour_start_reads_back_what_hour_key_writes(moment: str) -> None:
    start = hour_start(moment)
    assert start.tzinfo is timezone.utc
    assert hour_key(start) == moment
    assert start == datetime.strptime(moment, "%Y-%m-%dT%H").replace(tzinfo=timezone.utc)


@pytest.mark.parametrize(
    "key",
    ["2026-11-25 13", "2026-11-2513", "2026-13-01T00", "2026-02-30T00", "\uff12026-11-25T13", "", "2026-1-250T13"],
)
def test_hour_start_refuses_what_is_not_an_hour_key(key: str) -> None:
    with pytest.raises(ValueError):
        hour_start(key)
