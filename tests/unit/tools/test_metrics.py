"""Metrics: per-tool figures, degraded tools, atomic snapshots."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from tools import InMemoryMetrics, LocalToolRegistry, ToolError


def flaky(n: int) -> int:
    """Fail on odd numbers."""
    if n % 2:
        raise ToolError("odd")
    return n


def test_figures_and_degraded(tmp_path: Path) -> None:
    metrics = InMemoryMetrics()
    registry = LocalToolRegistry(metrics=metrics, failure_threshold=100)
    registry.register(flaky)
    for n in range(10):
        registry("flaky", n=n)
    registry("flaky", n="x")
    registry("nope")
    stats = metrics.stats("flaky")
    assert (stats.calls, stats.successes, stats.failures) == (11, 5, 6)
    assert stats.error_types == {"execution_error": 5, "validation_error": 1}
    assert stats.avg_duration_ms >= 0
    snapshot = metrics.snapshot()
    assert snapshot["nope"]["error_types"] == {"unknown_tool": 1}
    assert snapshot["flaky"]["success_rate"] == round(5 / 11, 4)
    assert metrics.degraded_tools(threshold=0.5) == ["flaky"]  # "nope" has too few calls to judge


def test_write_json_is_atomic_under_concurrent_writers(tmp_path: Path) -> None:
    metrics = InMemoryMetrics()
    registry = LocalToolRegistry(metrics=metrics)
    registry.register(flaky)
    target = tmp_path / "metrics" / "tools.json"

    def writer() -> None:
        for n in range(20):
            registry("flaky", n=n * 2)
            metrics.write_json(target)

    torn: list[str] = []
    done = threading.Event()

    def reader() -> None:
        while not done.is_set():
            if target.exists():
                text = target.read_text()
                try:
                    json.loads(text)
                except ValueError:
                    torn.append(text)

    threads = [threading.Thread(target=writer) for _ in range(8)]
    watcher = threading.Thread(target=reader)
    watcher.start()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    done.set()
    watcher.join()
    assert torn == []  # a reader never saw a half-written file
    metrics.write_json(target)
    assert json.loads(target.read_text())["flaky"]["calls"] == 160
    assert [p.name for p in target.parent.iterdir()] == ["tools.json"]  # no temp files left


def test_a_broken_sink_never_breaks_a_call(caplog: pytest.LogCaptureFixture) -> None:
    class Broken:
        def record(self, result: object) -> None:
            raise RuntimeError("disk full")

    registry = LocalToolRegistry(metrics=Broken())
    registry.register(flaky)
    assert registry("flaky", n=2)["data"] == 2
    assert "metrics sink failed" in caplog.text


def test_long_description_warns(caplog: pytest.LogCaptureFixture) -> None:
    registry = LocalToolRegistry()
    registry.register(flaky, name="wordy", description="x" * 2000)
    assert "2000 characters" in caplog.text
