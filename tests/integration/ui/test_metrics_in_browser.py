"""The Metrics page in a real browser: server-drawn charts, and live updates from another writer."""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from orchestrator.ui import ConsoleSources
from tests.integration.ui._browser import wait_for
from tests.integration.ui._harness import ConsoleHarness
from tools import ToolResult
from tools.telemetry import MetricsStore


def _record(store: MetricsStore, tool: str, hours_ago: int, *, failed: bool, ms: float) -> None:
    at = (datetime.now(timezone.utc) - timedelta(hours=hours_ago)).isoformat()
    metadata = {"tool_name": tool, "duration_ms": ms, "started_at": at}
    if failed:
        store.record(ToolResult.failure("upstream_error", "HTTP 503 from <b>upstream</b>", metadata=metadata))
    else:
        store.record(ToolResult.success(1, metadata=metadata))


@pytest.fixture
def writer(tmp_path: Path) -> Iterator[MetricsStore]:
    """Another process's view of the metrics file (its own store object), with a week of calls."""
    store = MetricsStore(tmp_path / "metrics.json", flush_interval=None)
    rng = random.Random(3)
    for hour in range(7 * 24):
        for _ in range(rng.randint(0, 4)):
            _record(store, "web", hour, failed=rng.random() < 0.3, ms=rng.lognormvariate(5, 0.6))
        for _ in range(rng.randint(0, 2)):
            _record(store, "math_solver", hour, failed=False, ms=rng.lognormvariate(1, 0.3))
    store.flush()
    try:
        yield store
    finally:
        store.close()


def test_metrics_are_charted_and_follow_another_writer_live(
    harness: ConsoleHarness, writer: MetricsStore, shoot: Any
) -> None:
    from selenium.webdriver.common.by import By

    reader = MetricsStore(writer.path, flush_interval=None)
    try:
        console = harness.start(ConsoleSources(registry=harness.registry(), metrics=reader))
        harness.open(console, "/metrics")
        browser = harness.browser
        rows = browser.find_elements(By.CSS_SELECTOR, "#metrics-table tbody tr")
        assert [r.find_element(By.TAG_NAME, "a").text for r in rows] == ["web", "math_solver"]
        assert "rate-fair" in rows[0].get_attribute("innerHTML")  # 70 %: yellow
        assert "rate-good" in rows[1].get_attribute("innerHTML")
        assert len(browser.find_elements(By.CSS_SELECTOR, "#total-chart svg rect.bad")) > 5
        shoot("metrics")
        harness.open(console, "/metrics/web?window=7d")
        assert len(browser.find_elements(By.CSS_SELECTOR, "#calls-chart svg rect.good")) == 28  # 6-hour slots
        assert len(browser.find_elements(By.CSS_SELECTOR, "#latency-chart svg polyline.p95")) >= 1
        assert "<b>upstream</b>" in browser.find_element(By.CSS_SELECTOR, "main").text  # escaped, shown as text
        shoot("metrics-tool")
        wait_for(browser, lambda d: "on" in (d.find_element(By.ID, "live-status").get_attribute("class") or ""))
        before = browser.find_element(By.CSS_SELECTOR, "[data-live='metrics'] p").text
        for _ in range(50):  # another process calls the tool: the page follows without a reload
            _record(writer, "web", 0, failed=False, ms=5.0)
        writer.flush()
        wait_for(browser, lambda d: d.find_element(By.CSS_SELECTOR, "[data-live='metrics'] p").text != before)
        after = wait_for(browser, lambda d: d.find_element(By.CSS_SELECTOR, "[data-live='metrics'] p").text)
        assert int(after.split(" of ")[1].split()[0]) == int(before.split(" of ")[1].split()[0]) + 50
    finally:
        reader.close()
