"""MetricsStore, what only the file store has: corrupt and newer files, failing disks, the lock,
temp files of killed writers, the file's layout. The contract both stores keep (figures,
accumulation, redaction, bounded cardinality, background flushes) is run against the file and
PostgreSQL in tests/integration/postgres/test_metrics_backends.py."""

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
from tools.metrics import MetricsSink
from tools.telemetry import MetricsFileError, MetricsStore


def flaky(n: int) -> int:
    """Fail on odd numbers."""
    if n % 2:
        raise ToolError(f"odd number {n}; Authorization: Bearer abcdef1234567890")
    return n


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / ".tooldeck" / "metrics.json"


def registry_with(store: MetricsSink) -> LocalToolRegistry:
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


def test_unwritable_directory_is_reported(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    store = MetricsStore(blocker / "metrics.json", flush_interval=None)
    store.record(result("a"))
    with pytest.raises(OSError):
        store.flush()
    store.close()
    assert os.listdir(tmp_path) == ["not-a-dir"]
