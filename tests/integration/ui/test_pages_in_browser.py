"""Every page of a console with data in every store loads in the browser without an error;
the screenshots of the Tools, Routing and Settings pages (docs/ui.md, the README) come from here."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from typing import Any

from orchestrator.ui._render import NAV
from tests.integration.ui._agents import AgentConsole
from tests.integration.ui._browser import wait_for
from tests.integration.ui._harness import ConsoleHarness
from tools import ToolResult
from tools.builtin.math import MathSolverTool
from tools.manual import ToolCategory, ToolManual
from tools.telemetry import MetricsStore


def search_docs(query: str, limit: int = 5) -> list[str]:
    """Search the project's documentation.

    Args:
        query: Words to look for.
        limit: Most results.
    """
    return [query][:limit]


def _history(metrics: MetricsStore, names: list[str]) -> None:
    """A week of calls for ``names``: mostly fine, some failing, latencies that vary."""
    rng = random.Random(5)
    now = datetime.now(timezone.utc)
    for index, name in enumerate(names):
        for hour in range(0, 7 * 24, 2):
            at = (now - timedelta(hours=hour)).isoformat()
            for _ in range(rng.randint(0, 3)):
                metadata = {"tool_name": name, "duration_ms": rng.lognormvariate(2 + index, 0.5), "started_at": at}
                if rng.random() < 0.2 * index:
                    metrics.record(ToolResult.failure("upstream_error", "HTTP 503 from upstream", metadata=metadata))
                else:
                    metrics.record(ToolResult.success(1, metadata=metadata))
    metrics.flush()


def test_every_page_loads_with_its_live_updates_on(harness: ConsoleHarness, shoot: Any) -> None:
    from selenium.webdriver.common.by import By

    agents = AgentConsole(harness)
    metrics = MetricsStore(harness.root / "metrics.json", flush_interval=None)
    harness.closers.append(metrics.close)
    sources = replace(agents.sources(), metrics=metrics)
    sources.registry.register(MathSolverTool())
    manual = ToolManual(name="search_docs", category=ToolCategory.SEARCH, risk="safe", mutating=False)
    sources.registry.register(search_docs, manual=manual)
    _history(metrics, ["math_solver", "search_docs", "write_note"])
    sources.runner.ask("buy milk")  # type: ignore[union-attr]
    assert sources.runner.wait(120)  # type: ignore[union-attr]
    (run,) = agents.runs.list()
    console = harness.start(sources)
    pages = [path for path, _ in NAV] + [
        "/tools/write_note",
        "/routing/coder",
        f"/runs/{run.id}",
        "/runs?status=paused",
        "/metrics/write_note?window=24h",
    ]
    for path in pages:
        harness.open(console, path)
        browser = harness.browser
        assert browser.find_element(By.TAG_NAME, "h1").text, path
        wait_for(browser, lambda d: "on" in (d.find_element(By.ID, "live-status").get_attribute("class") or ""))
        if path in ("/tools", "/routing", "/settings"):
            shoot(path.strip("/"))
    wait_for(harness.browser, lambda d: d.find_element(By.ID, "pending-count").text == "1")
