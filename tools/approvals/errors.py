"""Errors of the approvals layer, each naming the thing, the cause and the fix.

::

    ApprovalError (TooldeckError)
    +-- ApprovalsFileError        the approvals file is unreadable, too large or invalid (never overwritten)
    +-- InvalidFreedomLevelError  a freedom level that is not low, medium or high (also a ValueError)
    +-- InvalidApprovalIdError    an approval id that is not a tool name (also a ValueError)
    +-- ApprovalMismatchError     a decision given for other arguments than the call's (also a ValueError)

These are for the developer and the operator. A call refused for want of an approval is
never an exception: it is a ``permission_denied`` :class:`~tools.result.ToolResult`.
"""

from __future__ import annotations

from tools.errors import DataFileError, TooldeckError


class ApprovalError(TooldeckError):
    """An approvals operation failed; the message says what to do."""


class ApprovalsFileError(ApprovalError, DataFileError):
    """The approvals file cannot be used; it is left untouched (``path``, ``line``, ``problem``)."""

    kind = "approvals file"


class InvalidFreedomLevelError(ApprovalError, ValueError):
    """A freedom level name that is not one of ``low``, ``medium``, ``high``."""


class InvalidApprovalIdError(ApprovalError, ValueError):
    """An approval id that is not a tool name (``^[a-zA-Z0-9_-]{1,64}$``)."""


class ApprovalMismatchError(ApprovalError, ValueError):
    """A decision made for other arguments than the call now carries (``Approve.shown_hash``)."""
