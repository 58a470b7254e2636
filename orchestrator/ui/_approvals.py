"""The Approvals page: calls paused runs hold for a person, decided here; stored approvals.

A held call is shown from the run's verified state (its arguments masked like traces, the code
diff of a module install as it is, but for known secrets). A decision is sent to the runner
bound to the arguments hash of what was shown (`Approve(shown_hash=...)`), so a run resumes
only with arguments the person saw; the graph claims the call before running it, so deciding
twice (two tabs, a double click, another process) runs it once.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from orchestrator.ui.runner import Held
    from orchestrator.ui.sources import ConsoleSources
    from tools.approvals import ApprovalRequest, Approve, Deny
    from tools.runs import RunRecord

__all__ = ["PendingRun", "StoredApproval", "approvals_view", "decide", "revoke"]

#: The decisions a form may send.
DECISIONS = ("approve", "approve_always", "edit", "deny")


@dataclass(frozen=True)
class PendingRun:
    """A paused run and the calls it waits on.

    Attributes:
        record: Its record.
        requests: The held calls as shown (arguments masked), from the verified state.
        problem: Why they cannot be decided here (the state cannot be used, no runner).
        resume_command: How to continue it from a shell instead.
    """

    record: RunRecord
    requests: tuple[ApprovalRequest, ...]
    problem: str | None
    resume_command: str


@dataclass(frozen=True)
class StoredApproval:
    """A stored approval: the tool runs without asking while its version is the one approved.

    Attributes:
        tool: The tool.
        version_hash: The version approved.
        approved_at: When.
        risk: The risk it covers (None: every call of that version).
        status: ``current``, ``changed`` (the tool changed: it asks again) or ``not
            registered`` (not among this console's tools).
    """

    tool: str
    version_hash: str
    approved_at: str
    risk: str | None
    status: str


def approvals_view(sources: ConsoleSources) -> tuple[list[PendingRun], list[StoredApproval], list[str]]:
    """The paused runs with their held calls, the stored approvals, and problems reading them."""
    from tools.errors import TooldeckError

    problems: list[str] = []
    pending: list[PendingRun] = []
    if sources.runs is None:
        problems.append("This console was started without run records: paused runs cannot be listed.")
    else:
        try:
            paused = sources.runs.list(status="paused", limit=None)
        except TooldeckError as exc:
            problems.append(str(exc))
            paused = []
        pending = [_pending(sources, record) for record in paused]
    stored: list[StoredApproval] = []
    if sources.approvals is not None:
        try:
            approvals = sources.approvals.approvals()
        except TooldeckError as exc:
            problems.append(str(exc))
            approvals = {}
        for tool, approval in approvals.items():
            current = sources.registry.tool_version_hash(tool)
            status = "current" if current == approval.version_hash else "changed"
            if current is None:
                status = "not registered"
            when = approval.approved_at.strftime("%Y-%m-%d %H:%M UTC")
            stored.append(StoredApproval(tool, approval.version_hash, when, approval.risk, status))
    return pending, stored, problems


def decide(sources: ConsoleSources, run_id: str, call_id: str, form: dict[str, str]) -> str | None:
    """Send a person's decision about one held call to the runner; the problem, if any.

    Args:
        sources: The console's sources.
        run_id: The paused run.
        call_id: The held call.
        form: ``decision`` (one of `DECISIONS`), ``arguments_hash`` (of the request shown),
            ``arguments`` (JSON, for ``edit``), ``message`` (for ``deny``: passed to the model).
    """
    from orchestrator.ui.runner import RunnerBusyError

    runner = sources.runner
    if runner is None:
        return "this console cannot resume runs; continue the run from a shell (see the command shown)"
    decision = _decision(form)
    if isinstance(decision, str):
        return decision
    held = runner.held(run_id)
    if held.problem is not None:
        return held.problem
    if call_id not in {request.call_id for request in held.requests}:
        return f"run {run_id} does not hold a call {call_id!r} (any more); reload the page"
    try:
        runner.decide(run_id, {call_id: decision})
    except RunnerBusyError as exc:
        return str(exc)
    return None


def revoke(sources: ConsoleSources, tool: str) -> str | None:
    """Withdraw the stored approval of ``tool``; the problem, if any."""
    from tools.errors import TooldeckError

    if sources.approvals is None:
        return "this console has no approvals file"
    try:
        removed = sources.approvals.revoke(tool)
    except TooldeckError as exc:
        return str(exc)
    return None if removed is not None else f"tool {tool!r} is not approved"


def _decision(form: dict[str, str]) -> Approve | Deny | str:
    """The decision a form stands for, or what is wrong with it."""
    from tools.approvals import Approve, Deny

    kind = form.get("decision", "")
    shown = form.get("arguments_hash", "")
    if kind not in DECISIONS:
        return f"unknown decision {kind[:40]!r}; approve, approve_always, edit or deny"
    if kind == "deny":
        return Deny(form.get("message", "").strip()[:1000])
    if len(shown) != 64:
        return "the decision does not say which arguments it approves (arguments_hash); reload the page"
    if kind != "edit":
        return Approve(remember=kind == "approve_always", shown_hash=shown)
    edited = _edited(form.get("arguments", ""))
    return edited if isinstance(edited, str) else Approve(arguments=edited, shown_hash=shown)


def _edited(text: str) -> dict[str, Any] | str:
    """The edited arguments (one JSON object), or what is wrong with them."""
    try:
        edited = json.loads(text)
    except ValueError as exc:
        return f"the edited arguments are not valid JSON ({exc}); nothing was run"
    if not isinstance(edited, dict):
        return 'the edited arguments must be one JSON object, e.g. {"path": "notes.txt"}; nothing was run'
    return edited


def _pending(sources: ConsoleSources, record: RunRecord) -> PendingRun:
    command = f"python -m orchestrator --resume {record.id} --approve-call CALL_ID (or --deny-call CALL_ID)"
    if record.kind != "agent":
        return PendingRun(record, (), "a paused pipeline is continued from a shell", command)
    if sources.runner is None:
        return PendingRun(record, (), "this console cannot resume runs", command)
    held: Held = sources.runner.held(record.id)
    if held.problem is not None:
        return PendingRun(record, (), held.problem, command)
    return PendingRun(record, tuple(_shown(request, sources) for request in held.requests), None, command)


def _shown(request: ApprovalRequest, sources: ConsoleSources) -> ApprovalRequest:
    """``request`` as the page shows it (see `orchestrator.ui._tools.shown_request`)."""
    from orchestrator.ui._tools import shown_request

    return shown_request(request, sources)


def arguments_json(arguments: Any) -> str:
    """Arguments as the edit box shows them."""
    return json.dumps(arguments, indent=2, ensure_ascii=False, default=str)
