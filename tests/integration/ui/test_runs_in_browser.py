"""Runs and approvals in a real browser: a run asked in the page pauses for approval, is decided
there, and completes exactly once; a denial reaches the model; a pipeline run is drawn."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from typing import Any

from tests.integration.ui._agents import AgentConsole
from tests.integration.ui._browser import wait_for
from tests.integration.ui._harness import ConsoleHarness
from tools.runs import RecordedStep, RecordedToolCall, RunRecord


def _ask(harness: ConsoleHarness, console: Any, question: str) -> str:
    """Ask ``question`` in the Runs page; wait (live) until its run shows as paused; its id."""
    from selenium.webdriver.common.by import By

    harness.open(console, "/runs")
    browser = harness.browser
    browser.find_element(By.ID, "ask-summary").click()
    browser.find_element(By.ID, "question").send_keys(question)
    browser.find_element(By.ID, "ask-button").click()
    link = "#runs-table tbody tr[data-status='paused'] .run-link"
    (href, *_) = wait_for(browser, lambda d: [e.get_attribute("href") for e in d.find_elements(By.CSS_SELECTOR, link)])
    run_id = str(href).rsplit("/", 1)[1]
    # the runner's last word on it (its state saved, its record told where): nothing moves after this
    wait_for(browser, lambda d: f"asking {question}: paused" in d.find_element(By.CSS_SELECTOR, ".activities").text)
    return run_id


def _held(harness: ConsoleHarness, console: Any, run_id: str) -> str:
    """Open the Approvals page; the held call's text once it shows."""
    from selenium.webdriver.common.by import By

    harness.open(console, "/approvals")
    return str(wait_for(harness.browser, lambda d: d.find_element(By.ID, f"run-{run_id}").text))


def _on_held(harness: ConsoleHarness, run_id: str, css: str, do: Callable[[Any], object]) -> None:
    """``do(element)`` on the held call's element ``css``, found and acted on in one go: a live
    update may replace the part in between (it is then found and done again)."""
    from selenium.webdriver.common.by import By

    wait_for(harness.browser, lambda d: do(d.find_element(By.CSS_SELECTOR, f"#run-{run_id} {css}")) or True)


def _answered(harness: ConsoleHarness, run_id: str) -> str:
    """Wait on the run's page (the redirect after a decision) until the run answered; the answer."""

    browser = harness.browser
    wait_for(browser, lambda d: d.current_url.endswith(f"/runs/{run_id}"))
    (answer,) = wait_for(browser, lambda d: _read(d, "#timeline li.answer"))
    return str(answer[1])


def _read(browser: Any, selector: str) -> list[tuple[str, str]]:
    """Each matching element's title (its ``<b>``) and text, read in one go: a live update may
    replace the part between finding an element and reading it (read again by ``wait_for``)."""
    from selenium.webdriver.common.by import By

    out = []
    for element in browser.find_elements(By.CSS_SELECTOR, selector):
        titles = element.find_elements(By.TAG_NAME, "b")
        out.append((titles[0].text if titles else "", element.text))
    return out


def test_a_paused_run_is_approved_in_the_page_and_completes_once(harness: ConsoleHarness, shoot: Any) -> None:
    from selenium.webdriver.common.by import By

    agents = AgentConsole(harness)
    console = harness.start(agents.sources())
    run_id = _ask(harness, console, "buy milk")
    wait_for(harness.browser, lambda d: d.find_element(By.ID, "pending-count").text == "1")
    assert agents.written == []
    shoot("runs")
    held = _held(harness, console, run_id)
    assert "write_note" in held
    assert '"text": "buy milk"' in held
    shoot("approvals")
    _on_held(harness, run_id, ".approve-button", lambda button: button.click())
    answer = _answered(harness, run_id)
    assert "wrote 'buy milk'" in answer
    assert agents.written == ["buy milk"]
    items = wait_for(harness.browser, lambda d: _read(d, "#timeline > li"))
    titles = [title for title, _ in items]
    assert titles == [
        "question",
        "model turn 1",
        "write_note: approved (resume)",  # who decided, before the call it let run
        "write_note",
        "model turn 2: the answer",
    ]
    assert "wrote 'buy milk'" in items[3][1]  # the call's result, as the model read it
    shoot("run")
    # The same decision again (a second tab, a replayed request): refused, nothing runs.
    harness.refusals_expected = True
    status = harness.browser.execute_script(
        "const body = new URLSearchParams({decision: 'approve', arguments_hash: 'a'.repeat(64)});"
        "return fetch(arguments[0], {method: 'POST', body: body,"
        " headers: {'X-CSRF-Token': window.tooldeckConsole.csrfToken}}).then(r => r.status);",
        f"/approvals/{run_id}/call_1",
    )
    assert status == 409
    assert agents.written == ["buy milk"]
    record = agents.runs.get(run_id)
    assert record is not None
    assert record.status == "answered"
    assert [(a.decision, a.decided_by) for a in record.approvals] == [("approved", "resume")]


def test_a_denied_call_is_answered_with_the_persons_words(harness: ConsoleHarness) -> None:

    agents = AgentConsole(harness)
    console = harness.start(agents.sources())
    run_id = _ask(harness, console, "delete every note")
    _held(harness, console, run_id)
    _on_held(harness, run_id, ".deny-message", lambda box: (box.clear(), box.send_keys("not today")))
    _on_held(harness, run_id, ".deny-button", lambda button: button.click())
    answer = _answered(harness, run_id)
    assert "was not approved: not today" in answer  # what the model read
    assert "permission_denied" in answer
    assert agents.deleted == []


def test_edited_arguments_are_what_runs(harness: ConsoleHarness) -> None:

    agents = AgentConsole(harness)
    console = harness.start(agents.sources())
    run_id = _ask(harness, console, "buy milk")
    _held(harness, console, run_id)
    _on_held(harness, run_id, "details.edit summary", lambda summary: summary.click())
    edited = json.dumps({"text": "buy oat milk"})
    _on_held(harness, run_id, ".edit-arguments", lambda box: (box.clear(), box.send_keys(edited)))
    _on_held(harness, run_id, ".edit-button", lambda button: button.click())
    assert "wrote 'buy oat milk'" in _answered(harness, run_id)
    assert agents.written == ["buy oat milk"]


def test_a_pipeline_run_is_drawn_cycle_by_cycle(harness: ConsoleHarness, shoot: Any) -> None:
    from selenium.webdriver.common.by import By

    agents = AgentConsole(harness)
    now = datetime.now(timezone.utc)
    edit = RecordedToolCall(name="edit", arguments={"path": "calc.py"}, status="success", agent="coder")
    steps = [
        RecordedStep(cycle=1, agent="coder", turns=4, changed_files=["calc.py"], tool_calls=[edit], duration_ms=900),
        RecordedStep(cycle=1, agent="test-writer", turns=3, changed_files=["test_calc.py"], duration_ms=700),
        RecordedStep(cycle=1, agent="reviewer", turns=2, verdict="REJECT", duration_ms=400,
                     findings=["BLOCKER calc.py:3 divides by zero <when b is 0>"]),
        RecordedStep(cycle=2, agent="coder", turns=2, changed_files=["calc.py"], duration_ms=500),
        RecordedStep(cycle=2, agent="test-writer", turns=1, duration_ms=300),
        RecordedStep(cycle=2, agent="reviewer", turns=1, verdict="APPROVE", duration_ms=200),
    ]  # fmt: skip
    validation = {
        "summary": "passed",
        "message": "2 checks passed",
        "checks": [
            {"name": "pytest", "command": "python -m pytest -q", "status": "passed", "exit_code": 0,
             "duration_ms": 1200.0, "output": "2 passed"},
            {"name": "ruff", "command": "ruff check .", "status": "passed", "exit_code": 0, "duration_ms": 80.0},
        ],
    }  # fmt: skip
    record = RunRecord(
        id="pipe_1", kind="pipeline", status="approved", question="add a divide function", agent="pipeline",
        model="a local model", started_at=now - timedelta(seconds=30), updated_at=now, duration_ms=3000, steps=steps,
        cycles=2, max_cycles=3, verdicts=["REJECT", "APPROVE"], validation=validation, answer="done",
    )  # fmt: skip
    agents.runs.save(record)
    console = harness.start(agents.sources())
    harness.open(console, "/runs/pipe_1")
    browser = harness.browser
    verdicts = [v.text for v in browser.find_elements(By.CSS_SELECTOR, ".cycle h3 .verdict")]
    assert verdicts == ["REJECT", "APPROVE"]
    first = browser.find_element(By.ID, "cycle-1")
    assert [s.find_element(By.TAG_NAME, "b").text for s in first.find_elements(By.CSS_SELECTOR, ".step")] == [
        "coder",
        "test-writer",
        "reviewer",
    ]
    assert "divides by zero <when b is 0>" in first.text
    assert "python -m pytest -q" in browser.find_element(By.ID, "validation").text
    shoot("run-pipeline")
