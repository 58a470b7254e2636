"""The metrics store's contract, run against the metrics file and PostgreSQL: every call path
recorded and written on close (never on the hot path), the figures, accumulation across
store objects, redacted short errors, bounded cardinality, background flushes, records after
close. What only one backend has (a corrupt file, a lock file; a database row) is tested
beside it (tests/unit/tools/telemetry/test_store.py, test_metrics_postgres.py)."""

from __future__ import annotations

import time
from typing import Any

import pytest

from tests.unit.tools.telemetry.test_store import registry_with, result
from tools import ToolResult
from tools.telemetry import OVERFLOW_BUCKET, UNKNOWN_TOOL_BUCKET, MetricsHistory

from .metrics_places import MetricsPlace


def wait_until_stored(place: MetricsPlace, tool: str, calls: int) -> None:
    """Poll what is written until ``tool`` has ``calls`` calls (bounded; not a timing assertion)."""
    deadline = time.monotonic() + 60
    while place.stored().get(tool, {}).get("calls") != calls:
        assert time.monotonic() < deadline, f"{tool} never reached {calls} stored calls"
        time.sleep(0.02)


def test_every_call_path_is_recorded_and_written_on_close(place: MetricsPlace) -> None:
    with place.open() as store:
        assert isinstance(store, MetricsHistory)
        registry = registry_with(store)
        for n in range(6):
            registry("flaky", n=n)  # 3 successes, 3 execution errors
        registry.call_tool("flaky", n="x")  # validation_error
        registry.get("flaky")(n=2)  # type: ignore[misc]
        assert place.stored() == {}  # nothing written on the hot path
    figures = place.stored()["flaky"]
    assert {k: figures[k] for k in ("calls", "successes", "failures", "error_types", "last_error_type")} == {
        "calls": 8,
        "successes": 4,
        "failures": 4,
        "error_types": {"execution_error": 3, "validation_error": 1},
        "last_error_type": "validation_error",
    }
    assert figures["success_rate"] == 0.5
    assert figures["last_success"] is not None and figures["last_failure"] is not None


def test_success_rate_avg_duration_and_degraded(place: MetricsPlace) -> None:
    with place.open() as store:
        assert store.stats("never").success_rate == 0.0  # no calls: 0.0, not 1.0
        assert store.stats("never").avg_duration_ms == 0.0
        for duration in (10.0, 30.0):
            store.record(result("slow", duration=duration))
        store.record(result("slow", error="timeout", duration=5000.0))
        for _ in range(4):
            store.record(result("bad", error="upstream_error"))
        store.record(result("bad"))
        store.record(result("few", error="execution_error"))
        assert store.stats("slow").avg_duration_ms == 20.0  # over successes only
        assert store.stats("slow").success_rate == pytest.approx(2 / 3)
        assert store.stats("slow").invocations == 3
        assert store.get_degraded() == ["bad"]  # "few" has too few calls, "slow" has only 3
        assert store.get_degraded(threshold=0.7, min_calls=3) == ["bad", "slow"]
        store.flush()
        assert store.get_degraded() == ["bad"]  # the same figures once read back
        assert place.open().get_degraded() == ["bad"]  # and by another store object


def test_figures_accumulate_across_store_objects(place: MetricsPlace) -> None:
    for _ in range(3):
        with place.open() as store:
            registry_with(store)("flaky", n=2)
    with place.open() as store:
        assert store.stats("flaky").calls == 3
        store.record(result("flaky"))
        assert store.stats("flaky").calls == 4  # what is written plus this process's unwritten call
        assert store.all_stats()["flaky"].calls == 4


def test_last_error_is_redacted_and_short(place: MetricsPlace) -> None:
    with place.open() as store:
        registry_with(store)("flaky", n=1)
        store.record(
            ToolResult.failure(
                "upstream_error",
                "GET https://bob:hunter22@api.example.com failed: api_key=sk-live-0123456789abcdef " + "and more " * 60,
                metadata={"tool_name": "http"},
            )
        )
    tools = place.stored()
    assert tools["flaky"]["last_error"] == "odd number 1; Authorization: *** ***"
    http = tools["http"]["last_error"]
    assert "hunter22" not in http and "sk-live" not in http
    assert http.startswith("GET https://***@api.example.com failed: api_key=***")
    assert len(http) == 200 and http.endswith("…")


def test_the_latest_failure_wins_whichever_store_wrote_it(place: MetricsPlace) -> None:
    late, early = place.open(), place.open()
    late.record(result("t", error="timeout", started="2026-03-02T00:00:00+00:00"))
    late.record(result("t", started="2026-03-03T00:00:00+00:00"))
    early.record(result("t", error="upstream_error", started="2026-03-01T00:00:00+00:00"))
    late.close()
    early.close()  # written last, but its failure is older
    figures = place.stored()["t"]
    assert (figures["last_error_type"], figures["last_failure"]) == ("timeout", "2026-03-02T00:00:00+00:00")
    assert figures["last_success"] == "2026-03-03T00:00:00+00:00"
    assert figures["error_types"] == {"timeout": 1, "upstream_error": 1}


def test_unknown_tools_share_one_bucket(place: MetricsPlace) -> None:
    with place.open() as store:
        registry = registry_with(store)
        for n in range(2000):
            registry(f"made_up_{n}")
        registry.call_tool_raw("x" * 10_000, "{}")
    tools = place.stored()
    assert set(tools) == {UNKNOWN_TOOL_BUCKET}
    assert tools[UNKNOWN_TOOL_BUCKET]["calls"] == 2001
    assert tools[UNKNOWN_TOOL_BUCKET]["error_types"] == {"unknown_tool": 2001}


def test_buckets_are_never_degraded(place: MetricsPlace) -> None:
    with place.open() as store:
        registry = registry_with(store)
        for _ in range(10):
            registry("nope")
        assert store.get_degraded() == []
        store.flush()
        assert store.get_degraded() == []


@pytest.mark.parametrize(
    "name",
    [None, 42, ["a", "list"], {"a": "dict"}, "y" * 65],
    ids=["none", "int", "list", "dict", "too-long"],
)
def test_hostile_tool_names_in_metadata_go_to_the_unknown_bucket(place: MetricsPlace, name: Any) -> None:
    with place.open() as store:
        store.record(result(name))
        store.record(result(name, error="execution_error"))
    assert place.stored()[UNKNOWN_TOOL_BUCKET]["calls"] == 2


def test_distinct_tools_are_capped_in_memory_and_where_they_are_kept(place: MetricsPlace) -> None:
    with place.open(max_tools=3) as store:
        for n in range(10):
            store.record(result(f"tool_{n}"))
        store.record(result("nope", error="unknown_tool"))
        assert set(store.all_stats()) == {"tool_0", "tool_1", "tool_2", OVERFLOW_BUCKET, UNKNOWN_TOOL_BUCKET}
    with place.open(max_tools=3) as store:
        store.record(result("tool_1"))
        store.record(result("brand_new"))  # full: counted under the overflow entry
        assert store.stats("brand_new").calls == 0
        assert store.all_stats()[OVERFLOW_BUCKET].calls == 8
        store.flush()
        assert set(place.stored(max_tools=3)) == {"tool_0", "tool_1", "tool_2", OVERFLOW_BUCKET, UNKNOWN_TOOL_BUCKET}
        store.compact()
    tools = place.stored(max_tools=3)
    assert set(tools) == {"tool_0", "tool_1", "tool_2", OVERFLOW_BUCKET, UNKNOWN_TOOL_BUCKET}
    assert (tools["tool_1"]["calls"], tools[OVERFLOW_BUCKET]["calls"]) == (2, 8)


def test_background_flush_writes_without_close(place: MetricsPlace) -> None:
    store = place.open(flush_interval=0.01)
    registry_with(store)("flaky", n=2)
    wait_until_stored(place, "flaky", 1)


def test_a_full_queue_wakes_the_flusher_early(place: MetricsPlace) -> None:
    store = place.open(flush_interval=3600, max_pending=10)
    for _ in range(11):
        store.record(result("busy"))
    wait_until_stored(place, "busy", 11)


def test_close_is_idempotent_and_records_after_close_are_kept(place: MetricsPlace) -> None:
    store = place.open(flush_interval=2.0)
    store.record(result("a"))
    store.close()
    store.close()
    store.record(result("a"))
    store.flush()
    assert place.stored()["a"]["calls"] == 2


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"max_tools": 0}, "max_tools must be at least 1"),
        ({"max_pending": -1}, "max_pending must be at least 1"),
        ({"max_buckets": 0}, "max_buckets must be at least 1"),
        ({"flush_interval": 0}, "flush_interval must be positive or None"),
    ],
)
def test_bad_settings_are_rejected(place: MetricsPlace, options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        place.open(**options)
