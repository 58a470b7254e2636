"""`RunHooks`: what an agent run tells whoever watches it, as it happens.

Subclass `RunHooks` and override what you need (every method does nothing by default);
give the instance to `AgentGraph(hooks=...)` and `ToolsNode(hooks=...)` (the graph hands
it to the node it builds), or to ``OrchestratorService(hooks=...)``::

    class Printer(RunHooks):
        def on_tool_start(self, event: ToolStarted) -> None:
            print("calling", event.name)

The CLI's progress line (``python -m orchestrator`` on a terminal) is one of these.

Threads: model hooks are called on the run's thread; tool hooks on the thread that runs
the call (a worker thread, or the event loop's), several at once when calls run in
parallel. Keep hooks short and thread-safe; an exception in a hook is logged and ignored,
never the run's failure.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tools.progress import ToolProgress

__all__ = [
    "ModelFinished",
    "ModelStarted",
    "RunHooks",
    "StepFinished",
    "StepStarted",
    "ToolFinished",
    "ToolProgress",
    "ToolStarted",
    "safely",
]

_log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ModelStarted:
    """A model request is sent.

    Attributes:
        agent: The agent type of the run.
        turn: The model turn this request makes (1-based).
        max_turns: The run's budget of model turns.
        model: The model's name (``smollm2``, ``TestModel``, ...).
    """

    agent: str
    turn: int
    max_turns: int
    model: str


@dataclass(frozen=True, slots=True)
class ModelFinished:
    """The model answered a request.

    Attributes:
        agent: The agent type of the run.
        turn: The model turn (1-based).
        duration_ms: How long the request took.
        tool_calls: How many tool calls the answer makes (0: a final answer).
    """

    agent: str
    turn: int
    duration_ms: float
    tool_calls: int


@dataclass(frozen=True, slots=True)
class ToolStarted:
    """A tool call starts running.

    Attributes:
        call_id: The model's ``tool_call`` id.
        name: The tool's name as the model sent it.
        arguments: The arguments as kept in traces (a dict, or the text sent).
    """

    call_id: str
    name: str
    arguments: Any


@dataclass(frozen=True, slots=True)
class ToolFinished:
    """A tool call has its answer (also a timeout, a refusal or a cancellation).

    Attributes:
        call_id: The model's ``tool_call`` id.
        name: The tool's name as the model sent it.
        status: ``success`` or ``error``.
        error_type: The envelope's error type, when it failed.
        duration_ms: From the start of the call to its answer.
    """

    call_id: str
    name: str
    status: str
    error_type: str | None
    duration_ms: float


@dataclass(frozen=True, slots=True)
class StepStarted:
    """A pipeline step starts: one sub-agent's turn at the task.

    Attributes:
        cycle: The review cycle (1-based).
        max_cycles: The pipeline's cycle budget.
        agent: ``coder``, ``test-writer`` or ``reviewer``.
    """

    cycle: int
    max_cycles: int
    agent: str


@dataclass(frozen=True, slots=True)
class StepFinished:
    """A pipeline step ended (or paused: one of its calls waits for a person, and the
    pipeline with it).

    Attributes:
        cycle: The review cycle (1-based).
        agent: The sub-agent.
        duration_ms: How long the step took.
        verdict: The reviewer's decision (``APPROVE``/``REJECT``), for a review step.
        paused: The step did not finish: it waits for a person's approval (the run ends
            ``awaiting_approval``; a resume starts the step again).
    """

    cycle: int
    agent: str
    duration_ms: float
    verdict: str | None = None
    paused: bool = False


class RunHooks:
    """Callbacks of an agent run (all optional: override the ones you need)."""

    def on_step_start(self, event: StepStarted) -> None:
        """A pipeline step starts (pipeline runs only)."""

    def on_step_end(self, event: StepFinished) -> None:
        """A pipeline step ended (pipeline runs only)."""

    def on_model_start(self, event: ModelStarted) -> None:
        """A model request is sent (on the run's thread)."""

    def on_model_delta(self, text: str) -> None:
        """A piece of the model's answer arrived (streaming models only)."""

    def on_model_end(self, event: ModelFinished) -> None:
        """The model answered (on the run's thread)."""

    def on_tool_start(self, event: ToolStarted) -> None:
        """A tool call starts (on the call's thread)."""

    def on_tool_progress(self, event: ToolProgress) -> None:
        """A running tool reported progress (``tools.progress.report_progress``)."""

    def on_tool_end(self, event: ToolFinished) -> None:
        """A tool call has its answer (on the call's thread, or the node's for a timeout)."""


def safely(hook: Callable[[Any], None], event: Any) -> None:
    """Call ``hook(event)``; an exception is logged, never raised into the run."""
    try:
        hook(event)
    except Exception:
        _log.warning("run hook %s failed", getattr(hook, "__qualname__", hook), exc_info=True)
