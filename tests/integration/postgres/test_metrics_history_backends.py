"""Hourly buckets per tool, against the metrics file and PostgreSQL: counted by UTC hour,
added up exactly across stores, p50/p95 from the histogram, windows by ``since`` and
``until``, kept 30 days and bounded in number (the read interface the console uses,
`MetricsHistory`)."""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from tests.unit.tools.telemetry.test_series import NOW, call
from tests.unit.tools.telemetry.test_store import result
from tools.telemetry import MetricsBackend

from .metrics_places import MetricsPlace

UTC = timezone.utc


def open_at(place: MetricsPlace, **options: Any) -> MetricsBackend:
    """A store whose clock says `NOW`."""
    return place.open(clock=lambda: NOW, **options)


def test_calls_are_counted_by_tool_and_utc_hour(place: MetricsPlace) -> None:
    with open_at(place) as store:
        store.record(call("search", NOW - timedelta(hours=2), 3.0))
        store.record(call("search", NOW - timedelta(hours=2), 7.0, error="timeout"))
        store.record(call("search", NOW, 40.0))
        store.record(call("other", NOW, 1.0))
        local = datetime(2026, 6, 15, 14, 5, tzinfo=timezone(timedelta(hours=2)))  # 12:05 UTC
        store.record(call("search", local, 0.5, error="upstream_error"))
        unwritten = store.series("search")
        store.flush()
        written = open_at(place).series("search")
    for hours in (unwritten, written):
        assert [b.start for b in hours] == [
            datetime(2026, 6, 15, 10, tzinfo=UTC),
            datetime(2026, 6, 15, 12, tzinfo=UTC),
        ]
        early, late = hours
        assert (early.calls, early.failures, early.error_types, early.duration_ms, early.max_ms) == (
            2,
            1,
            {"timeout": 1},
            10.0,
            7.0,
        )
        assert (late.calls, late.failures, late.error_types) == (2, 1, {"upstream_error": 1})
        assert sum(early.histogram) == 2 and early.histogram[2] == 1 and early.histogram[3] == 1  # (2,5], (5,10]


def test_buckets_from_several_stores_add_up_exactly(place: MetricsPlace) -> None:
    rng = random.Random(7)
    expected: dict[str, list[float]] = {}
    stores = [open_at(place, compact_bytes=4_000) for _ in range(3)]
    for i in range(300):
        hour = NOW - timedelta(hours=rng.randrange(48))
        duration = rng.choice([0.5, 3.0, 30.0, 300.0, 70_000.0])
        stores[i % 3].record(call("tool", hour, duration))
        expected.setdefault(hour.strftime("%Y-%m-%dT%H"), []).append(duration)
        if i % 25 == 0:
            stores[i % 3].flush()
    for store in stores:
        store.close()
    hours = open_at(place).series("tool")
    assert {b.start.strftime("%Y-%m-%dT%H"): b.calls for b in hours} == {k: len(v) for k, v in expected.items()}
    for bucket in hours:
        durations = expected[bucket.start.strftime("%Y-%m-%dT%H")]
        assert bucket.duration_ms == pytest.approx(sum(durations))
        assert bucket.max_ms == max(durations)
        assert sum(bucket.histogram) == len(durations)


def test_percentiles_are_read_from_the_histogram_within_a_slot(place: MetricsPlace) -> None:
    with open_at(place) as store:
        for i in range(100):  # 1..100 ms
            store.record(call("t", NOW, float(i + 1)))
        summaries = [store.summary("t")]
        store.flush()
        store.record(call("t", NOW - timedelta(hours=3), 1.0))  # written and unwritten hours together
        summaries.append(store.summary("t"))
    for summary in summaries:
        assert summary.failures == 0 and summary.success_rate == 1.0
        assert summary.p50_ms is not None and 20.0 <= summary.p50_ms <= 50.0  # the (20, 50] slot holds it
        assert summary.p95_ms is not None and 50.0 <= summary.p95_ms <= 100.0
    assert summaries[0].calls == 100 and summaries[0].avg_ms == pytest.approx(50.5)
    assert summaries[1].calls == 101 and summaries[1].since == datetime(2026, 6, 15, 9, tzinfo=UTC)


def test_summary_window_and_last_error(place: MetricsPlace) -> None:
    with open_at(place, redact=lambda text: text.replace("hunter2", "***")) as store:
        store.record(call("t", NOW - timedelta(days=3), 5.0, error="timeout"))
        store.record(call("t", NOW - timedelta(hours=1), 5.0))
        store.flush()
        store.record(call("t", NOW - timedelta(hours=1), 5.0, error="execution_error", message="password hunter2"))
        recent = store.summary("t", since=NOW - timedelta(days=1))
        everything = store.summary("t")
    assert (recent.calls, recent.failures, dict(recent.error_types)) == (2, 1, {"execution_error": 1})
    assert (everything.calls, everything.failures) == (3, 2)
    assert recent.last_error is not None and "hunter2" not in recent.last_error
    assert recent.last_error_type == "execution_error"
    assert recent.to_dict()["success_rate"] == 0.5
    assert open_at(place).summary("never").to_dict()["calls"] == 0


def test_since_and_until_select_hours(place: MetricsPlace) -> None:
    with open_at(place) as store:
        for hours_ago in range(10):
            store.record(call("t", NOW - timedelta(hours=hours_ago), 1.0))
        unwritten = store.series("t", since=NOW - timedelta(hours=5), until=NOW - timedelta(hours=2))
    # 07:xx .. 10:30 (the hour of `until` is partly inside): 07, 08, 09, 10
    assert [b.start.hour for b in unwritten] == [7, 8, 9, 10]
    with open_at(place) as store:
        assert [b.start.hour for b in store.series("t", since=NOW - timedelta(hours=5), until=NOW)] == [
            7,
            8,
            9,
            10,
            11,
            12,
        ]
        on_the_hour = NOW.replace(minute=0)  # 12:00: hour 12 is not inside [since, 12:00)
        assert [b.start.hour for b in store.series("t", since=NOW - timedelta(hours=2), until=on_the_hour)] == [10, 11]
        naive = NOW.replace(tzinfo=None) - timedelta(hours=1)
        assert [b.start.hour for b in store.series("t", since=naive)] == [11, 12]


def test_hours_past_the_retention_are_dropped_at_compaction(place: MetricsPlace) -> None:
    with open_at(place) as store:
        store.record(call("t", NOW - timedelta(days=40), 1.0))
        store.record(call("t", NOW - timedelta(days=2), 1.0))
        assert len(store.series("t")) == 1  # reads leave out what is past the retention
        store.compact()
    assert place.stored_hours("t") == [(NOW - timedelta(days=2)).strftime("%Y-%m-%dT%H")]
    with open_at(place) as store:
        assert store.stats("t").calls == 2  # the all-time figures keep every call


def test_the_number_of_buckets_is_bounded_oldest_first(place: MetricsPlace) -> None:
    with open_at(place, max_buckets=50) as store:
        for tool in ("a", "b"):
            for hours_ago in range(100):
                store.record(call(tool, NOW - timedelta(hours=hours_ago), 1.0))
        store.compact()
        kept = store.series("a") + store.series("b")
    assert len(kept) == 50
    assert min(b.start for b in kept) >= NOW - timedelta(hours=25)


@pytest.mark.parametrize("stamp", ["2026-13-45T99:00:00+00:00", "2026-02-30T10:00:00Z", "yesterday-ishT12+00:00"])
def test_a_start_time_naming_no_real_hour_is_counted_in_the_current_hour(place: MetricsPlace, stamp: str) -> None:
    before = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    with place.open() as store:
        store.record(result("t", started=stamp))
        store.record(result("t", started=stamp, error="timeout"))
        unwritten = store.series("t")
        store.flush()
        written = place.open().series("t")
    after = datetime.now(UTC)
    for hours in (unwritten, written):
        assert [(b.calls, b.failures) for b in hours] == [(2, 1)]
        assert before <= hours[0].start <= after
