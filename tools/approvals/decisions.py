"""What a person decides about a call that needs approval, and what the decision carries.

* :class:`ApprovalRequest`: one call waiting for a person (tool, arguments, their hash, risk,
  why it needs approval, and what it would change when the tool shows it: ``preview``, see
  :mod:`tools.approvals.preview`). JSON-serialisable (:meth:`ApprovalRequest.to_dict` /
  :meth:`ApprovalRequest.from_dict`), so a paused agent run can store it.
* :class:`Approve` / :class:`Deny`: the person's decision (small frozen values).
* :class:`ApprovedCall`: an approved call, bound to the tool's name, its version hash, the
  hash of exactly the arguments approved and the hash of the preview shown. A registry given one
  (``call_tool_raw(name, arguments, approved=...)``) runs the call despite its policy, and only
  when the arguments are exactly those approved and the tool has not changed since.
* :data:`Approver`: a synchronous callback ``(ApprovalRequest) -> Approve | Deny`` for
  terminals and CLIs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tools._arguments import parse_arguments
from tools.approvals.errors import ApprovalMismatchError
from tools.approvals.hashing import arguments_hash
from tools.approvals.levels import FreedomLevel
from tools.approvals.preview import MAX_PREVIEW_CHARS, preview_digest
from tools.manual import RiskLevel

if TYPE_CHECKING:
    from tools.base import Arguments


@dataclass(frozen=True)
class Approve:
    """A person approves a call.

    Attributes:
        arguments: Run with these arguments instead of the requested ones (they are
            validated like any call, and hashed again); None: exactly as requested.
        remember: Also store an approval for this tool version, so later calls run
            without asking until the tool changes.
        shown_hash: The ``arguments_hash`` of the request the person was shown, when the
            decision is applied later (a paused run resumed from a file): the decision is
            refused unless the request still carries exactly that hash, so arguments
            changed after the person looked are never run. None: not checked.
    """

    arguments: Mapping[str, Any] | None = None
    remember: bool = False
    shown_hash: str | None = None


@dataclass(frozen=True)
class Deny:
    """A person denies a call; ``message`` (optional) is passed on to the model."""

    message: str = ""


#: A synchronous callback that asks a person (a terminal prompt, a CLI).
Approver = Callable[["ApprovalRequest"], Approve | Deny]


@dataclass(frozen=True)
class ApprovalRequest:
    """A call that needs a person's approval.

    Attributes:
        tool: The tool's registered name.
        arguments: The call's arguments, decoded.
        arguments_hash: :func:`~tools.approvals.arguments_hash` of ``arguments``.
        version_hash: The tool's :func:`~tools.approvals.tool_version_hash`.
        risk: The tool's risk.
        freedom: The freedom level in force.
        reason: Why it needs approval, in a sentence a person can read.
        call_id: The model's ``tool_call`` id, when the call came from a model.
        preview: What the call would change (e.g. the code diff an install brings), when the
            tool shows one (:mod:`tools.approvals.preview`); show it with the request.
        preview_hash: SHA-256 of the whole preview: the approval is bound to it.
    """

    tool: str
    arguments: dict[str, Any]
    arguments_hash: str
    version_hash: str
    risk: RiskLevel
    freedom: FreedomLevel
    reason: str
    call_id: str | None = None
    preview: str | None = None
    preview_hash: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable dict (the inverse of :meth:`from_dict`)."""
        out = {
            "call_id": self.call_id,
            "tool": self.tool,
            "arguments": self.arguments,
            "arguments_hash": self.arguments_hash,
            "version_hash": self.version_hash,
            "risk": self.risk,
            "freedom": self.freedom.value,
            "reason": self.reason,
        }
        if self.preview is not None:
            out["preview"] = self.preview
            out["preview_hash"] = self.preview_hash
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ApprovalRequest:
        """The request :meth:`to_dict` produced.

        Raises:
            ValueError: a field is missing or has the wrong type, or ``arguments_hash`` does
                not match ``arguments`` (the stored request was altered).
        """
        try:
            arguments = data["arguments"]
            if not isinstance(arguments, dict):
                raise TypeError("arguments must be an object")
            request = cls(
                tool=str(data["tool"]),
                arguments=dict(arguments),
                arguments_hash=str(data["arguments_hash"]),
                version_hash=str(data["version_hash"]),
                risk=data["risk"],
                freedom=FreedomLevel.parse(data["freedom"]),
                reason=str(data.get("reason", "")),
                call_id=None if data.get("call_id") is None else str(data["call_id"]),
                **_preview_fields(data),
            )
        except (KeyError, TypeError) as exc:
            raise ValueError(f"not an approval request: {exc}") from None
        if arguments_hash(request.arguments) != request.arguments_hash:
            raise ValueError(f"approval request for {request.tool!r}: arguments_hash does not match its arguments")
        return request

    def approved(self, decision: Approve | None = None) -> ApprovedCall:
        """The call as approved by ``decision`` (default: exactly as requested).

        Raises:
            InvalidArgumentsError: the edited arguments are not a JSON object.
            ApprovalMismatchError: ``decision.shown_hash`` is not this request's
                ``arguments_hash`` (the person was shown other arguments).
        """
        if decision is not None and decision.shown_hash is not None and decision.shown_hash != self.arguments_hash:
            raise ApprovalMismatchError(
                f"the approval of {self.tool!r} (call {self.call_id or '-'}) was given for arguments with hash "
                f"{decision.shown_hash[:16]}..., but the call's arguments hash to {self.arguments_hash[:16]}...; "
                "the arguments changed after they were shown, so the call was not run: show them again and "
                "approve what is shown"
            )
        edited = None if decision is None else decision.arguments
        if edited is None:
            return ApprovedCall.of(self.tool, self.arguments, self.version_hash, self.call_id, self.preview_hash)
        # the preview shown was made for the requested arguments: edited ones were not previewed
        shown = self.preview_hash if arguments_hash(edited) == self.arguments_hash else None
        return ApprovedCall.of(self.tool, edited, self.version_hash, self.call_id, shown)


@dataclass(frozen=True)
class ApprovedCall:
    """A call a person approved: run it with ``registry.call_tool_raw(..., approved=this)``.

    Attributes:
        tool: The tool's registered name.
        arguments: Exactly the arguments approved.
        arguments_hash: Their hash; the registry refuses other arguments.
        version_hash: The tool version approved; the registry refuses a changed tool.
        call_id: The model's ``tool_call`` id, when known.
        preview_hash: The hash of the preview the person was shown (None: none was); for a
            tool that shows a preview, the registry refuses the call unless the preview it
            makes now hashes the same.
    """

    tool: str
    arguments: dict[str, Any]
    arguments_hash: str
    version_hash: str
    call_id: str | None = None
    preview_hash: str | None = None

    @classmethod
    def of(
        cls,
        tool: str,
        arguments: Arguments,
        version_hash: str,
        call_id: str | None = None,
        preview_hash: str | None = None,
    ) -> ApprovedCall:
        """An approved call of ``tool`` with ``arguments`` (decoded and hashed now) for ``version_hash``.

        Raises:
            InvalidArgumentsError: ``arguments`` is not a JSON object (or JSON text of one).
        """
        kept = parse_arguments(arguments, tool)
        return cls(tool, kept, arguments_hash(kept), version_hash, call_id, preview_hash)


def _preview_fields(data: Mapping[str, Any]) -> dict[str, Any]:
    """``preview`` and ``preview_hash`` of a stored request, checked to belong together."""
    preview, digest = data.get("preview"), data.get("preview_hash")
    if preview is None and digest is None:
        return {}
    if not isinstance(preview, str) or len(preview) > MAX_PREVIEW_CHARS + 200 or not isinstance(digest, str):
        raise TypeError("preview must be a text of at most the preview limit, with its preview_hash")
    if len(digest) != 64 or (len(preview) <= MAX_PREVIEW_CHARS and preview_digest(preview) != digest):
        raise TypeError("preview_hash does not match the preview")
    return {"preview": preview, "preview_hash": digest}


def denial(request: ApprovalRequest, decision: Deny) -> tuple[str, dict[str, Any]]:
    """The model-facing message and the details of a call a person denied.

    Answer the call with ``registry.refuse(request.tool, "permission_denied", message,
    details=details)``: the message passes the person's words on (whitespace folded, cut
    to 1,000 characters) and tells the model not to retry.
    """
    said = " ".join(decision.message.split())[:1000]
    message = (
        f"The call of '{request.tool}' was not approved"
        + (f": {said}" if said else " by the person asked")
        + ". It was not run; do not retry it. Continue without it, or ask the user what to do instead."
    )
    details = {"reason": "denied", "tool": request.tool, "message": said, "arguments_hash": request.arguments_hash}
    return message, details
