"""MetricsStore: figures, persistence, bounded cardinality, corrupt files, failing disks."""

from __future__ import annotations

import json
import logging
import os
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from filelock import FileLock
from pytest_mock import MockerFixture

from tools import LocalToolRegistry, ToolError, ToolResult
from tools.telemetry import OVERFLOW_BUCKET, UNKNOWN_TOOL_BUCKET, MetricsFileError, MetricsStore


def flaky(n: int) -> int:
    """Fail on odd numbers."""
    if n % 2:
        raise ToolError(f"odd number {n}; Authorization: Bearer abcdef1234567890")
    return n


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / ".tooldeck" / "metrics.json"


def registry_with(store: MetricsStore) -> LocalToolRegistry:
    registry = LocalToolRegistry(metrics=store, failure_threshold=1000)
    registry.register(flaky)
    return registry


def result(name: Any, *, error: str | None = None, duration: Any = 1.0, started: Any = None) -> ToolResult:
    metadata = {"tool_name": name, "duration_ms": duration, "started_at": started or "2026-01-01T00:00:00+00:00"}
    if error is None:
        return ToolResult.success(1, metadata)
    return ToolResult.failure(error, "it failed", metadata=metadata)  # type: ignore[arg-type]


def file_tools(path: Path) -> dict[str, Any]:
    """What the file holds (snapshot and log), as another process reads it back."""
    assert json.loads(path.read_text())["version"] == 2
    reader = MetricsStore(path, flush_interval=None)
    try:
        return {name: stats.to_dict() for name, stats in reader.read_file().items()}
    finally:
        reader.close()


def test_every_call_path_is_recorded_and_persisted_on_close(path: Path) -> None:
    with MetricsStore(path, flush_interval=None) as store:
        registry = registry_with(store)
        for n in range(6):
            registry("flaky", n=n)  # 3 successes, 3 execution errors
        registry.call_tool("flaky", n="x")  # validation_error
        registry.get("flaky")(n=2)  # type: ignore[misc]
        assert not path.exists()  # nothing written on the hot path
    figures = file_tools(path)["flaky"]
    assert {k: figures[k] for k in ("calls", "successes", "failures", "error_types", "last_error_type")} == {
        "calls": 8,
        "successes": 4,
        "failures": 4,
        "error_types": {"execution_error": 3, "validation_error": 1},
        "last_error_type": "validation_error",
    }
    assert figures["success_rate"] == 0.5
    assert figures["last_success"] is not None and figures["last_failure"] is not None


def test_success_rate_avg_duration_and_degraded(path: Path) -> None:
    with MetricsStore(path, flush_interval=None) as store:
        assert store.success_rate("never") == 0.0  # no calls: 0.0, not 1.0
        assert store.avg_duration_ms("never") == 0.0
        for duration in (10.0, 30.0):
            store.record(result("slow", duration=duration))
        store.record(result("slow", error="timeout", duration=5000.0))
        for _ in range(4):
            store.record(result("bad", error="upstream_error"))
        store.record(result("bad"))
        store.record(result("few", error="execution_error"))
        assert store.avg_duration_ms("slow") == 20.0  # over successes only
        assert store.success_rate("slow") == pytest.approx(2 / 3)
        assert store.stats("slow").invocations == 3
        assert store.get_degraded() == ["bad"]  # "few" has too few calls, "slow" has only 3
        assert store.get_degraded(threshold=0.7, min_calls=3) == ["bad", "slow"]
        store.flush()
        assert store.get_degraded() == ["bad"]  # the same figures once read back from the file


def test_figures_accumulate_across_store_instances(path: Path) -> None:
    for _ in range(3):
        with MetricsStore(path, flush_interval=None) as store:
            registry_with(store)("flaky", n=2)
    with MetricsStore(path, flush_interval=None) as store:
        assert store.stats("flaky").calls == 3
        store.record(result("flaky"))
        assert store.stats("flaky").calls == 4  # the file plus this process's unwritten call


def test_last_error_is_redacted_and_short(path: Path) -> None:
    with MetricsStore(path, flush_interval=None) as store:
        registry_with(store)("flaky", n=1)
        store.record(
            ToolResult.failure(
                "upstream_error",
                "GET https://bob:hunter22@api.example.com failed: api_key=sk-live-0123456789abcdef " + "and more " * 60,
                metadata={"tool_name": "http"},
            )
        )
    tools = file_tools(path)
    assert tools["flaky"]["last_error"] == "odd number 1; Authorization: *** ***"
    http = tools["http"]["last_error"]
    assert "hunter22" not in http and "sk-live" not in http
    assert http.startswith("GET https://***@api.example.com failed: api_key=***")
    assert len(http) == 200 and http.endswith("…")


def test_unknown_tools_share_one_bucket(path: Path) -> None:
    with MetricsStore(path, flush_interval=None) as store:
        registry = registry_with(store)
        for n in range(2000):
            registry(f"made_up_{n}")
        registry.call_tool_raw("x" * 10_000, "{}")
    tools = file_tools(path)
    assert set(tools) == {UNKNOWN_TOOL_BUCKET}
    assert tools[UNKNOWN_TOOL_BUCKET]["calls"] == 2001
    assert tools[UNKNOWN_TOOL_BUCKET]["error_types"] == {"unknown_tool": 2001}


def test_buckets_are_never_degraded(path: Path) -> None:
    with MetricsStore(path, flush_interval=None) as store:
        registry = registry_with(store)
        for _ in range(10):
            registry("nope")
        assert store.get_degraded() == []


@pytest.mark.parametrize(
    "name",
    [None, 42, ["a", "list"], {"a": "dict"}, "y" * 65],
    ids=["none", "int", "list", "dict", "too-long"],
)
def test_hostile_tool_names_in_metadata_go_to_the_unknown_bucket(path: Path, name: Any) -> None:
    with MetricsStore(path, flush_interval=None) as store:
        store.record(result(name))
        store.record(result(name, error="execution_error"))
    assert file_tools(path)[UNKNOWN_TOOL_BUCKET]["calls"] == 2


def test_distinct_tools_are_capped_in_memory_and_in_the_file(path: Path) -> None:
    with MetricsStore(path, flush_interval=None, max_tools=3) as store:
        for n in range(10):
            store.record(result(f"tool_{n}"))
        store.record(result("nope", error="unknown_tool"))
        assert set(store.all_stats()) == {"tool_0", "tool_1", "tool_2", OVERFLOW_BUCKET, UNKNOWN_TOOL_BUCKET}
    with MetricsStore(path, flush_interval=None, max_tools=3) as store:
        store.record(result("tool_1"))
        store.record(result("brand_new"))  # the file is full: counted under the overflow bucket
        store.flush()  # appended to the log: a reader with the same cap folds it the same way
        assert set(store.read_file()) == {"tool_0", "tool_1", "tool_2", OVERFLOW_BUCKET, UNKNOWN_TOOL_BUCKET}
        store.compact()  # and the snapshot itself keeps max_tools entries
    tools = file_tools(path)
    assert set(tools) == {"tool_0", "tool_1", "tool_2", OVERFLOW_BUCKET, UNKNOWN_TOOL_BUCKET}
    assert (tools["tool_1"]["calls"], tools[OVERFLOW_BUCKET]["calls"]) == (2, 8)


def test_background_flush_writes_without_close(path: Path) -> None:
    store = MetricsStore(path, flush_interval=0.01)
    try:
        registry_with(store)("flaky", n=2)
        deadline = time.monotonic() + 30
        while not path.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert file_tools(path)["flaky"]["calls"] == 1
    finally:
        store.close()


def test_a_full_queue_wakes_the_flusher_early(path: Path) -> None:
    store = MetricsStore(path, flush_interval=3600, max_pending=10)
    try:
        for _ in range(11):
            store.record(result("busy"))
        deadline = time.monotonic() + 30
        while not path.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert file_tools(path)["busy"]["calls"] == 11
    finally:
        store.close()


def test_close_is_idempotent_and_records_after_close_are_kept(path: Path) -> None:
    store = MetricsStore(path)
    store.record(result("a"))
    store.close()
    store.close()
    store.record(result("a"))
    store.flush()
    assert file_tools(path)["a"]["calls"] == 2


def test_corrupt_file_is_moved_aside_and_reported(path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path.parent.mkdir(parents=True)
    path.write_text('{"version": 1, "tools": {"a": {"calls": 5')
    with MetricsStore(path, flush_interval=None) as store:
        assert store.stats("a").calls == 0  # a read never replaces the file
        assert path.read_text().startswith('{"version": 1')
        store.record(result("a"))
    asides = list(path.parent.glob("metrics.json.corrupt-*"))
    assert len(asides) == 1
    assert asides[0].read_text() == '{"version": 1, "tools": {"a": {"calls": 5'  # kept, not zeroed
    assert file_tools(path)["a"]["calls"] == 1
    errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1 and str(path) in errors[0] and str(asides[0]) in errors[0]
    assert "not valid JSON" in errors[0]


@pytest.mark.parametrize(
    "text",
    [
        "[]",
        '{"version": 1}',
        '{"version": 1, "tools": {"a": {"calls": -1}}}',
        '{"version": 1, "tools": {"a": {"calls": "many"}}}',
        '{"version": 1, "tools": {"a": {"total_duration_ms": NaN}}}',
        b"\xff\xfe not utf-8",
    ],
    ids=["list", "no-tools", "negative", "string-count", "nan", "bytes"],
)
def test_invalid_files_are_corrupt(path: Path, text: str | bytes) -> None:
    path.parent.mkdir(parents=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    store = MetricsStore(path, flush_interval=None)
    with pytest.raises(MetricsFileError) as caught:
        store.read_file()
    assert caught.value.reason == "corrupt" and caught.value.path == path and str(path) in str(caught.value)
    store.record(result("a"))
    store.close()
    assert file_tools(path)["a"]["calls"] == 1
    assert len(list(path.parent.glob("metrics.json.corrupt-*"))) == 1


def test_a_newer_format_is_never_overwritten(path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path.parent.mkdir(parents=True)
    newer = '{"version": 3, "tools": {"a": {"calls": 5}}, "something": "new"}'
    path.write_text(newer)
    store = MetricsStore(path, flush_interval=None)
    store.record(result("a"))
    with pytest.raises(MetricsFileError, match="newer than this tooldeck") as caught:
        store.flush()
    assert caught.value.reason == "newer"
    store.close()  # logs, never raises
    assert path.read_text() == newer
    assert "1 call(s) not written" in caplog.text


def test_a_failed_write_loses_nothing(path: Path, mocker: MockerFixture) -> None:
    store = MetricsStore(path, flush_interval=None)
    store.record(result("a"))
    mocker.patch("tools.telemetry.store.atomic_write_text", side_effect=OSError(28, "No space left on device"))
    with pytest.raises(OSError, match="No space left"):
        store.flush()
    mocker.stopall()
    store.record(result("a"))
    store.close()
    assert file_tools(path)["a"]["calls"] == 2


def test_background_flush_failures_are_logged_once(
    path: Path, mocker: MockerFixture, caplog: pytest.LogCaptureFixture
) -> None:
    writes = mocker.patch("tools.telemetry.store.atomic_write_text", side_effect=OSError(13, "Permission denied"))
    store = MetricsStore(path, flush_interval=0.005)
    store.record(result("a"))
    deadline = time.monotonic() + 30
    while writes.call_count < 3 and time.monotonic() < deadline:
        time.sleep(0.005)
    mocker.stopall()
    store.close()
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING and "flush failed" in r.getMessage()]
    assert len(warnings) == 1 and "Permission denied" in warnings[0].getMessage()
    assert file_tools(path)["a"]["calls"] == 1


def test_lock_held_too_long_is_a_clear_error(path: Path) -> None:
    path.parent.mkdir(parents=True)
    store = MetricsStore(path, flush_interval=None, lock_timeout=0.05)
    store.record(result("a"))
    with FileLock(str(path) + ".lock"), pytest.raises(MetricsFileError, match=r"held .*metrics\.json\.lock") as caught:
        store.flush()
    assert caught.value.reason == "locked"
    store.close()
    assert file_tools(path)["a"]["calls"] == 1


def test_temp_files_of_killed_writers_are_removed(path: Path) -> None:
    path.parent.mkdir(parents=True)
    leftover = path.parent / ".metrics.json.abc123.tmp"
    leftover.write_text('{"half": ')
    other = path.parent / ".registry.json.abc123.tmp"  # another file's temp: not ours to touch
    other.write_text("x")
    with MetricsStore(path, flush_interval=None) as store:
        store.record(result("a"))
    assert not leftover.exists()
    assert other.exists()


def test_file_layout_is_stable_json(path: Path) -> None:
    now = datetime(2026, 1, 20, tzinfo=timezone.utc)  # both calls are within 30 days of it
    with MetricsStore(path, flush_interval=None, clock=lambda: now) as store:
        store.record(result("b", duration=2))
        store.record(result("a", error="timeout", started="2026-02-02T00:00:00+00:00"))
        store.compact()
    document = json.loads(path.read_text())
    assert list(document) == ["version", "log", "updated_at", "tools", "series"]
    assert document["version"] == 2 and document["log"].startswith("metrics.json.")
    assert list(document["tools"]) == ["a", "b"]
    assert document["tools"]["a"] == {
        "calls": 1,
        "successes": 0,
        "failures": 1,
        "total_duration_ms": 1.0,
        "success_duration_ms": 0.0,
        "error_types": {"timeout": 1},
        "last_success": None,
        "last_failure": "2026-02-02T00:00:00+00:00",
        "last_error": "it failed",
        "last_error_type": "timeout",
        "success_rate": 0.0,
        "avg_duration_ms": 0.0,
    }
    assert document["tools"]["b"]["avg_duration_ms"] == 2.0  # an int duration is accepted
    assert document["series"]["a"] == {
        "2026-02-02T00": {
            "calls": 1,
            "failures": 1,
            "duration_ms": 1.0,
            "max_ms": 1.0,
            "error_types": {"timeout": 1},
            "histogram": [1] + [0] * 15,
        }
    }
    assert list(document["series"]["b"]) == ["2026-01-01T00"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_tools": 0}, "max_tools must be at least 1"),
        ({"max_pending": -1}, "max_pending must be at least 1"),
        ({"flush_interval": 0}, "flush_interval must be positive or None"),
    ],
)
def test_bad_settings_are_rejected(path: Path, kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        MetricsStore(path, **kwargs)


def test_unwritable_directory_is_reported(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    store = MetricsStore(blocker / "metrics.json", flush_interval=None)
    store.record(result("a"))
    with pytest.raises(OSError):
        store.flush()
    store.close()
    assert os.listdir(tmp_path) == ["not-a-dir"]
