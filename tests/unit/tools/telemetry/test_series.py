"""Hourly buckets: the percentile arithmetic, and the file store as a `MetricsHistory`.

How buckets are counted, merged across stores, kept 30 days, bounded and read back (``series``,
``summary``: what the console uses) is the contract of both metrics stores, run against the
file and PostgreSQL in tests/integration/postgres/test_metrics_history_backends.py.
"""

from __future__ import annotations

from datetime import datetime, timezone
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
