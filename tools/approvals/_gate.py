"""``ApprovalGate``: what a call path does with a policy before a call runs.

Shared by :class:`~tools.registry.LocalToolRegistry`, :class:`~tools.routing.ToolView` and
:class:`~tools.store.ExecutionService`: each asks :meth:`ApprovalGate.decide` and either runs
the call with :attr:`Verdict.arguments` or answers with the refusal, never both. Refusals
are ``permission_denied`` (``validation_error`` for arguments that are not a JSON object)
and are written for the model: they say that a *person* must approve, never invite the
model to approve itself.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tools.approvals.decisions import ApprovalRequest, Approve, ApprovedCall, Approver, Deny, denial
from tools.approvals.errors import ApprovalError, ApprovalMismatchError
from tools.approvals.hashing import arguments_hash, tool_version_hash
from tools.errors import ErrorType, InvalidArgumentsError

if TYPE_CHECKING:
    from tools._runner import ToolEntry
    from tools.approvals.policy import ApprovalPolicy
    from tools.base import Arguments, BaseTool
    from tools.manual import ToolManual
    from tools.registry import LocalToolRegistry
    from tools.result import ToolResult

logger = logging.getLogger("tools.approvals")


@dataclass(frozen=True)
class Verdict:
    """Run the call with :attr:`arguments`, or refuse it (:attr:`error_type` set).

    Attributes:
        arguments: What to run the call with (the requested arguments, or the approved ones).
        error_type: Set when the call must not run.
        message: The refusal, for the model.
        details: The refusal's details, for the application.
    """

    arguments: Arguments = None
    error_type: ErrorType | None = None
    message: str = ""
    details: dict[str, Any] | None = None

    @property
    def refused(self) -> bool:
        """True when the call must not run."""
        return self.error_type is not None


def _refuse(message: str, details: dict[str, Any], error_type: ErrorType = "permission_denied") -> Verdict:
    return Verdict(None, error_type, message, details)


def approve_command(tool: BaseTool[Any, Any] | None, name: str, version_hash: str) -> str:
    """The command a person runs to approve ``name``: adopted tools are found by id, other
    tools need their version hash."""
    if tool is not None and callable(getattr(getattr(tool, "config", None), "compute_version_hash", None)):
        return f"tooldeck approve {name}"
    return f"tooldeck approve {name} --version-hash {version_hash}"


class ApprovalGate:
    """Applies a policy (and an optional approver) to one call.

    Args:
        policy: The policy; None: only checks :class:`ApprovedCall` objects.
        approver: Asked when a call needs approval; None: such calls are refused.
        manual_for: Maps a registration's manual to the one this call path declares (a
            view applies its routing config's manual overrides, which are the operator's).
    """

    def __init__(
        self,
        policy: ApprovalPolicy | None,
        approver: Approver | None = None,
        *,
        manual_for: Callable[[ToolManual], ToolManual] | None = None,
    ) -> None:
        self.policy = policy
        self.approver = approver
        self._manual_for = manual_for

    def decide(
        self,
        tool: BaseTool[Any, Any],
        manual: ToolManual,
        arguments: Arguments,
        *,
        preset: Mapping[str, Any] | None = None,
        version_hash: str | None = None,
        call_id: str | None = None,
        approved: ApprovedCall | None = None,
    ) -> Verdict:
        """Whether (and with which arguments) the call runs; asks the approver if needed."""
        if self._manual_for is not None:
            manual = self._manual_for(manual)
        first = self._prepare(
            tool, manual, arguments, preset=preset, version_hash=version_hash, call_id=call_id, approved=approved
        )
        if isinstance(first, Verdict):
            return first
        approver = self.approver
        if approver is None:
            return self._needs_approval(tool, first)
        try:
            decision = approver(first)
        except Exception as exc:
            return self._approver_failed(first, exc)
        return self._settle(first, decision, tool, preset)

    async def adecide(
        self,
        tool: BaseTool[Any, Any],
        manual: ToolManual,
        arguments: Arguments,
        *,
        preset: Mapping[str, Any] | None = None,
        version_hash: str | None = None,
        call_id: str | None = None,
        approved: ApprovedCall | None = None,
    ) -> Verdict:
        """Async twin of :meth:`decide`; the (synchronous) approver runs in a worker thread."""
        if self._manual_for is not None:
            manual = self._manual_for(manual)
        first = self._prepare(
            tool, manual, arguments, preset=preset, version_hash=version_hash, call_id=call_id, approved=approved
        )
        if isinstance(first, Verdict):
            return first
        approver = self.approver
        if approver is None:
            return self._needs_approval(tool, first)
        import asyncio  # on first use: importing the gate stays light

        try:
            decision = await asyncio.to_thread(approver, first)
        except Exception as exc:
            return self._approver_failed(first, exc)
        return self._settle(first, decision, tool, preset)

    # ------------------------------------------------------------------ steps

    def _prepare(
        self,
        tool: BaseTool[Any, Any],
        manual: ToolManual,
        arguments: Arguments,
        *,
        preset: Mapping[str, Any] | None,
        version_hash: str | None,
        call_id: str | None,
        approved: ApprovedCall | None,
    ) -> Verdict | ApprovalRequest:
        """A verdict when no person is needed, else the request to ask them."""
        name = manual.name
        if approved is not None:
            return _check_grant(tool, manual, arguments, preset=preset, version_hash=version_hash, approved=approved)
        policy = self.policy
        if policy is None:
            return Verdict(arguments)
        try:
            # The arguments pick the action, whose risk decides (multi-action tools).
            check = policy.check(tool, arguments, manual=manual, preset=preset, version_hash=version_hash)
        except ApprovalError as exc:
            logger.error("tool %s not run: approvals unavailable: %s", name, exc)
            return _refuse(
                f"The tool '{name}' could not be checked for approval (the approvals settings are unusable), "
                "so it was not run. A person must fix them; continue without this tool.",
                {"reason": "approvals_unavailable", "tool": name, "error": str(exc)},
            )
        if check.allowed:
            return Verdict(arguments)
        try:
            return check.request(arguments, call_id=call_id)
        except InvalidArgumentsError as exc:
            return _refuse(exc.message, exc.details or {}, "validation_error")

    def _needs_approval(self, tool: BaseTool[Any, Any], request: ApprovalRequest) -> Verdict:
        name = request.tool
        command = approve_command(tool, name, request.version_hash)
        return _refuse(
            f"The tool '{name}' needs a person's approval before it can run: {request.reason}. It was not run. "
            f"Only a person can approve it (with `tooldeck approve {name}` or in the application); you cannot "
            "approve it yourself, so do not retry this call. Tell the user it needs their approval, then "
            "continue without it or use another tool.",
            {
                "reason": "approval_required",
                "tool": name,
                "risk": request.risk,
                "freedom": request.freedom.value,
                "version_hash": request.version_hash,
                "arguments_hash": request.arguments_hash,
                "approve_command": command,
            },
        )

    def _settle(
        self,
        request: ApprovalRequest,
        decision: object,
        tool: BaseTool[Any, Any],
        preset: Mapping[str, Any] | None,
    ) -> Verdict:
        if isinstance(decision, Deny):
            return denied(request, decision)
        if not isinstance(decision, Approve):
            return self._approver_failed(
                request, TypeError(f"the approver returned {type(decision).__name__}, not Approve or Deny")
            )
        try:
            approved = request.approved(decision)
        except InvalidArgumentsError as exc:
            return _refuse(exc.message, exc.details or {}, "validation_error")
        except ApprovalMismatchError as exc:
            return _refuse(str(exc), {"reason": "approval_mismatch", "tool": request.tool})
        changed = _check_preview(tool, request.tool, approved.arguments, preset, approved)
        if changed is not None:  # edited arguments not previewed, or the code changed while asked
            return changed
        if decision.remember:
            policy = self.policy
            try:
                if policy is None:
                    raise ApprovalError("no policy to remember the approval with")
                policy.remember(request.tool, request.version_hash, risk=request.risk)
            except ApprovalError as exc:  # the person approved this call: run it once anyway
                logger.warning("approval of %s not remembered: %s", request.tool, exc)
        return Verdict(approved.arguments)

    def _approver_failed(self, request: ApprovalRequest, exc: BaseException) -> Verdict:
        logger.error("the approver failed for %s: %s: %s", request.tool, type(exc).__name__, exc)
        return _refuse(
            f"The tool '{request.tool}' needs a person's approval, and asking for it failed, so it was not run. "
            "Do not retry this call; continue without it.",
            {"reason": "approver_failed", "tool": request.tool},
        )


def denied(request: ApprovalRequest, decision: Deny) -> Verdict:
    """The refusal of a call a person denied (``decision.message`` is passed on)."""
    message, details = denial(request, decision)
    return _refuse(message, details)


def _check_grant(
    tool: BaseTool[Any, Any],
    manual: ToolManual,
    arguments: Arguments,
    *,
    preset: Mapping[str, Any] | None,
    version_hash: str | None,
    approved: ApprovedCall,
) -> Verdict:
    """Run with ``arguments`` only if they, the tool and its version are what was approved."""
    name = manual.name
    base = {"reason": "approval_mismatch", "tool": name}
    if approved.tool != name:
        return _refuse(
            f"This approval is for the tool '{approved.tool[:64]}', not '{name}'; the call was not run.", base
        )
    try:
        sent = arguments_hash(arguments)
    except InvalidArgumentsError as exc:
        return _refuse(exc.message, exc.details or {}, "validation_error")
    if sent != approved.arguments_hash:
        return _refuse(
            f"The arguments differ from the ones a person approved for '{name}', so the call was not run. "
            "Only exactly the approved arguments can run; ask the user to approve the new ones.",
            {**base, "arguments_hash": sent, "approved_arguments_hash": approved.arguments_hash},
        )
    current = version_hash or tool_version_hash(tool, manual=manual, preset=preset)
    if current != approved.version_hash:
        return _refuse(
            f"The tool '{name}' changed after a person approved this call, so it was not run; "
            "it needs their approval again.",
            {**base, "version_hash": current, "approved_version_hash": approved.version_hash},
        )
    return _check_preview(tool, name, arguments, preset, approved) or Verdict(arguments)


def _check_preview(
    tool: BaseTool[Any, Any],
    name: str,
    arguments: Arguments,
    preset: Mapping[str, Any] | None,
    approved: ApprovedCall,
) -> Verdict | None:
    """A refusal when the tool shows a preview and it is not the one the person approved."""
    from tools._arguments import parse_arguments
    from tools.approvals.preview import approval_preview

    preview = approval_preview(tool, parse_arguments(arguments, name), preset=preset)
    if preview is None or preview.digest == approved.preview_hash:
        return None
    base = {"reason": "preview_changed", "tool": name, "preview_hash": preview.digest}
    if approved.preview_hash is None:
        return _refuse(
            f"The call of '{name}' shows what it changes before it runs, and this approval was given without "
            "seeing that (edited arguments, or an approval made elsewhere), so it was not run. A person must "
            "approve the call as shown.",
            base,
        )
    return _refuse(
        f"What the call of '{name}' would change is no longer what a person approved (it changed after they "
        "looked), so it was not run. A person must approve it again, as it is now.",
        {**base, "approved_preview_hash": approved.preview_hash},
    )


def call_with_approval(
    registry: LocalToolRegistry,
    name: str,
    arguments: Arguments,
    *,
    policy: ApprovalPolicy,
    approver: Approver | None = None,
    call_id: str | None = None,
) -> ToolResult:
    """Call ``name`` of ``registry`` under ``policy`` (and ``approver``): what a registry
    built with ``policy=`` does on every call, for a registry built without one (e.g. one
    a CLI imported from an application)."""
    return registry._call_gated(name, arguments, call_id, None, ApprovalGate(policy, approver))


def run_gated(
    registry: LocalToolRegistry,
    entry: ToolEntry,
    arguments: Arguments,
    *,
    call_id: str | None,
    approved: ApprovedCall | None,
    gate: ApprovalGate | None,
) -> ToolResult:
    """Run a registry's ``entry`` if ``gate`` (its policy, its approver) or ``approved`` lets it;
    else the refusal envelope (recorded, never counted by the breaker)."""
    verdict = (gate or ApprovalGate(None)).decide(
        entry.tool, entry.manual, arguments, preset=entry.preset, call_id=call_id, approved=approved
    )
    if verdict.error_type is not None:
        return registry.refuse(entry.name, verdict.error_type, verdict.message, details=verdict.details)
    return entry.call(verdict.arguments, call_id)


async def arun_gated(
    registry: LocalToolRegistry,
    entry: ToolEntry,
    arguments: Arguments,
    *,
    call_id: str | None,
    approved: ApprovedCall | None,
    gate: ApprovalGate | None,
) -> ToolResult:
    """Async twin of :func:`run_gated`."""
    verdict = await (gate or ApprovalGate(None)).adecide(
        entry.tool, entry.manual, arguments, preset=entry.preset, call_id=call_id, approved=approved
    )
    if verdict.error_type is not None:
        return registry.refuse(entry.name, verdict.error_type, verdict.message, details=verdict.details)
    return await entry.acall(verdict.arguments, call_id)
