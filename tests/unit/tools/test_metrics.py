"""Metrics: per-tool figures, degraded tools, atomic snapshots."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from tools import InMemoryMetrics, LocalToolRegistry, ToolError, ToolResult


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
    assert "nope" not in snapshot  # unknown names are not entries of their own
    assert snapshot["(unknown tool)"]["error_types"] == {"unknown_tool": 1}
    assert snapshot["flaky"]["success_rate"] == round(5 / 11, 4)
    assert metrics.degraded_tools(threshold=0.5) == ["flaky"]


def test_unknown_tool_names_are_one_bucket_and_entries_are_capped() -> None:
    metrics = InMemoryMetrics(max_tools=2)
    registry = LocalToolRegistry(metrics=metrics, failure_threshold=1000)
    registry.register(flaky)
    registry.register(flaky, name="second")
    registry.register(flaky, name="third")
    for n in range(5_000):
        registry(f"hostile_{n}")
    for name in ("flaky", "second", "third", "third"):
        registry(name, n=1)
    assert list(metrics.snapshot()) == ["(other tools)", "(unknown tool)", "flaky", "second"]
    assert metrics.stats("(unknown tool)").calls == 5_000
    assert metrics.stats("(other tools)").calls == 2
    assert metrics.stats("flaky").last_error == "odd"
    assert metrics.degraded_tools(threshold=1.0, min_calls=1) == ["flaky", "second"]  # buckets never degrade


def test_no_calls_means_zero_rate_and_avg_is_over_successes() -> None:
    metrics = InMemoryMetrics()
    assert metrics.stats("never").success_rate == 0.0
    metrics.record(ToolResult.success(1, {"tool_name": "t", "duration_ms": 4.0}))
    metrics.record(ToolResult.failure("timeout", "slow", metadata={"tool_name": "t", "duration_ms": 1000.0}))
    stats = metrics.stats("t")
    assert (stats.success_rate, stats.avg_duration_ms, stats.total_duration_ms) == (0.5, 4.0, 1004.0)
    assert (stats.last_error, stats.last_error_type) == ("slow", "timeout")


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
