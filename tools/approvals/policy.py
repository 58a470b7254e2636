"""``ApprovalPolicy``: may this call run now, or must a person approve it first?

The decision takes the tool's risk (from its :class:`~tools.routing.ToolManual`), the
freedom level (:class:`~tools.approvals.FreedomLevel`) and the stored approvals
(:class:`~tools.approvals.ApprovalsStore`, each bound to the tool's version hash)::

    policy = ApprovalPolicy(store=ApprovalsStore.from_env(os.environ))   # level from the file
    registry = LocalToolRegistry(policy=policy)       # every call path consults it
    check = policy.check(registry.get_tool("shell"), {"cmd": "ls"})
    check.needs_approval, check.reason
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tools.approvals.decisions import ApprovalRequest, Approve, ApprovedCall
from tools.approvals.errors import ApprovalError
from tools.approvals.hashing import arguments_hash, tool_version_hash
from tools.approvals.levels import DEFAULT_FREEDOM, FreedomLevel
from tools.approvals.preview import Preview, approval_preview
from tools.approvals.store import ToolApproval
from tools.manual import RiskLevel, ToolManual, risk_rank

if TYPE_CHECKING:
    from tools.approvals.backend import ApprovalsBackend
    from tools.base import Arguments, BaseTool


@dataclass(frozen=True)
class ApprovalCheck:
    """The policy's answer for one call.

    Attributes:
        tool: The tool's name.
        allowed: The call may run now.
        needs_approval: A person must approve it first (``not allowed``).
        reason: Why, in a sentence a person can read.
        risk: The tool's risk.
        freedom: The freedom level in force.
        version_hash: The tool's version hash (None when the level alone decided).
        approved_version: The version hash of the stored approval, if any (it differs from
            ``version_hash`` when the tool changed since it was approved).
        previewer: Makes the preview of a call's arguments (what :meth:`request` shows),
            when the check was made for a tool (not a bare manual).
    """

    tool: str
    allowed: bool
    needs_approval: bool
    reason: str
    risk: RiskLevel
    freedom: FreedomLevel
    version_hash: str | None = None
    approved_version: str | None = None
    previewer: Callable[[Mapping[str, Any]], Preview | None] | None = field(default=None, repr=False, compare=False)

    @property
    def changed(self) -> bool:
        """True when the tool was approved for another version than its current one."""
        return self.approved_version is not None and self.approved_version != self.version_hash

    def request(self, arguments: Arguments, *, call_id: str | None = None) -> ApprovalRequest:
        """The :class:`ApprovalRequest` of a call this check says needs approval.

        Raises:
            InvalidArgumentsError: ``arguments`` is not a JSON object.
            ValueError: the check did not need approval (nothing to request).
        """
        from tools._arguments import parse_arguments

        if not self.needs_approval or self.version_hash is None:
            raise ValueError(f"the call of {self.tool!r} needs no approval ({self.reason})")
        decoded = parse_arguments(arguments, self.tool)
        preview = self.previewer(decoded) if self.previewer is not None else None
        return ApprovalRequest(
            tool=self.tool,
            arguments=decoded,
            arguments_hash=arguments_hash(decoded),
            version_hash=self.version_hash,
            risk=self.risk,
            freedom=self.freedom,
            reason=self.reason,
            call_id=call_id,
            preview=None if preview is None else preview.text,
            preview_hash=None if preview is None else preview.digest,
        )


def action_of(arguments: Arguments, preset: Mapping[str, Any] | None = None) -> object:
    """The ``action`` a call names: the preset's (a registration that fixes it), else the
    arguments' (a dict, or JSON text as the model sent it); None when there is none."""
    if preset and "action" in preset:
        return preset["action"]
    if isinstance(arguments, Mapping):
        return arguments.get("action")
    if isinstance(arguments, (str, bytes)):
        try:
            decoded = json.loads(arguments)
        except (ValueError, RecursionError):
            return None
        return decoded.get("action") if isinstance(decoded, dict) else None
    return None


class ApprovalPolicy:
    """Decides which calls need a person's approval.

    Args:
        level: The freedom level; None: the store's level, else ``medium``
            (:data:`~tools.approvals.DEFAULT_FREEDOM`). Pass the per-run override
            (``freedom_from_env(os.environ)``) here.
        store: Where approvals are kept (and the level, when ``level`` is None): an
            :class:`~tools.approvals.ApprovalsStore` file or a
            :class:`~tools.approvals.PostgresApprovalsStore`; None: no stored approvals,
            and ``Approve(remember=True)`` cannot be kept.

    Raises:
        InvalidFreedomLevelError: ``level`` is not ``low``, ``medium`` or ``high``.
    """

    def __init__(self, level: FreedomLevel | str | None = None, store: ApprovalsBackend | None = None) -> None:
        self._level = None if level is None else FreedomLevel.parse(level)
        self.store = store

    def __repr__(self) -> str:
        return f"ApprovalPolicy(level={self._level and self._level.value!r}, store={self.store!r})"

    @property
    def level(self) -> FreedomLevel:
        """The level in force now: the given one, else the store's, else ``medium``.

        Raises:
            ApprovalsFileError: the level comes from the store and its file is unusable.
        """
        if self._level is not None:
            return self._level
        stored = self.store.freedom() if self.store is not None else None
        return stored if stored is not None else DEFAULT_FREEDOM

    @property
    def level_source(self) -> str:
        """Where :attr:`level` comes from: ``"given"``, ``"file"`` or ``"default"``."""
        if self._level is not None:
            return "given"
        return "file" if self.store is not None and self.store.freedom() is not None else "default"

    def check(
        self,
        tool: BaseTool[Any, Any] | ToolManual,
        arguments: Arguments = None,
        *,
        manual: ToolManual | None = None,
        preset: Mapping[str, Any] | None = None,
        version_hash: str | None = None,
    ) -> ApprovalCheck:
        """Whether a call of ``tool`` may run now or needs a person's approval.

        The decision depends on the tool (its risk and version) and the stored approvals.
        For a multi-action tool (``manual.actions``) the risk is that of the action the
        ``arguments`` (or the ``preset``) name; a missing or unknown action counts as the
        tool's riskiest (fail closed).

        Args:
            tool: The tool, or its manual (then ``version_hash`` is required).
            arguments: The call's arguments (their ``action`` picks a multi-action tool's
                risk).
            manual: The manual of the tool's registration (default: the tool's own).
            preset: Arguments its registration fixes (part of its version hash).
            version_hash: The tool's version hash, when the caller knows it (e.g. an adopted
                tool's ``ToolConfig.compute_version_hash()``).

        Raises:
            ApprovalsFileError: the approvals file is unusable (fail closed: nothing runs).
            TypeError: a manual was given as ``tool`` without ``version_hash``.
        """
        if isinstance(tool, ToolManual):
            used = manual or tool
            if version_hash is None:
                raise TypeError(f"check({used.name!r}): pass version_hash= with a manual (it cannot hash the tool)")
        else:
            used = manual if manual is not None else tool.get_manual()
        level = self.level
        name, risk, which = used.name, used.risk, ""
        if used.actions:
            action = action_of(arguments, preset)
            risk = used.risk_for(action)
            known = used.action_risk(action) is not None
            which = (
                f"action {action!r} of {name!r} is {risk}: "
                if known
                else f"the call names no known action of {name!r}, so it counts as its riskiest ({risk}): "
            )
        if not level.requires_approval(risk):
            reason = f"{which}{risk} {'calls' if which else 'tools'} run freely at freedom level {level}"
            return ApprovalCheck(name, True, False, reason, risk, level)
        if version_hash is None:
            version_hash = tool_version_hash(tool, manual=used, preset=preset)  # type: ignore[arg-type]
        stored = self.store.get(name) if self.store is not None else None
        approved = stored.version_hash if stored is not None else None
        # An approval covers calls up to the risk it was given for: approving a multi-action
        # tool's `list` "always" does not approve its `promote_draft`, and a tool whose risk an
        # operator raised since must be approved again.
        covered = stored is None or stored.risk is None or risk_rank(stored.risk) >= risk_rank(risk)
        if approved == version_hash and stored is not None and covered:
            when = stored.approved_at.strftime("%Y-%m-%d")
            reason = f"a person approved this version of {name!r} on {when}"
            return ApprovalCheck(name, True, False, reason, risk, level, version_hash, approved)
        if approved == version_hash and stored is not None:
            reason = (
                f"{which}{name!r} was approved for {stored.risk} calls only; a person must approve this {risk} call"
            )
        elif approved is not None:
            reason = (
                f"{name!r} was approved for an earlier version; its configuration or schema changed since, "
                "so it must be approved again"
            )
        else:
            what = "calls" if which else "tools"
            reason = f"{which}{risk} {what} need a person's approval at freedom level {level} ({level.meaning})"
        previewer = None if isinstance(tool, ToolManual) else functools.partial(approval_preview, tool, preset=preset)
        return ApprovalCheck(name, False, True, reason, risk, level, version_hash, approved, previewer)

    def apply(self, request: ApprovalRequest, decision: Approve) -> ApprovedCall:
        """The call ``decision`` approves; with ``remember=True`` the approval is also stored.

        Raises:
            InvalidArgumentsError: the edited arguments are not a JSON object.
            ApprovalMismatchError: ``decision.shown_hash`` is not the request's arguments hash.
            ApprovalError: ``remember=True`` but the policy has no store, or the store failed.
        """
        approved = request.approved(decision)
        if decision.remember:
            self.remember(request.tool, request.version_hash, risk=request.risk)
        return approved

    def remember(self, tool: str, version_hash: str, *, risk: RiskLevel | None = None) -> ToolApproval:
        """Store an approval of ``tool`` for ``version_hash`` (what ``Approve(remember=True)`` does).

        Raises:
            ApprovalError: the policy has no store, or the store failed.
        """
        if self.store is None:
            raise ApprovalError(
                f"cannot remember the approval of {tool!r}: this ApprovalPolicy has no store; "
                "create it with ApprovalPolicy(store=ApprovalsStore(...))"
            )
        return self.store.approve(tool, version_hash, risk=risk)
