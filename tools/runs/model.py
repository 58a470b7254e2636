"""`RunRecord`: what is kept of one agent run or pipeline run, for people to see again.

A record is plain, JSON-serialisable data (pydantic; ``record.model_dump(mode="json")``
is the stored form, schema ``version`` 1). It holds no objects of the orchestrator: the
orchestrator builds records, ``tooldeck runs`` and the console read them, and neither side
imports the other. Every text field is bounded, so a record stays small whatever a model or
a tool produced; secrets are masked before a record is stored (`redacted`).
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "FORMAT_VERSION",
    "RUN_STATUSES",
    "RecordedApproval",
    "RecordedStep",
    "RecordedToolCall",
    "RunKind",
    "RunRecord",
    "RunStatus",
    "bounded_arguments",
    "bounded_text",
]

FORMAT_VERSION = 1

RunKind = Literal["agent", "pipeline"]
RunStatus = Literal[
    "running", "answered", "budget_exhausted", "paused", "failed", "approved", "rejected", "validation_failed"
]
"""Agent runs: ``answered`` (a final answer), ``budget_exhausted`` (the turns ran out),
``paused`` (calls wait for a person's approval), ``failed`` (the model endpoint or the run
failed). Pipeline runs: ``approved``, ``rejected``, ``validation_failed``, ``failed``, and
``paused`` (a step's call waits for a person's approval).
``running`` while a run is under way."""
RUN_STATUSES: tuple[str, ...] = RunStatus.__args__  # type: ignore[attr-defined]

#: Bounds of what a record keeps.
MAX_TEXT_CHARS = 20_000
MAX_ARGUMENT_CHARS = 4_000
MAX_TOOL_CALLS = 500


def bounded_text(text: str | None, limit: int = MAX_TEXT_CHARS) -> str | None:
    """``text`` cut to ``limit`` characters, saying how many were left out."""
    if text is None or len(text) <= limit:
        return text
    return text[:limit] + f"... ({len(text) - limit} more characters not kept)"


def bounded_arguments(arguments: Any, limit: int = MAX_ARGUMENT_CHARS) -> Any:
    """Tool-call arguments as kept: the value when its JSON fits ``limit``, else cut JSON text."""
    try:
        text = json.dumps(arguments, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        text = str(arguments)
    if len(text) <= limit:
        return arguments
    return bounded_text(text, limit)


class _Record(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class RecordedToolCall(_Record):
    """One tool call of a run.

    Attributes:
        call_id: The model's ``tool_call`` id.
        name: The tool's name as called.
        arguments: The arguments (secrets masked, bounded).
        status: ``success`` or ``error``.
        error_type: The envelope's error type when it failed.
        duration_ms: How long the call took.
        agent: The agent that made it (pipeline runs).
    """

    call_id: str = ""
    name: str
    arguments: Any = None
    status: str
    error_type: str | None = None
    duration_ms: float = 0.0
    agent: str | None = None


class RecordedApproval(_Record):
    """A call that needed a person's approval, and what was decided.

    Attributes:
        call_id: The held call.
        tool: Its tool.
        risk: The tool's risk (``safe``, ``moderate``, ``dangerous``).
        reason: Why it needed approval.
        arguments: The arguments shown (secrets masked, bounded).
        arguments_hash: What an approval is bound to.
        decision: ``pending`` (the run is paused on it), ``approved`` or ``denied``.
        decided_by: ``terminal`` (asked at the terminal), ``resume`` (decided when the paused
            run was continued) or ``approver`` (an application's approver).
        at: When it was decided.
    """

    call_id: str
    tool: str
    risk: str | None = None
    reason: str | None = None
    arguments: Any = None
    arguments_hash: str | None = None
    decision: Literal["pending", "approved", "denied"]
    decided_by: str | None = None
    at: datetime | None = None


class RecordedStep(_Record):
    """One sub-agent step of a pipeline run."""

    cycle: int
    agent: str
    turns: int = 0
    stop_reason: str = ""
    answer: str | None = None
    tool_calls: list[RecordedToolCall] = Field(default_factory=list)
    changed_files: list[str] = Field(default_factory=list)
    verdict: str | None = None
    findings: list[str] = Field(default_factory=list)
    duration_ms: float = 0.0


class RunRecord(_Record):
    """One agent run or pipeline run, as stored (see the module docstring).

    Attributes:
        version: The record format version.
        id: The run's id (``run_`` and 32 hex digits for agent runs); a file name, so
            letters, digits, ``_`` and ``-`` only.
        kind: ``agent`` or ``pipeline``.
        status: See `RunStatus`.
        question: The question (the pipeline's task).
        agent: The agent type.
        model: The model, described without secrets (``smollm2 at http://...``).
        started_at: When the run started (UTC).
        updated_at: When this record was last written (UTC).
        duration_ms: Time spent running (time waiting for a person not counted).
        turns: Model turns.
        tool_calls: Every tool call, in order (at most `MAX_TOOL_CALLS`).
        omitted_tool_calls: Calls beyond that bound, counted only.
        approvals: Calls that needed approval and their decisions.
        answer: The final answer.
        error: Why the run failed.
        state_file: Where a paused run's state is saved (``--resume``).
        workspace: The workspace of a pipeline run or a workspace agent.
        steps: A pipeline's steps.
        cycles: A pipeline's review cycles run.
        max_cycles: A pipeline's cycle budget.
        verdicts: Each review's decision (``APPROVE``/``REJECT``).
        validation: The pipeline's validation report.
    """

    version: int = FORMAT_VERSION
    id: str = Field(pattern=r"^[A-Za-z0-9_-]{1,80}$")
    kind: RunKind = "agent"
    status: RunStatus
    question: str = ""
    agent: str = "main"
    model: str = ""
    started_at: datetime
    updated_at: datetime
    duration_ms: float = 0.0
    turns: int = 0
    tool_calls: list[RecordedToolCall] = Field(default_factory=list)
    omitted_tool_calls: int = 0
    approvals: list[RecordedApproval] = Field(default_factory=list)
    answer: str | None = None
    error: str | None = None
    state_file: str | None = None
    workspace: str | None = None
    steps: list[RecordedStep] = Field(default_factory=list)
    cycles: int | None = None
    max_cycles: int | None = None
    verdicts: list[str] = Field(default_factory=list)
    validation: dict[str, Any] | None = None

    @property
    def paused(self) -> bool:
        """True while calls wait for a person (``--resume`` continues it)."""
        return self.status == "paused"
