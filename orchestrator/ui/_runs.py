"""The Runs page: recorded agent runs and pipeline runs, newest first; a run as a timeline.

Everything shown comes from the run records (`tools.runs`), which are redacted when they are
stored (`tools.runs.redacted`, the redaction of traces); the console masks the secrets it
knows once more before showing them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from tools.telemetry import redact_data

if TYPE_CHECKING:
    from orchestrator.ui.sources import ConsoleSources
    from tools.runs import RecordedApproval, RecordedStep, RecordedToolCall, RunRecord

__all__ = ["Cycle", "RunList", "RunPage", "TimelineEntry", "run_list", "run_page"]

#: Rows shown on one page of the list.
PAGE_SIZE = 1000


@dataclass(frozen=True)
class RunList:
    """The Runs page.

    Attributes:
        records: The runs shown, newest first.
        total: How many runs matched the filter.
        status: The status filtered on ("" for all).
        kind: The kind filtered on ("" for both).
        statuses: The statuses a run can have (the filter's choices).
        problem: Why the runs cannot be listed.
    """

    records: list[RunRecord]
    total: int
    status: str
    kind: str
    statuses: tuple[str, ...]
    problem: str | None = None


@dataclass(frozen=True)
class TimelineEntry:
    """One line of a run's timeline.

    Attributes:
        kind: ``question``, ``turn``, ``call``, ``approval``, ``answer``, ``waiting`` or ``error``.
        title: What happened, in a few words.
        text: The text that goes with it (a question, an answer, an error, a tool's result).
        status: A status badge (a call's ``success``/``error``, a decision).
        arguments: A call's arguments.
        duration_ms: How long it took.
        at: When (decisions).
    """

    kind: str
    title: str
    text: str | None = None
    status: str | None = None
    arguments: Any = None
    duration_ms: float | None = None
    at: datetime | None = None


@dataclass(frozen=True)
class Cycle:
    """One review cycle of a pipeline run: its steps in order (coder, test-writer, reviewer)."""

    number: int
    steps: list[RecordedStep]
    verdict: str | None


@dataclass(frozen=True)
class RunPage:
    """One run's page."""

    record: RunRecord
    timeline: list[TimelineEntry]
    cycles: list[Cycle] = field(default_factory=list)


def run_list(sources: ConsoleSources, *, status: str = "", kind: str = "") -> RunList:
    """The recorded runs, newest first, of ``status`` and ``kind`` when given."""
    from tools.runs import RUN_STATUSES, RunStoreError

    statuses = tuple(RUN_STATUSES)
    status = status if status in statuses else ""
    kind = kind if kind in ("agent", "pipeline") else ""
    store = sources.runs
    if store is None:
        return RunList([], 0, status, kind, statuses, "This console was started without run records.")
    try:
        records = store.list(status=status or None, limit=None)  # type: ignore[arg-type]
    except RunStoreError as exc:
        return RunList([], 0, status, kind, statuses, str(exc))
    if kind:
        records = [r for r in records if r.kind == kind]
    return RunList(records[:PAGE_SIZE], len(records), status, kind, statuses)


def run_page(sources: ConsoleSources, run_id: str) -> RunPage | None:
    """The page of ``run_id`` (None when there is no such record).

    Raises:
        RunStoreError: the record exists but cannot be read.
    """
    if sources.runs is None:
        return None
    record = sources.runs.get(run_id)
    if record is None:
        return None
    secrets = sources.secrets
    if record.kind == "pipeline":
        return RunPage(record, _opening(record, secrets) + _closing(record, secrets), _cycles(record))
    return RunPage(record, _timeline(record, secrets))


def pending_count(records: Sequence[RunRecord]) -> int:
    """How many calls of ``records`` wait for a person."""
    return sum(1 for record in records for a in record.approvals if a.decision == "pending")


def _timeline(record: RunRecord, secrets: tuple[str, ...]) -> list[TimelineEntry]:
    approvals = {a.call_id: a for a in record.approvals}
    entries = _opening(record, secrets)
    turn = None
    for call in record.tool_calls:
        if call.turn is not None and call.turn != turn:
            turn = call.turn
            entries.append(TimelineEntry("turn", f"model turn {turn}", duration_ms=_turn_ms(record, turn)))
        decided = approvals.pop(call.call_id, None) if call.call_id else None
        if decided is not None:
            entries.append(_approval(decided, secrets))
        entries.append(_call(call, secrets))
    entries += [_approval(a, secrets) for a in approvals.values()]
    return entries + _closing(record, secrets)


def _opening(record: RunRecord, secrets: tuple[str, ...]) -> list[TimelineEntry]:
    title = "task" if record.kind == "pipeline" else "question"
    return [TimelineEntry("question", title, text=redact_data(record.question, secrets), at=record.started_at)]


def _closing(record: RunRecord, secrets: tuple[str, ...]) -> list[TimelineEntry]:
    out = []
    if record.omitted_tool_calls:
        out.append(TimelineEntry("call", f"{record.omitted_tool_calls} more tool calls (not kept)"))
    if record.status == "paused":
        waiting = sum(1 for a in record.approvals if a.decision == "pending")
        out.append(TimelineEntry("waiting", f"waiting for a person: {waiting} call(s) to decide", status="paused"))
    if record.error:
        out.append(TimelineEntry("error", "the run failed", text=redact_data(record.error, secrets), status="failed"))
    if record.answer and record.status != "paused":
        if record.kind == "agent":
            title, took = f"model turn {record.turns}: the answer", _turn_ms(record, record.turns)
        else:
            title, took = "the coder's last answer", None
        text = redact_data(record.answer, secrets)
        out.append(TimelineEntry("answer", title, text=text, status=record.status, duration_ms=took))
    elif record.status == "budget_exhausted":
        out.append(TimelineEntry("answer", "the turns ran out", status=record.status))
    return out


def _call(call: RecordedToolCall, secrets: tuple[str, ...]) -> TimelineEntry:
    return TimelineEntry(
        "call",
        call.name + (f" ({call.agent})" if call.agent else ""),
        text=redact_data(call.result, secrets) if call.result else (call.error_type or None),
        status=call.status,
        arguments=redact_data(call.arguments, secrets),
        duration_ms=call.duration_ms,
    )


def _approval(approval: RecordedApproval, secrets: tuple[str, ...]) -> TimelineEntry:
    how = f" ({approval.decided_by})" if approval.decided_by else ""
    title = f"{approval.tool or 'call ' + approval.call_id}: {approval.decision}{how}"
    reason = redact_data(approval.reason, secrets) if approval.reason else None
    return TimelineEntry(
        "approval",
        title,
        text=reason,
        status=approval.decision,
        arguments=redact_data(approval.arguments, secrets),
        at=approval.at,
    )


def _turn_ms(record: RunRecord, turn: int) -> float | None:
    return record.turn_ms[turn - 1] if 0 < turn <= len(record.turn_ms) else None


def _cycles(record: RunRecord) -> list[Cycle]:
    by_cycle: dict[int, list[RecordedStep]] = {}
    for step in record.steps:
        by_cycle.setdefault(step.cycle, []).append(step)
    cycles = []
    for number in sorted(by_cycle):
        steps = by_cycle[number]
        verdict = next((s.verdict for s in reversed(steps) if s.verdict), None)
        cycles.append(Cycle(number, steps, verdict))
    return cycles
