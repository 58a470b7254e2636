"""MetricsStore across real processes: exact counts under contention, SIGKILL mid-flush."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tools import ToolResult
from tools.telemetry import UNKNOWN_TOOL_BUCKET, MetricsStore

WORKER = Path(__file__).parent / "workers" / "metrics_worker.py"
REPO_ROOT = Path(__file__).resolve().parents[3]


def env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO_ROOT)}


@pytest.fixture
def spawned() -> Iterator[list[subprocess.Popen[str]]]:
    processes: list[subprocess.Popen[str]] = []
    yield processes
    for process in processes:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=30)
        if process.stdout is not None:
            process.stdout.close()


def spawn(processes: list[subprocess.Popen[str]], *args: str) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [sys.executable, str(WORKER), *args], env=env(), stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    processes.append(process)
    return process


def tools_in(path: Path) -> dict[str, Any]:
    """The figures of the file (snapshot and log) as another process reads them back."""
    document = json.loads(path.read_text())  # raises if torn
    log = path.parent / document["log"]
    if log.exists():
        lines = log.read_bytes().split(b"\n")
        assert lines.pop() == b""  # whole lines only
        assert all(isinstance(json.loads(line), dict) for line in lines)
    reader = MetricsStore(path, flush_interval=None)
    try:
        return {name: stats.to_dict() for name, stats in reader.read_file().items()}
    finally:
        reader.close()


def wait_for(predicate: Any, within: float = 60.0) -> None:
    """Poll until ``predicate()`` holds (bounded; not a timing assertion)."""
    deadline = time.monotonic() + within
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.01)


@pytest.mark.parametrize("compact_bytes", [1_000_000, 3_000], ids=["appends", "compacting"])
def test_eight_processes_500_calls_each_counts_are_exact(
    tmp_path: Path, spawned: list[subprocess.Popen[str]], compact_bytes: int
) -> None:
    path = tmp_path / "metrics.json"
    go = tmp_path / "go"
    workers = [spawn(spawned, "calls", str(path), "500", str(go), str(compact_bytes)) for _ in range(8)]
    go.write_text("")  # all start recording at once
    for worker in workers:
        out, _ = worker.communicate(timeout=300)
        assert worker.returncode == 0 and out.strip() == "done"
    tools = tools_in(path)
    assert set(tools) == {"work", UNKNOWN_TOOL_BUCKET}  # 400 distinct unknown names, one entry
    # Per process: 450 calls to "work" (n % 10 != 9), 100 of them multiples of five (fail);
    # 50 calls to unknown tools.
    work = tools["work"]
    assert (work["calls"], work["successes"], work["failures"]) == (8 * 450, 8 * 350, 8 * 100)
    assert work["error_types"] == {"execution_error": 8 * 100}
    assert tools[UNKNOWN_TOOL_BUCKET]["calls"] == 8 * 50
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []
    logs = [p.name for p in tmp_path.iterdir() if p.name.endswith(".log")]
    assert len(logs) <= 1  # folded logs are removed
    with MetricsStore(path, flush_interval=None) as reader:  # the hours add up to the same calls
        hours = reader.series("work")
        assert sum(b.calls for b in hours) == 8 * 450 and sum(b.failures for b in hours) == 8 * 100


def test_sigkill_between_write_and_rename_leaves_the_previous_file(
    tmp_path: Path, spawned: list[subprocess.Popen[str]]
) -> None:
    path = tmp_path / "metrics.json"
    marker = tmp_path / "in-flush"
    worker = spawn(spawned, "hang-in-rename", str(path), str(marker))
    wait_for(marker.exists)
    before = path.read_text()
    temp = Path(marker.read_text())
    assert temp.exists() and json.loads(temp.read_text())["tools"]["work"]["calls"] == 8  # the new file, complete
    os.killpg(worker.pid, signal.SIGKILL)
    worker.wait(timeout=30)
    assert path.read_text() == before
    assert tools_in(path)["work"]["calls"] == 3
    # The killed process's lock is gone with it, and its temp file is cleaned up.
    with MetricsStore(path, flush_interval=None, lock_timeout=5) as store:
        assert store.stats("work").calls == 3
        store.record(ToolResult.success(1, {"tool_name": "work"}))
        store.flush()  # takes the lock the killed process held
    assert tools_in(path)["work"]["calls"] == 4
    assert not temp.exists()


@pytest.mark.parametrize("when", ["before", "after"])
def test_sigkill_around_an_append_counts_the_line_once_or_not_at_all(
    tmp_path: Path, spawned: list[subprocess.Popen[str]], when: str
) -> None:
    path = tmp_path / "metrics.json"
    marker = tmp_path / "in-append"
    worker = spawn(spawned, "hang-in-append", str(path), str(marker), when)
    wait_for(marker.exists)
    snapshot = path.read_text()
    os.killpg(worker.pid, signal.SIGKILL)
    worker.wait(timeout=30)
    assert path.read_text() == snapshot  # an append never touches the snapshot
    expected = 3 if when == "before" else 8  # a written line is whole: its 5 calls count
    assert tools_in(path)["work"]["calls"] == expected
    with MetricsStore(path, flush_interval=None, lock_timeout=5) as store:
        store.record(ToolResult.success(1, {"tool_name": "work"}))
        store.flush()  # takes the lock the killed process held, appends after its line
        store.compact()
    assert tools_in(path)["work"]["calls"] == expected + 1


def test_sigkill_at_random_moments_never_corrupts_the_file(
    tmp_path: Path, spawned: list[subprocess.Popen[str]]
) -> None:
    path = tmp_path / "metrics.json"
    rng = random.Random(1234)
    total = 0
    for _ in range(6):
        worker = spawn(spawned, "flush-loop", str(path))
        assert worker.stdout is not None
        first = int(worker.stdout.readline())  # at least one flush done
        time.sleep(rng.uniform(0.0, 0.2))
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait(timeout=30)
        rest = [int(line) for line in worker.stdout.read().split()]
        printed = rest[-1] if rest else first
        calls = tools_in(path)["work"]["calls"]  # valid JSON every time
        # Every flush that reported success is in the file; at most the one in flight is too.
        assert total + printed <= calls <= total + printed + 10
        total = calls
    with MetricsStore(path, flush_interval=None, lock_timeout=5) as store:
        assert store.stats("work").calls == total  # a later store reads and extends it


def test_a_process_that_forgets_close_still_flushes_at_exit(
    tmp_path: Path, spawned: list[subprocess.Popen[str]]
) -> None:
    path = tmp_path / "metrics.json"
    worker = spawn(spawned, "no-close", str(path), "7")
    out, _ = worker.communicate(timeout=120)
    assert worker.returncode == 0 and out.strip() == "exiting"
    assert tools_in(path)["work"]["calls"] == 7
