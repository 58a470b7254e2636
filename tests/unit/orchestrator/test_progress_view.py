"""The live progress lines (``orchestrator._progress.ProgressView``): what each event shows, with
time injected, streamed text, pipeline steps, and tool output that cannot drive the terminal."""

from __future__ import annotations

import io

from orchestrator._progress import ProgressView
from orchestrator.graph.hooks import (
    ModelFinished,
    ModelStarted,
    StepFinished,
    StepStarted,
    ToolFinished,
    ToolProgress,
    ToolStarted,
)
from tools._terminal import SafeConsole


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def view() -> tuple[ProgressView, Clock, io.StringIO]:
    out = io.StringIO()
    console = SafeConsole(file=out, width=200, force_terminal=False, color_system=None)
    clock = Clock()
    return ProgressView(console, model="the model", clock=clock), clock, out


def live(progress: ProgressView) -> list[str]:
    """The live lines as they would be drawn now."""
    out = io.StringIO()
    SafeConsole(file=out, width=200, color_system=None).print(progress)
    return out.getvalue().splitlines()


def test_a_turn_shows_the_model_and_the_time_waited() -> None:
    progress, clock, _ = view()
    assert live(progress) == ["starting"]
    progress.on_model_start(ModelStarted("main", 2, 10, "smollm2"))
    clock.now += 12.4
    assert live(progress) == ["turn 2: waiting for smollm2 (12 s)"]
    progress.on_model_delta("The answer ")
    progress.on_model_delta("is 5.")
    assert live(progress) == ["turn 2: smollm2 is answering (12 s): The answer is 5."]
    progress.on_model_end(ModelFinished("main", 2, 12_400.0, 0))
    assert live(progress) == ["turn 2: waiting for smollm2 (12 s)"]


def test_tool_calls_show_while_running_and_leave_a_line_when_done() -> None:
    progress, clock, out = view()
    progress.on_model_start(ModelStarted("main", 1, 10, "test"))
    progress.on_tool_start(ToolStarted("c1", "index", {"files": 400}))
    progress.on_tool_start(ToolStarted("c2", "web", {"query": "x" * 200}))
    clock.now += 3
    progress.on_tool_progress(ToolProgress("index", "c1", 0.4, "indexed 160 files"))
    lines = live(progress)
    assert lines[0] == "turn 1: 2 tool call(s) running"
    assert lines[1] == '  running index {"files": 400} 40% indexed 160 files (3 s)'
    assert lines[2] == '  running web {"query": "' + "x" * 46 + "... (3 s)"  # long arguments cut
    progress.on_tool_end(ToolFinished("c1", "index", "success", None, 3012.5))
    progress.on_tool_end(ToolFinished("c2", "web", "error", "upstream_error", 80.25))
    assert out.getvalue().splitlines() == ["  ✓ index 3.0 s", "  ✗ web upstream_error 80.2 ms"]
    assert live(progress) == ["turn 1: waiting for test (3 s)"]


def test_pipeline_steps_show_the_cycle_agent_and_turn_budget() -> None:
    progress, clock, out = view()
    progress.on_step_start(StepStarted(1, 3, "reviewer"))
    assert live(progress) == ["cycle 1: reviewer: starting"]
    progress.on_model_start(ModelStarted("reviewer", 3, 3, "smollm2"))
    clock.now += 12
    assert live(progress) == ["cycle 1: reviewer, turn 3/3: waiting for smollm2 (12 s)"]
    progress.on_step_end(StepFinished(1, "reviewer", 41_000.0, "REJECT"))
    assert out.getvalue() == "cycle 1: reviewer done (41.0 s, REJECT)\n"


def test_a_step_that_pauses_says_it_waits_for_approval() -> None:
    progress, _, out = view()
    progress.on_step_start(StepStarted(2, 3, "coder"))
    progress.on_step_end(StepFinished(2, "coder", 5_500.0, paused=True))
    assert out.getvalue() == "cycle 2: coder waits for approval (5.5 s)\n"


def test_tool_text_cannot_drive_the_terminal() -> None:
    progress, _, out = view()
    progress.on_model_start(ModelStarted("main", 1, 10, "m\x1b[2J"))
    progress.on_tool_start(ToolStarted("c1", "evil\x1b]52;c;aGk=\x07", "\x1b[1;1H"))
    progress.on_tool_progress(ToolProgress("evil", "c1", None, "\x9b31m red"))
    progress.on_model_delta("\x1b]0;title\x07")
    rendered = "\n".join(live(progress))
    progress.on_tool_end(ToolFinished("c1", "evil\x1b]52;c;aGk=\x07", "success", None, 1.0))
    everything = rendered + out.getvalue()
    assert not any(ch in everything for ch in "\x1b\x07\x9b")
    assert "\\x1b]52;c;aGk=\\x07" in everything
