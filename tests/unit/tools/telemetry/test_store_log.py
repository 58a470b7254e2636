"""MetricsStore's append log: a flush appends one line, compactions fold it in, bad input is refused.

The snapshot is rewritten only by a compaction (the first flush, a log past
``compact_bytes``, ``compact()``); every other flush appends one line to the log the
snapshot names, whatever the number of tools in the file.
"""

from __future__ import annotations

import json
import logging
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from tools import ToolResult
from tools.telemetry import MetricsFileError, MetricsStore


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "metrics.json"


def result(name: str, *, error: str | None = None, duration: float = 1.0) -> ToolResult:
    metadata = {"tool_name": name, "duration_ms": duration, "started_at": datetime.now(timezone.utc).isoformat()}
    if error is None:
        return ToolResult.success(1, metadata)
    return ToolResult.failure(error, "it failed", metadata=metadata)  # type: ignore[arg-type]


def log_of(path: Path) -> Path:
    name: str = json.loads(path.read_text())["log"]
    return path.parent / name


def calls_in(path: Path, tool: str) -> int:
    reader = MetricsStore(path, flush_interval=None)
    try:
        return reader.read_file()[tool].calls
    finally:
        reader.close()


def test_a_flush_appends_one_line_and_leaves_the_snapshot_alone(path: Path) -> None:
    with MetricsStore(path, flush_interval=None) as store:
        for i in range(200):
            store.record(result(f"tool_{i}"))
        store.flush()  # the first flush writes the snapshot
        snapshot = path.read_bytes()
        for flush in range(3):
            store.record(result("tool_7"))
            store.record(result("tool_9", error="timeout"))
            store.flush()
            assert path.read_bytes() == snapshot
            lines = log_of(path).read_bytes().splitlines()
            assert len(lines) == flush + 1
        assert json.loads(lines[-1])["tools"].keys() == {"tool_7", "tool_9"}  # this flush's deltas only
        assert store.stats("tool_7").calls == 4 and store.stats("tool_9").failures == 3
    assert calls_in(path, "tool_9") == 4


def test_a_long_log_is_compacted_into_a_new_snapshot(path: Path) -> None:
    with MetricsStore(path, flush_interval=None, compact_bytes=2_000) as store:
        store.record(result("a"))
        store.flush()
        first_log = log_of(path)
        flushes = 0
        while log_of(path) == first_log:
            store.record(result("a"))
            store.flush()
            flushes += 1
            assert flushes < 100
        assert not first_log.exists()  # folded in and removed
        assert not log_of(path).exists() or log_of(path).stat().st_size == 0
        assert json.loads(path.read_text())["tools"]["a"]["calls"] == flushes + 1
    assert calls_in(path, "a") == flushes + 1
    assert [p.name for p in path.parent.iterdir() if p.name.endswith(".log")] == []


def test_a_torn_last_line_is_skipped_then_cut_before_the_next_append(path: Path) -> None:
    with MetricsStore(path, flush_interval=None) as store:
        store.record(result("a"))
        store.flush()
        store.record(result("a"))
        store.flush()
    log = log_of(path)
    with log.open("ab") as handle:  # what a machine crash mid-append can leave
        handle.write(b'{"tools":{"a":{"calls":100')
    assert calls_in(path, "a") == 2
    with MetricsStore(path, flush_interval=None) as store:
        store.record(result("a"))
    assert log.read_bytes().count(b"\n") == 2 and log.read_bytes().endswith(b"\n")
    assert b"100" not in log.read_bytes()
    assert calls_in(path, "a") == 3


def test_a_corrupt_log_line_is_an_error_then_moved_aside_keeping_the_snapshot(
    path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with MetricsStore(path, flush_interval=None) as store:
        store.record(result("a"))
        store.flush()
        store.record(result("a"))
        store.flush()
    log = log_of(path)
    log.write_bytes(b'{"tools": {"a": {"calls": -5}}}\n' + log.read_bytes())
    reader = MetricsStore(path, flush_interval=None)
    with pytest.raises(MetricsFileError) as caught:
        reader.read_file()
    assert caught.value.reason == "corrupt" and caught.value.path == log
    assert reader.stats("a").calls == 0  # reads log a warning and never repair
    reader.record(result("a"))
    reader.compact()
    reader.close()
    assert len(list(path.parent.glob(f"{log.name}.corrupt-*"))) == 1
    assert calls_in(path, "a") == 2  # the snapshot's call and the new one; the bad log is kept aside
    assert any(str(log) in r.getMessage() for r in caplog.records if r.levelno == logging.ERROR)


@pytest.mark.parametrize("name", ["../../outside.log", "/etc/passwd", "metrics.json.zz.log", "x" * 400])
def test_a_snapshot_naming_a_foreign_log_is_corrupt_and_never_followed(path: Path, name: str) -> None:
    outside = path.parent.parent / "outside.log"
    outside.write_text("keep me\n")
    path.write_text(json.dumps({"version": 2, "log": name, "tools": {"a": {"calls": 5}}}))
    reader = MetricsStore(path, flush_interval=None)
    with pytest.raises(MetricsFileError) as caught:
        reader.read_file()
    assert caught.value.reason == "corrupt"
    reader.record(result("a"))
    reader.close()  # the flush moves the snapshot aside and starts a new one
    assert outside.read_text() == "keep me\n"
    assert len(list(path.parent.glob("metrics.json.corrupt-*"))) == 1
    assert calls_in(path, "a") == 1


def test_a_version_1_file_is_read_and_rewritten_as_version_2(path: Path) -> None:
    entry: dict[str, Any] = {"calls": 5, "successes": 4, "failures": 1, "error_types": {"timeout": 1}}
    path.write_text(json.dumps({"version": 1, "updated_at": "2026-01-01T00:00:00+00:00", "tools": {"a": entry}}))
    with MetricsStore(path, flush_interval=None) as store:
        assert store.stats("a").calls == 5
        store.record(result("a"))
    document = json.loads(path.read_text())
    assert document["version"] == 2 and document["tools"]["a"]["calls"] == 6
    assert document["tools"]["a"]["error_types"] == {"timeout": 1}


def test_reads_follow_other_processes_appends_and_compactions(path: Path) -> None:
    reader = MetricsStore(path, flush_interval=None)
    writer = MetricsStore(path, flush_interval=None, compact_bytes=600)
    try:
        for i in range(1, 30):
            writer.record(result("a", duration=float(i)))
            writer.flush()
            assert reader.stats("a").calls == i  # after appends and after compactions alike
        assert sum(b.calls for b in reader.series("a")) == 29
    finally:
        reader.close()
        writer.close()


def test_a_log_planted_as_a_symbolic_link_is_never_written_through(path: Path, tmp_path: Path) -> None:
    victim = tmp_path / "authorized_keys"
    victim.write_text("ssh-ed25519 AAAA owner\n")
    with MetricsStore(path, flush_interval=None) as store:
        store.record(result("a"))
        store.flush()
        log = log_of(path)
        log.unlink(missing_ok=True)
        log.symlink_to(victim)  # what a hostile checkout could ship in .tooldeck/
        reader = MetricsStore(path, flush_interval=None)
        with pytest.raises(MetricsFileError, match="symbolic link"):
            reader.read_file()
        reader.close()
        store.record(result("a"))
        store.flush()
    assert victim.read_text() == "ssh-ed25519 AAAA owner\n"
    assert calls_in(path, "a") == 2
    assert not log_of(path).is_symlink()
