"""Human in the loop for `AgentGraph`: which calls of a turn wait for a person, and what a
person's decisions turn them into.

A turn's calls are *triaged* before any runs: a call the runner's policy lets run goes to the
`ToolsNode` as it is; a call that needs approval is asked about (the graph's ``approver``, on
the calling thread, one at a time, in call order) or *held*. An approved call becomes a
`PendingCall` carrying its `ApprovedCall` (so the registry runs exactly the approved
arguments despite its policy); a denied one is answered with the registry's
``permission_denied`` refusal and the person's message.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from orchestrator.graph._calls import PendingCall
from orchestrator.graph._content import shown_name
from orchestrator.graph.state import PausedRun, ResumeError, call_key
from tools.approvals import (
    ApprovalCheck,
    ApprovalError,
    ApprovalMismatchError,
    ApprovalPolicy,
    ApprovalRequest,
    Approve,
    ApprovedCall,
    Deny,
    denial,
)
from tools.errors import ErrorType, InvalidArgumentsError
from tools.result import ToolResult

_log = logging.getLogger(__name__)

#: A synchronous callback asked about each call that needs approval: `Approve`, `Deny`, or
#: None to hold the call (the run then ends ``awaiting_approval``).
GraphApprover = Callable[[ApprovalRequest], "Approve | Deny | None"]
#: Longest call id a held call may have (ids are keys of the claim ledger).
MAX_HELD_ID_CHARS = 256
Decision = Approve | Deny


@dataclass
class Triage:
    """A turn's calls sorted by what happens to them now.

    Attributes:
        run: Calls to run (approved ones carry their `ApprovedCall`).
        refused: Calls answered without running (denied, or approvals that failed).
        held: Calls waiting for a person, by position.
        asks: Calls to ask the approver about, in call order (before `settle`).
    """

    run: list[PendingCall] = field(default_factory=list)
    refused: list[tuple[PendingCall, ToolResult]] = field(default_factory=list)
    held: dict[int, ApprovalRequest] = field(default_factory=dict)
    asks: list[tuple[PendingCall, ApprovalRequest]] = field(default_factory=list)


class Approvals:
    """The approval side of one graph: its runner (whose policy decides and remembers) and
    its approver.

    Args:
        runner: The registry or view the graph runs calls through.
        approver: Asked about calls that need approval; None: such calls are held.
    """

    def __init__(self, runner: Any, approver: GraphApprover | None) -> None:
        self.runner = runner
        self.approver = approver

    @property
    def policy(self) -> ApprovalPolicy | None:
        """The runner's approval policy (a view's own, else its registry's)."""
        policy = getattr(self.runner, "policy", None)
        return policy if isinstance(policy, ApprovalPolicy) else None

    # ------------------------------------------------------------------ a new turn

    def triage(self, calls: Sequence[PendingCall]) -> Triage:
        """Sort a new turn's calls: those that run freely, and those that need a person."""
        out = Triage()
        ids = [call.id for call in calls]
        for call in calls:
            request = self._request(call)
            if request is None:
                out.run.append(call)
            elif ids.count(call.id) > 1 or len(call.id) > MAX_HELD_ID_CHARS:
                out.refused.append((call, self._unholdable(call)))
            elif self.approver is None:
                out.held[call.index] = request
            else:
                out.asks.append((call, request))
        return out

    def _request(self, call: PendingCall) -> ApprovalRequest | None:
        """The approval request of a call that needs one; None when the runner decides alone
        (it runs freely, or the runner refuses it: unknown tool, not the agent's, approvals
        file unusable, arguments that are not a JSON object)."""
        check_approval = getattr(self.runner, "check_approval", None)
        if check_approval is None or not call.name:
            return None
        try:
            check: ApprovalCheck | None = check_approval(call.name, call.arguments)
            if check is None or not check.needs_approval:
                return None
            return check.request(call.arguments, call_id=call.id)
        except (ApprovalError, InvalidArgumentsError, ValueError):
            return None  # the registry's own gate answers it (fail closed)

    def _unholdable(self, call: PendingCall) -> ToolResult:
        why = "is longer than 256 characters" if len(call.id) > MAX_HELD_ID_CHARS else "is used by more than one call"
        return self.refusal(
            call.name,
            "permission_denied",
            f"The tool '{shown_name(call.name)}' needs a person's approval, but the call id {shown_name(call.id)!r} "
            f"{why} of this turn, so it cannot be held for one; it was not run. Call it again with a short call id "
            "of its own.",
            {"reason": "call_id_unusable", "tool": call.name},
        )

    def settle(self, out: Triage, decisions: Sequence[object]) -> None:
        """Turn the approver's answers (one per ``out.asks``, in order) into calls to run,
        refusals or held calls."""
        for (call, request), decision in zip(out.asks, decisions, strict=True):
            if decision is None:
                out.held[call.index] = request
            elif isinstance(decision, (Approve, Deny)):
                self._apply(out, call, request, decision)
            else:
                out.refused.append((call, self._approver_failed(request, decision)))
        out.asks = []

    def _apply(self, out: Triage, call: PendingCall, request: ApprovalRequest, decision: Decision) -> None:
        if isinstance(decision, Deny):
            message, details = denial(request, decision)
            out.refused.append((call, self.refusal(call.name, "permission_denied", message, details)))
            return
        try:
            approved = request.approved(decision)
        except InvalidArgumentsError as exc:
            out.refused.append((call, self.refusal(call.name, "validation_error", exc.message, exc.details or {})))
            return
        except ApprovalMismatchError as exc:
            details = {"reason": "approval_mismatch", "tool": call.name}
            out.refused.append((call, self.refusal(call.name, "permission_denied", str(exc), details)))
            return
        if decision.remember:
            self.remember(request)
        out.run.append(replace(call, arguments=approved.arguments, approved=approved))

    def _approver_failed(self, request: ApprovalRequest, answer: object) -> ToolResult:
        kind = type(answer).__name__
        what = kind if isinstance(answer, BaseException) else f"an answer of type {kind}"
        _log.error("the approver failed for %s: %s", shown_name(request.tool), what)
        return self.refusal(
            request.tool,
            "permission_denied",
            f"The tool '{shown_name(request.tool)}' needs a person's approval, and asking for it failed, so it "
            "was not run. Do not retry this call; continue without it.",
            {"reason": "approver_failed", "tool": request.tool},
        )

    def remember(self, request: ApprovalRequest) -> None:
        """Store an approval of the request's tool version (``Approve(remember=True)``); a
        failure is logged: the person approved this call, so it runs once anyway."""
        try:
            if self.policy is None:
                raise ApprovalError("the graph has no approval policy to remember the approval with")
            self.policy.remember(request.tool, request.version_hash, risk=request.risk)
        except ApprovalError as exc:
            _log.warning("approval of %s not remembered: %s", shown_name(request.tool), exc)

    def refusal(self, name: str, error_type: ErrorType, message: str, details: dict[str, Any]) -> ToolResult:
        """The runner's refusal envelope (recorded by its metrics like any refusal)."""
        refuse = getattr(self.runner, "refuse", None)
        if refuse is None:
            refuse = getattr(getattr(self.runner, "registry", None), "refuse", None)
        if callable(refuse):
            result = refuse(name, error_type, message, details=details)
            if isinstance(result, ToolResult):
                return result
        return ToolResult.failure(error_type, message, details=details, metadata={"tool_name": name})

    # ------------------------------------------------------------------ a resume

    def check_decisions(self, paused: PausedRun, decisions: Mapping[str, object]) -> dict[int, Decision]:
        """The decisions by call position, checked against the paused run (nothing runs yet).

        Raises:
            ResumeError: a decision names no held call (unknown, never pending, or decided at
                an earlier resume), is not `Approve` / `Deny`, or approves arguments that
                differ from those shown, edited arguments that are not a JSON object, a
                tool this graph does not have, or a tool that changed since the run paused.
        """
        if not isinstance(decisions, Mapping):
            raise ResumeError(f"decisions must map call ids to Approve() or Deny(...), not {type(decisions).__name__}")
        by_id = {request.call_id: index for index, request in paused.pending.items()}
        chosen: dict[int, Decision] = {}
        for call_id, decision in decisions.items():
            index = by_id.get(call_id) if isinstance(call_id, str) else None
            if index is None:
                raise ResumeError(self._not_pending(paused, call_id))
            if not isinstance(decision, (Approve, Deny)):
                raise ResumeError(
                    f"the decision for call {call_id!r} is a {type(decision).__name__}; use Approve(), "
                    "Approve(arguments={...}) or Deny('why')"
                )
            if isinstance(decision, Approve):
                self._check_approve(paused.pending[index], decision)
            chosen[index] = decision
        return chosen

    def _not_pending(self, paused: PausedRun, call_id: object) -> str:
        shown = repr(str(call_id)[:64])
        waiting = ", ".join(repr(r.call_id) for r in paused.pending.values())
        key = call_key(paused.iterations, str(call_id))
        if key in paused.decided:
            return (
                f"call {shown} was already {paused.decided[key]} at an earlier resume of run {paused.run_id}; "
                f"it is not decided again (still waiting: {waiting})"
            )
        if any(call.id == call_id for call in paused.calls):
            return (
                f"call {shown} was never pending approval: it was answered without one; only held calls "
                f"can be decided (waiting: {waiting})"
            )
        return f"run {paused.run_id} has no held call {shown}; the calls waiting for a decision are: {waiting}"

    def _check_approve(self, request: ApprovalRequest, decision: Approve) -> ApprovedCall:
        name = request.tool
        if self.runner.get_tool(name) is None:
            raise ResumeError(
                f"the tool {name[:64]!r} of call {request.call_id!r} is not available to this graph; resume the "
                "run with the graph (agent, registry) that paused it, or deny the call"
            )
        current = self._version_hash(name)
        if current is not None and current != request.version_hash:
            raise ResumeError(
                f"the tool {name!r} changed since the run paused (call {request.call_id!r} was shown for version "
                f"{request.version_hash[:12]}..., the tool is now {current[:12]}...); it was not run: deny the "
                "call, or ask the question again"
            )
        try:
            return request.approved(decision)
        except ApprovalMismatchError as exc:
            raise ResumeError(str(exc)) from None
        except InvalidArgumentsError as exc:
            raise ResumeError(
                f"the edited arguments of call {request.call_id!r} are not usable: {exc.message}"
            ) from None

    def _version_hash(self, name: str) -> str | None:
        version_hash = getattr(self.runner, "tool_version_hash", None)
        if version_hash is None:
            version_hash = getattr(getattr(self.runner, "registry", None), "tool_version_hash", None)
        value = version_hash(name) if callable(version_hash) else None
        return value if isinstance(value, str) else None

    def decided(self, paused: PausedRun, chosen: Mapping[int, Decision]) -> Triage:
        """The held calls ``chosen`` decides, as calls to run and refusals (``remember`` applied)."""
        out = Triage()
        calls = paused.calls
        for index in sorted(chosen):
            self._apply(out, calls[index], paused.pending[index], chosen[index])
        return out
