"""Every page of a console with data in every store loads in the browser without an error."""

from __future__ import annotations

from dataclasses import replace

from orchestrator.ui._render import NAV
from tests.integration.ui._agents import AgentConsole
from tests.integration.ui._harness import ConsoleHarness
from tools.telemetry import MetricsStore


def test_every_page_loads_with_its_live_updates_on(harness: ConsoleHarness) -> None:
    from selenium.webdriver.common.by import By

    from tests.integration.ui._browser import wait_for

    agents = AgentConsole(harness)
    metrics = MetricsStore(harness.root / "metrics.json", flush_interval=None)
    harness.closers.append(metrics.close)
    sources = replace(agents.sources(), metrics=metrics)
    sources.runner.ask("buy milk")  # type: ignore[union-attr]
    assert sources.runner.wait(120)  # type: ignore[union-attr]
    (run,) = agents.runs.list()
    sources.registry.call_tool("write_note", text="x")  # held at medium: a refusal, counted
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
    assert harness.browser.find_element(By.ID, "pending-count").text == "1"
