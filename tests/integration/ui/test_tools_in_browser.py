"""The Tools, Routing and Settings pages in a real headless Chromium."""

from __future__ import annotations

from typing import Any

import pytest

from orchestrator.stored_settings import SettingsFile
from orchestrator.ui import ConsoleSources
from tests.integration.ui._browser import wait_for
from tests.integration.ui._harness import ConsoleHarness
from tools import LocalToolRegistry
from tools.approvals import FreedomLevel
from tools.builtin.math import MathSolverTool
from tools.manual import ToolCategory, ToolManual

HOSTILE = '<script>window.pwned = 1</script></script><img src=x onerror="window.pwned = 2">'


def _registry(harness: ConsoleHarness, written: list[str]) -> LocalToolRegistry:
    registry = harness.registry()
    registry.register(MathSolverTool())

    def write_note(text: str) -> dict[str, str]:
        """Write a note in the user's notebook.

        Args:
            text: What to write.
        """
        written.append(text)
        return {"written": text}

    def echo_html(text: str) -> dict[str, str]:
        """Echo text back, with some HTML of its own.

        Args:
            text: Anything.
        """
        return {"html": HOSTILE, "link": "javascript:window.pwned = 3", "echo": text}

    registry.register(write_note)  # undeclared: moderate, so it asks at the default level
    registry.register(
        echo_html,
        manual=ToolManual(name="echo_html", category=ToolCategory.SEARCH, risk="safe", mutating=False),
    )
    return registry


def _call_form(browser: Any, value: str) -> None:
    from selenium.webdriver.common.by import By

    field = browser.find_element(By.ID, "f-text")
    field.clear()
    field.send_keys(value)
    browser.find_element(By.ID, "call-button").click()


def test_the_tools_page_lists_every_tool_with_its_manual_and_filters(harness: ConsoleHarness) -> None:
    from selenium.webdriver.common.by import By

    console = harness.start(ConsoleSources(registry=_registry(harness, []), settings=harness.settings()))
    harness.open(console, "/tools")
    browser = harness.browser
    rows = browser.find_elements(By.CSS_SELECTOR, "#tools-table tbody tr")
    assert [row.find_element(By.CSS_SELECTOR, ".tool-name").text for row in rows] == [
        "math_solver",
        "write_note",
        "echo_html",
    ]
    cells = {row.find_element(By.CSS_SELECTOR, ".tool-name").text: row.text for row in rows}
    assert "moderate default" in cells["write_note"]  # undeclared: fail-closed default, and said so
    assert "safe operator" in cells["echo_html"]  # declared at registration
    browser.find_element(By.ID, "tool-filter").send_keys("search")
    wait_for(browser, lambda d: len([r for r in rows if r.is_displayed()]) == 1)
    assert [r.find_element(By.CSS_SELECTOR, ".tool-name").text for r in rows if r.is_displayed()] == ["echo_html"]


def test_a_tool_is_called_from_its_form_and_a_held_call_runs_once_when_approved(
    harness: ConsoleHarness, shoot: Any
) -> None:
    from selenium.webdriver.common.by import By

    written: list[str] = []
    console = harness.start(ConsoleSources(registry=_registry(harness, written), settings=harness.settings()))
    harness.open(console, "/tools/write_note")
    browser = harness.browser
    _call_form(browser, "buy milk")
    panel = wait_for(browser, lambda d: d.find_element(By.ID, "approval-needed"))
    assert "moderate" in panel.text
    assert "need a person's approval at freedom level medium" in panel.text
    assert written == []  # shown, not run
    shoot("tool-approval")
    browser.find_element(By.ID, "approve-once").click()
    data = wait_for(browser, lambda d: d.find_element(By.ID, "result-data"))
    assert '"written": "buy milk"' in data.text
    assert written == ["buy milk"]
    harness.open(console, "/tools/write_note")  # back to the tool: nothing runs again
    assert written == ["buy milk"]


def test_a_tool_result_holding_script_shows_as_text(harness: ConsoleHarness, shoot: Any) -> None:
    from selenium.common.exceptions import NoAlertPresentException
    from selenium.webdriver.common.by import By

    console = harness.start(ConsoleSources(registry=_registry(harness, []), settings=harness.settings()))
    harness.open(console, "/tools/echo_html")
    browser = harness.browser
    _call_form(browser, "<script>window.pwned = 4</script>")
    data = wait_for(browser, lambda d: d.find_element(By.ID, "result-data"))
    assert HOSTILE.replace('"', '\\"') in data.text  # the text itself, JSON-quoted
    assert "javascript:window.pwned = 3" in data.text
    assert "<script>window.pwned = 4</script>" in data.text
    assert browser.execute_script("return typeof window.pwned") == "undefined"
    assert browser.execute_script("return document.querySelectorAll('script').length") == 1  # console.js only
    assert browser.execute_script("return document.querySelectorAll('img').length") == 0
    assert browser.find_elements(By.CSS_SELECTOR, "a[href^='javascript']") == []
    with pytest.raises(NoAlertPresentException):
        browser.switch_to.alert.text  # noqa: B018 - reading it is the check
    shoot("tool-result")


def test_the_routing_matrix_explains_a_cell_when_clicked(harness: ConsoleHarness) -> None:
    from selenium.webdriver.common.by import By

    console = harness.start(ConsoleSources(registry=_registry(harness, []), settings=harness.settings()))
    harness.open(console, "/routing")
    browser = harness.browser
    headers = [th.text for th in browser.find_elements(By.CSS_SELECTOR, "#routing-matrix th.agent")]
    assert headers[:2] == ["main", "plan"]
    assert len(browser.find_elements(By.CSS_SELECTOR, "#token-bars svg rect.bar")) == len(headers)
    first = browser.find_element(By.CSS_SELECTOR, "#routing-matrix tbody tr .cell-button")
    first.click()
    text = wait_for(browser, lambda d: d.find_element(By.ID, "explain-text").text)
    assert text.startswith("main · math_solver: included at step")
    browser.find_element(By.LINK_TEXT, "reviewer").click()
    full = wait_for(browser, lambda d: d.find_element(By.ID, "explain-text-full")).text
    assert full.startswith("1. profile: 'reviewer'")
    assert "read-only" in full


def test_settings_are_validated_beside_their_field_and_persisted(harness: ConsoleHarness, shoot: Any) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    console = harness.start(ConsoleSources(registry=_registry(harness, []), settings=harness.settings()))
    harness.open(console, "/settings")
    browser = harness.browser
    Select(browser.find_element(By.ID, "freedom")).select_by_value("high")
    iterations = browser.find_element(By.ID, "iterations")
    iterations.clear()
    iterations.send_keys("11")
    browser.find_element(By.ID, "save-settings").click()
    error = wait_for(browser, lambda d: d.find_element(By.ID, "iterations-error"))
    assert "less than or equal to 10" in error.text
    assert harness.approvals.freedom() is None  # nothing saved: the form is saved whole or not at all
    shoot("settings-error")
    iterations = browser.find_element(By.ID, "iterations")
    iterations.clear()
    iterations.send_keys("5")
    browser.find_element(By.ID, "save-settings").click()
    wait_for(browser, lambda d: d.find_element(By.ID, "saved"))
    assert harness.approvals.freedom() is FreedomLevel.HIGH
    assert SettingsFile.from_env(harness.env).load().max_subagent_iterations == 5
    harness.open(console, "/settings")
    assert Select(browser.find_element(By.ID, "freedom")).first_selected_option.get_attribute("value") == "high"
    assert browser.find_element(By.ID, "iterations").get_attribute("value") == "5"
