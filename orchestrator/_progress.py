"""What ``python -m orchestrator`` shows on a terminal while it works (stderr, rich).

A live line says what is happening now, with the time it has taken so far::

    cycle 1: reviewer, turn 3/3: waiting for smollm2 (12 s)
      running read {"path": "app.py"}
      running index 40% indexed 400 files

A finished tool call leaves one line above it (``✓ read 3.1 ms``, ``✗ web upstream_error
1.2 s``); streamed model text (``--stream``) shows in the live line as it arrives. Nothing is
shown when stderr is not a terminal: the CLI then gives no hooks at all. Everything printed
goes through the safe console (tool and model text cannot drive the terminal).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.text import Text

from orchestrator.graph.hooks import (
    ModelFinished,
    ModelStarted,
    RunHooks,
    StepFinished,
    StepStarted,
    ToolFinished,
    ToolProgress,
    ToolStarted,
)
from tools._terminal import terminal_safe

__all__ = ["ProgressView"]

_STREAM_TAIL = 80
_ARGUMENT_CHARS = 60


@dataclass
class _Call:
    name: str
    arguments: str
    started: float
    fraction: float | None = None
    message: str | None = None


class ProgressView(RunHooks):
    """The live progress display (a `RunHooks`): use it as a context manager around the run.

    Args:
        console: The console on stderr (a ``tools._terminal.SafeConsole``).
        model: The model's name as shown ("waiting for smollm2").
        clock: Seconds (injectable).
    """

    def __init__(self, console: Console, *, model: str, clock: Callable[[], float] = time.monotonic) -> None:
        self.console = console
        self.model = model
        self._clock = clock
        self._lock = threading.Lock()
        self._step: StepStarted | None = None
        self._turn: ModelStarted | None = None
        self._turn_started = 0.0
        self._streamed = ""
        self._calls: dict[str, _Call] = {}
        self._live = Live(self, console=console, transient=True, refresh_per_second=4, redirect_stdout=False)

    def __enter__(self) -> ProgressView:
        self._live.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._live.stop()

    # ------------------------------------------------------------------ rendering

    def __rich__(self) -> RenderableType:
        """The live lines (called by rich's refresh thread)."""
        with self._lock:
            lines = [Text(terminal_safe(self._headline()), style="bold")]
            now = self._clock()
            for call in self._calls.values():
                lines.append(Text("  " + terminal_safe(_running(call, now), newlines=False), style="dim"))
        return Group(*lines)

    def _headline(self) -> str:
        parts = []
        if self._step is not None:
            parts.append(f"cycle {self._step.cycle}: {self._step.agent}")
        turn = self._turn
        if turn is None:
            return ", ".join(parts) + (": starting" if parts else "starting")
        counted = f"turn {turn.turn}/{turn.max_turns}" if self._step is not None else f"turn {turn.turn}"
        seconds = int(self._clock() - self._turn_started)
        if self._calls:
            doing = f"{len(self._calls)} tool call(s) running"
        elif self._streamed:
            tail = " ".join(self._streamed.split())[-_STREAM_TAIL:]
            doing = f"{turn.model or self.model} is answering ({seconds} s): {tail}"
        else:
            doing = f"waiting for {turn.model or self.model} ({seconds} s)"
        return f"{', '.join([*parts, counted]) if parts else counted}: {doing}"

    def _refresh(self) -> None:
        self._live.refresh()

    def _say(self, text: str, style: str = "") -> None:
        self.console.print(Text(terminal_safe(text, newlines=False), style=style))

    # ------------------------------------------------------------------ hooks

    def on_step_start(self, event: StepStarted) -> None:
        """A pipeline step starts."""
        with self._lock:
            self._step, self._turn = event, None
        self._refresh()

    def on_step_end(self, event: StepFinished) -> None:
        """A pipeline step ended: one line, with the verdict of a review (or that it waits for a
        person's approval)."""
        if event.paused:
            seconds = event.duration_ms / 1000
            self._say(f"cycle {event.cycle}: {event.agent} waits for approval ({seconds:.1f} s)", "dim")
            return
        verdict = f", {event.verdict}" if event.verdict else ""
        self._say(f"cycle {event.cycle}: {event.agent} done ({event.duration_ms / 1000:.1f} s{verdict})", "dim")

    def on_model_start(self, event: ModelStarted) -> None:
        """A model request is sent: "turn N: waiting for MODEL (S s)"."""
        with self._lock:
            self._turn, self._turn_started, self._streamed = event, self._clock(), ""
        self._refresh()

    def on_model_delta(self, text: str) -> None:
        """Streamed answer text: its tail shows in the live line."""
        with self._lock:
            self._streamed = (self._streamed + text)[-4 * _STREAM_TAIL :]

    def on_model_end(self, event: ModelFinished) -> None:
        """The model answered."""
        with self._lock:
            self._streamed = ""
        self._refresh()

    def on_tool_start(self, event: ToolStarted) -> None:
        """A tool call starts: it shows in the live lines until it ends."""
        call = _Call(event.name, _compact(event.arguments), self._clock())
        with self._lock:
            self._calls[event.call_id] = call
        self._refresh()

    def on_tool_progress(self, event: ToolProgress) -> None:
        """A running tool reported progress."""
        with self._lock:
            call = self._calls.get(event.call_id or "")
            if call is not None:
                call.fraction, call.message = event.fraction, event.message
        self._refresh()  # reports come at most every 0.1 s per call (tools.progress)

    def on_tool_end(self, event: ToolFinished) -> None:
        """A tool call has its answer: one line stays above the live lines."""
        with self._lock:
            self._calls.pop(event.call_id, None)
        mark, style = ("✓", "green") if event.status == "success" else ("✗", "red")
        what = "" if event.error_type is None else f" {event.error_type}"
        self._say(f"  {mark} {event.name}{what} {_duration(event.duration_ms)}", style)
        self._refresh()


def _running(call: _Call, now: float) -> str:
    progress = ""
    if call.fraction is not None:
        progress += f" {call.fraction:.0%}"
    if call.message:
        progress += f" {call.message}"
    return f"running {call.name} {call.arguments}{progress} ({int(now - call.started)} s)"


def _compact(arguments: Any) -> str:
    import json

    text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False, default=str)
    text = " ".join(text.split())
    return text if len(text) <= _ARGUMENT_CHARS else text[: _ARGUMENT_CHARS - 3] + "..."


def _duration(ms: float) -> str:
    return f"{ms:.1f} ms" if ms < 1000 else f"{ms / 1000:.1f} s"
