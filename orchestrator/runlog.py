"""`RunLog`: the agent's side of run records (``tools.runs``).

An `OrchestratorService` given a `tools.runs.RunStore` records each question as it goes:
``running`` when it starts, then ``answered``, ``budget_exhausted``, ``paused`` (calls wait
for a person) or ``failed``; a resume moves the same record on. ``python -m orchestrator``
records its pipeline runs here too. Records are redacted (known secrets and
secret-looking values masked) before they are stored, and a store that fails is logged,
never the run's failure.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from contextvars import ContextVar
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Literal

from orchestrator.llm import ChatModelError
from tools.runs import (
    MAX_TOOL_CALLS,
    RecordedApproval,
    RecordedStep,
    RecordedToolCall,
    RunRecord,
    RunStatus,
    RunStore,
    RunStoreError,
    bounded_arguments,
    bounded_text,
    redacted,
)

if TYPE_CHECKING:
    from pathlib import Path

    from orchestrator.agents.pipeline import PipelineRun, PipelineStep
    from orchestrator.graph import AgentRun
    from tools.approvals import ApprovalRequest, Approve, Deny

__all__ = ["RecordingApprover", "RunLog", "question_text"]

_log = logging.getLogger(__name__)

_STATUS: Mapping[str, RunStatus] = {
    "final_answer": "answered",
    "max_iterations": "budget_exhausted",
    "awaiting_approval": "paused",
}
_PIPELINE_STATUS: Mapping[str, RunStatus] = {
    "approved": "approved",
    "rejected": "rejected",
    "validation_failed": "validation_failed",
    "error": "failed",
    "awaiting_approval": "paused",
}


def _now() -> datetime:
    return datetime.now(timezone.utc)


class RunLog:
    """Writes the records of one service's (or command's) runs.

    Args:
        store: Where records go.
        agent: The agent type of the runs.
        model: The model, described without secrets.
        secrets: Values to mask wherever they appear (the API keys in use).
        now: The current UTC time (injectable).
    """

    def __init__(
        self,
        store: RunStore,
        *,
        agent: str,
        model: str,
        secrets: Iterable[str] = (),
        now: Any = _now,
    ) -> None:
        self.store = store
        self.agent = agent
        self.model = model
        self._secrets = tuple(s for s in secrets if s)
        self._now = now
        self._asked: ContextVar[list[RecordedApproval] | None] = ContextVar("tooldeck_asked", default=None)

    # ------------------------------------------------------------------ agent runs

    def started(self, run_id: str, question: str) -> None:
        """Record a run that starts (status ``running``)."""
        now = self._now()
        self._save(RunRecord(id=run_id, status="running", question=bounded_text(question) or "", agent=self.agent,
                             model=self.model, started_at=now, updated_at=now))  # fmt: skip

    def asking(self) -> _Asked:
        """The scope of one run: approvals asked at the terminal inside it are recorded with it."""
        return _Asked(self._asked)

    def finished(self, run: AgentRun, question: str | None = None) -> RunRecord | None:
        """Record ``run`` as it ended (or paused); returns the record stored."""
        earlier = self._earlier(run.run_id)
        status = _STATUS.get(run.stop_reason, "answered")
        approvals = self._merge_approvals(earlier, run.pending_approvals)
        calls = [_call(record) for record in run.tool_results]
        record = RunRecord(
            id=run.run_id,
            status=status,
            question=bounded_text(question if question is not None else _question(run, earlier)) or "",
            agent=self.agent,
            model=self.model,
            started_at=earlier.started_at if earlier is not None else self._now(),
            updated_at=self._now(),
            duration_ms=float(run.timings.get("total_ms", 0.0)),
            turns=run.iterations,
            tool_calls=calls[:MAX_TOOL_CALLS],
            omitted_tool_calls=max(0, len(calls) - MAX_TOOL_CALLS),
            approvals=approvals,
            answer=bounded_text(run.answer) if status != "paused" else None,
            state_file=earlier.state_file if earlier is not None and status == "paused" else None,
            workspace=earlier.workspace if earlier is not None else None,
        )
        return self._save(record)

    def failed(self, run_id: str, question: str | None, error: BaseException) -> None:
        """Record a run that ended in an exception (the model endpoint failed, ...)."""
        earlier = self._earlier(run_id)
        now = self._now()
        text = question if question is not None else (earlier.question if earlier is not None else "")
        self._save(RunRecord(
            id=run_id, status="failed", question=bounded_text(text) or "", agent=self.agent, model=self.model,
            started_at=earlier.started_at if earlier is not None else now, updated_at=now,
            turns=earlier.turns if earlier is not None else 0,
            tool_calls=list(earlier.tool_calls) if earlier is not None else [],
            approvals=self._merge_approvals(earlier, ()), error=bounded_text(f"{type(error).__name__}: {error}", 2000),
        ))  # fmt: skip

    def decided(self, decisions: Mapping[str, Approve | Deny]) -> None:
        """Note decisions given for a paused run's held calls (applied to its record when it is
        next written: `finished` or `failed`); only inside `asking`."""
        asked = self._asked.get()
        if asked is None:
            return
        for call_id, decision in decisions.items():
            asked.append(RecordedApproval(call_id=call_id, tool="", decision=_verdict(decision), decided_by="resume",
                                          at=self._now()))  # fmt: skip

    def asked(self, request: ApprovalRequest, answer: Approve | Deny, *, decided_by: str) -> None:
        """Note a person's answer about a call (only inside `asking`)."""
        asked = self._asked.get()
        if asked is not None:
            update = {"decision": _verdict(answer), "decided_by": decided_by, "at": self._now()}
            asked.append(_pending(request).model_copy(update=update))

    def note_state_file(self, run_id: str, path: Path) -> None:
        """Record where a paused run's state was saved (``--resume``)."""
        record = self._earlier(run_id)
        if record is not None and record.status == "paused":
            self._save(record.model_copy(update={"state_file": str(path)}))

    # ------------------------------------------------------------------ around a run

    def record(self, run_id: str, question: str, work: Callable[[], AgentRun]) -> AgentRun:
        """``work()`` (the run ``run_id`` of ``question``), recorded as it starts and ends."""
        self.started(run_id, question)
        with self.asking():
            try:
                run = work()
            except Exception as exc:
                self.failed(run_id, question, exc)
                raise
            self.finished(run, question)
        return run

    async def arecord(self, run_id: str, question: str, work: Callable[[], Awaitable[AgentRun]]) -> AgentRun:
        """Async twin of `record`."""
        self.started(run_id, question)
        with self.asking():
            try:
                run = await work()
            except Exception as exc:
                self.failed(run_id, question, exc)
                raise
            self.finished(run, question)
        return run

    def record_resume(
        self, state: Mapping[str, Any], decisions: Mapping[str, Approve | Deny], work: Callable[[], AgentRun]
    ) -> AgentRun:
        """``work()`` (a resume of ``state`` with ``decisions``), moving the run's record on.

        A refused resume (``ResumeError``) changes nothing; a model failure marks it failed.
        """
        with self.asking():
            self.decided(decisions)
            try:
                run = work()
            except ChatModelError as exc:
                self.failed(_state_run_id(state), None, exc)
                raise
            self.finished(run)
        return run

    async def arecord_resume(
        self,
        state: Mapping[str, Any],
        decisions: Mapping[str, Approve | Deny],
        work: Callable[[], Awaitable[AgentRun]],
    ) -> AgentRun:
        """Async twin of `record_resume`."""
        with self.asking():
            self.decided(decisions)
            try:
                run = await work()
            except ChatModelError as exc:
                self.failed(_state_run_id(state), None, exc)
                raise
            self.finished(run)
        return run

    # ------------------------------------------------------------------ pipeline runs

    def pipeline(
        self,
        run: PipelineRun,
        started_at: datetime,
        *,
        state_file: Path | None = None,
        decisions: Mapping[str, Approve | Deny] | None = None,
    ) -> RunRecord | None:
        """Record a pipeline run (``run.run_id``) as it ended or paused.

        A paused run (a step's calls wait for a person) is ``paused``, with the held calls and
        ``state_file``; a resume of it (``decisions``: what the person decided) moves the same
        record on, keeping when it started.
        """
        from tools.approvals import ApprovalRequest

        earlier = self._earlier(run.run_id)
        status = _PIPELINE_STATUS.get(run.status, "failed")
        held = [ApprovalRequest.from_dict(entry) for entry in run.paused.pending_approvals] if run.paused else []
        with self.asking():
            self.decided(decisions or {})
            approvals = self._merge_approvals(earlier, held)
        steps = [_step(step) for step in run.steps]
        record = RunRecord(
            id=run.run_id, kind="pipeline", status=status, question=run.task,
            agent="pipeline", model=self.model, started_at=earlier.started_at if earlier is not None else started_at,
            updated_at=self._now(), duration_ms=run.duration_ms, turns=sum(step.turns for step in steps),
            tool_calls=[call for step in steps for call in step.tool_calls][:MAX_TOOL_CALLS], approvals=approvals,
            workspace=run.workspace, steps=steps, cycles=run.cycles, max_cycles=run.max_cycles,
            verdicts=[verdict.decision for verdict in run.verdicts],
            validation=run.validation.model_dump(mode="json") if run.validation is not None else None,
            error=bounded_text(run.error, 2000), answer=_pipeline_answer(run) if status != "paused" else None,
            state_file=str(state_file) if state_file is not None and status == "paused" else None,
        )  # fmt: skip
        return self._save(record)

    # ------------------------------------------------------------------ internals

    def _earlier(self, run_id: str) -> RunRecord | None:
        try:
            return self.store.get(run_id)
        except RunStoreError as exc:
            _log.warning("run record %s unreadable (%s); writing a new one", run_id, exc)
            return None

    def _merge_approvals(self, earlier: RunRecord | None, pending: Sequence[ApprovalRequest]) -> list[RecordedApproval]:
        """The run's approvals: earlier ones (a pending one settled by a decision taken now, on
        resume or at the terminal), new ones asked now, and the calls held now."""
        now_asked = list(self._asked.get() or ())
        newest = {a.call_id: a for a in now_asked}
        out: list[RecordedApproval] = []
        for approval in earlier.approvals if earlier is not None else ():
            decision = newest.pop(approval.call_id, None) if approval.decision == "pending" else None
            if decision is not None:
                update = {"decision": decision.decision, "decided_by": decision.decided_by, "at": decision.at}
                approval = approval.model_copy(update=update)  # noqa: PLW2901 - the settled version replaces it
            out.append(approval)
        out += [a for a in now_asked if a.call_id in newest and a.tool]  # a resume's decision alone names no tool
        held = {a.call_id for a in out if a.decision == "pending"}
        out += [_pending(request) for request in pending if (request.call_id or "") not in held]
        return out

    def _save(self, record: RunRecord) -> RunRecord | None:
        try:
            clean = redacted(record, self._secrets)
            self.store.save(clean)
        except RunStoreError as exc:
            _log.warning("run %s not recorded: %s", record.id, exc)
            return None
        except Exception:  # recording never fails a run
            _log.warning("run %s not recorded", record.id, exc_info=True)
            return None
        return clean


class _Asked:
    """Collects the approvals asked during one run (a context variable: the approver may be
    called from a worker thread, which copies the run's context)."""

    def __init__(self, var: ContextVar[list[RecordedApproval] | None]) -> None:
        self._var = var
        self._token: Any = None

    def __enter__(self) -> list[RecordedApproval]:
        collected: list[RecordedApproval] = []
        self._token = self._var.set(collected)
        return collected

    def __exit__(self, *exc_info: object) -> None:
        self._var.reset(self._token)


class RecordingApprover:
    """Wraps an approver: each request and the person's decision go into the current run's record.

    Args:
        approver: Asks the person (e.g. ``TerminalApprover``); its answer is passed on unchanged.
        log: The run log whose current run collects the approvals.
        decided_by: How the decision was taken (``terminal``).
    """

    def __init__(self, approver: Any, log: RunLog, *, decided_by: str = "terminal") -> None:
        self._approver = approver
        self._log = log
        self._decided_by = decided_by

    def __call__(self, request: ApprovalRequest) -> Any:
        """Ask, record the answer (``None``: the call stays held), return it."""
        from tools.approvals import Approve, Deny

        answer = self._approver(request)
        if isinstance(answer, (Approve, Deny)):
            self._log.asked(request, answer, decided_by=self._decided_by)
        return answer


def _verdict(decision: Approve | Deny) -> Literal["approved", "denied"]:
    from tools.approvals import Approve

    return "approved" if isinstance(decision, Approve) else "denied"


def _pending(request: ApprovalRequest) -> RecordedApproval:
    return RecordedApproval(
        call_id=request.call_id or "",
        tool=request.tool,
        risk=str(request.risk),
        reason=bounded_text(request.reason, 1000),
        arguments=bounded_arguments(request.arguments),
        arguments_hash=request.arguments_hash,
        decision="pending",
    )


def _call(record: Mapping[str, Any]) -> RecordedToolCall:
    return RecordedToolCall(
        call_id=str(record.get("tool_call_id") or ""),
        name=str(record.get("name") or "?")[:200],
        arguments=bounded_arguments(record.get("arguments")),
        status=str(record.get("status") or "error"),
        error_type=record.get("error_type"),
        duration_ms=float(record.get("duration_ms") or 0.0),
    )


def _step(step: PipelineStep) -> RecordedStep:
    return RecordedStep(
        cycle=step.cycle, agent=step.agent, turns=step.iterations, stop_reason=step.stop_reason,
        answer=bounded_text(step.answer, 4000),
        tool_calls=[_summary_call(call, step.agent) for call in step.tool_calls[:MAX_TOOL_CALLS]],
        changed_files=list(step.changed_files)[:200],
        verdict=step.verdict.decision if step.verdict is not None else None,
        findings=[str(finding) for finding in (step.verdict.findings if step.verdict is not None else [])],
        duration_ms=step.duration_ms,
    )  # fmt: skip


def _summary_call(call: Any, agent: str) -> RecordedToolCall:
    return RecordedToolCall(
        name=call.name, arguments=bounded_arguments(call.arguments), status=call.status,
        error_type=call.error_type, duration_ms=call.duration_ms, agent=agent,
    )  # fmt: skip


def question_text(question: str | Sequence[Mapping[str, Any]]) -> str:
    """The question of a run, for its record (the last user message of a conversation)."""
    if isinstance(question, str):
        return question
    for message in reversed(question):
        if message.get("role") == "user":
            content = message.get("content")
            return content if isinstance(content, str) else str(content)
    return ""


def _state_run_id(state: Mapping[str, Any]) -> str:
    """The run id of a paused run's state (the whole ``--json`` output is accepted too)."""
    inner = state.get("state") if isinstance(state.get("state"), Mapping) else state
    run_id = inner.get("run_id") if isinstance(inner, Mapping) else None
    return run_id if isinstance(run_id, str) and run_id else "run_unknown"


def _question(run: AgentRun, earlier: RunRecord | None) -> str:
    if earlier is not None and earlier.question:
        return earlier.question
    for message in run.messages:
        if message.get("role") == "user":
            content = message.get("content")
            return content if isinstance(content, str) else str(content)
    return ""


def _pipeline_answer(run: PipelineRun) -> str | None:
    for step in reversed(run.steps):
        if step.agent == "coder":
            return bounded_text(step.answer, 4000)
    return None
