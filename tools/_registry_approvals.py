"""What approvals and routing ask of :class:`~tools.registry.LocalToolRegistry` besides a call.

What the policy says of a call without running it (:meth:`RegistryApprovals.check_approval`),
the version hash approvals are bound to, and the envelope of a call refused before it ran
(by routing, by approvals, or because no tool has its name). The gated call paths themselves
stay beside the registry's other call paths (they are on the hot path); the gate is
:mod:`tools.approvals._gate`.

:class:`RegistryApprovals` is mixed into the registry only: these methods are the registry's
public API, and they read its registrations, policy and call context as they are.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tools._runner import ToolEntry, _failure
from tools._unknown import unknown_tool
from tools.result import ErrorInfo, ToolResult

if TYPE_CHECKING:
    from tools._runner import CallContext
    from tools.approvals import ApprovalCheck, ApprovalPolicy
    from tools.base import Arguments
    from tools.errors import ErrorType
    from tools.resilience import CircuitBreaker
    from tools.routing import ToolManual
    from tools.telemetry import ToolTracer


class RegistryApprovals:
    """``check_approval``, ``tool_version_hash``, ``refuse`` and the unknown-name envelope."""

    # What these methods read of the registry (set by LocalToolRegistry.__init__).
    policy: ApprovalPolicy | None
    tracer: ToolTracer | None
    _entries: dict[str, ToolEntry]
    _context: CallContext
    _new_breaker: Callable[[], CircuitBreaker]

    def check_approval(
        self,
        name: str,
        /,
        arguments: Arguments = None,
        *,
        policy: ApprovalPolicy | None = None,
        manual_for: Callable[[ToolManual], ToolManual] | None = None,
    ) -> ApprovalCheck | None:
        """What ``policy`` (default: the registry's) says of a call of ``name``, without running it.

        Returns None when there is no policy or no such tool. ``check.needs_approval`` ->
        ``check.request(arguments, call_id=...)`` is what to show a person. ``manual_for``
        maps the registration's manual to the one the caller declares (a view's routing
        config overrides).

        Raises:
            ApprovalsFileError: the approvals file is unusable.
        """
        policy = policy if policy is not None else self.policy
        entry = self._entries.get(name)
        if policy is None or entry is None:
            return None
        manual = entry.manual if manual_for is None else manual_for(entry.manual)
        return policy.check(entry.tool, arguments, manual=manual, preset=entry.preset)

    def tool_version_hash(
        self, name: str, /, *, manual_for: Callable[[ToolManual], ToolManual] | None = None
    ) -> str | None:
        """The version hash approvals of ``name`` are bound to (see
        :func:`tools.approvals.tool_version_hash`), or None for an unknown name;
        ``manual_for`` as for :meth:`check_approval`."""
        entry = self._entries.get(name)
        if entry is None:
            return None
        from tools.approvals import tool_version_hash

        manual = entry.manual if manual_for is None else manual_for(entry.manual)
        return tool_version_hash(entry.tool, manual=manual, preset=entry.preset)

    def refuse(
        self, name: str, /, error_type: ErrorType, message: str, *, details: dict[str, Any] | None = None
    ) -> ToolResult:
        """The error envelope of a call refused before it ran (routing, approvals).

        It carries the tool's metadata, is recorded by the metrics sink like any call, and
        does not count against the tool's circuit breaker.
        """
        entry = self._entries.get(name)
        if entry is None:
            return self._unknown(name)
        return entry._finish(_failure(entry.tool, ErrorInfo(error_type, message, False, details, False)))

    def _unknown(self, name: str, call_id: str | None = None) -> ToolResult:
        placeholder, info = unknown_tool(name, list(self._entries))
        result = ToolEntry(placeholder, self._new_breaker(), self._context)._finish(_failure(placeholder, info))
        if self.tracer is not None:
            self.tracer.end(self.tracer.start_unknown(name, call_id), result)
        return result
