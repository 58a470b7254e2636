"""Approvals: the freedom dial and human-in-the-loop (DESIGN section 11).

::

    store = ApprovalsStore.from_env(os.environ)                 # ~/.config/tooldeck/approvals.json
    policy = ApprovalPolicy(freedom_from_env(os.environ), store)  # TOOLDECK_FREEDOM, else the file's level
    registry = LocalToolRegistry(policy=policy)                  # every call path consults it
    registry.call_tool("delete_file", path="x")                  # -> permission_denied: a person must approve

    check = registry.check_approval("delete_file", {"path": "x"})
    request = check.request({"path": "x"}, call_id="call_1")     # JSON-serialisable
    approved = policy.apply(request, Approve(remember=False))     # what a person decided
    registry.call_tool_raw("delete_file", approved.arguments, approved=approved)   # runs once, exactly so

A tool (or one action of a composite tool) may show what a call would change with an
``approval_preview(request) -> str | None`` method (:mod:`tools.approvals.preview`): the request
carries it, and the approval is bound to it.

Saved states (a paused run waiting for a person) are signed with :class:`StateSigner`
(HMAC-SHA256, a ``0600`` key in the user's configuration directory): an edited state is refused.

A synchronous ``approver`` callback (``(ApprovalRequest) -> Approve | Deny``) on a registry,
a view or an ``ExecutionService`` asks a person on the spot instead (terminals, CLIs).
"""

from tools.approvals._gate import call_with_approval
from tools.approvals.backend import ApprovalsBackend, open_approvals_store
from tools.approvals.decisions import ApprovalRequest, Approve, ApprovedCall, Approver, Deny, denial
from tools.approvals.errors import (
    ApprovalError,
    ApprovalMismatchError,
    ApprovalsFileError,
    InvalidApprovalIdError,
    InvalidFreedomLevelError,
)
from tools.approvals.hashing import arguments_hash, canonical_json, tool_version_hash
from tools.approvals.levels import DEFAULT_FREEDOM, FREEDOM_VARIABLE, FreedomLevel, freedom_from_env
from tools.approvals.policy import ApprovalCheck, ApprovalPolicy
from tools.approvals.postgres_store import ApprovalsDatabaseError, PostgresApprovalsStore
from tools.approvals.preview import Preview, approval_preview, files_diff
from tools.approvals.signing import (
    STATE_KEY_FILE,
    STATE_KEY_FILE_VARIABLE,
    StateKeyError,
    StateSignatureError,
    StateSigner,
)
from tools.approvals.store import (
    APPROVALS_FILE,
    MAX_APPROVALS_BYTES,
    ApprovalsFile,
    ApprovalsStore,
    ToolApproval,
    check_approval_id,
)

__all__ = [
    "APPROVALS_FILE",
    "DEFAULT_FREEDOM",
    "FREEDOM_VARIABLE",
    "MAX_APPROVALS_BYTES",
    "STATE_KEY_FILE",
    "STATE_KEY_FILE_VARIABLE",
    "ApprovalCheck",
    "ApprovalError",
    "ApprovalMismatchError",
    "ApprovalPolicy",
    "ApprovalRequest",
    "ApprovalsBackend",
    "ApprovalsDatabaseError",
    "ApprovalsFile",
    "ApprovalsFileError",
    "ApprovalsStore",
    "Approve",
    "ApprovedCall",
    "Approver",
    "Deny",
    "FreedomLevel",
    "InvalidApprovalIdError",
    "InvalidFreedomLevelError",
    "PostgresApprovalsStore",
    "Preview",
    "StateKeyError",
    "StateSignatureError",
    "StateSigner",
    "ToolApproval",
    "approval_preview",
    "arguments_hash",
    "call_with_approval",
    "canonical_json",
    "check_approval_id",
    "denial",
    "files_diff",
    "freedom_from_env",
    "open_approvals_store",
    "tool_version_hash",
]
