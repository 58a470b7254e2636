"""`ApprovalsBackend`: what an approvals store offers, whichever place keeps the approvals.

Two implementations: :class:`~tools.approvals.ApprovalsStore` (a JSON file, the default) and
:class:`~tools.approvals.PostgresApprovalsStore` (a PostgreSQL database shared by several
replicas, extra ``postgres``). An :class:`~tools.approvals.ApprovalPolicy`, the ``tooldeck``
commands and the orchestrator work with either; :func:`open_approvals_store` picks one from
the setting ``TOOLDECK_DATABASE_URL`` (read by the entry point and handed in).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from tools.approvals.levels import FreedomLevel
    from tools.approvals.store import ApprovalsFile, ToolApproval
    from tools.manual import RiskLevel
    from tools.postgres import Database


@runtime_checkable
class ApprovalsBackend(Protocol):
    """The stored freedom level and the per-tool approvals, each bound to a version hash.

    Every read is fresh (another process's change is seen); every write is atomic.
    Failures raise :class:`~tools.approvals.ApprovalError` subclasses, so an approval
    policy fails closed (nothing runs) when its store cannot be used.
    """

    @property
    def location(self) -> str:
        """Where the approvals are kept, for people (a file path, or a database without its password)."""
        ...

    def load(self) -> ApprovalsFile:
        """Everything stored now."""
        ...

    def freedom(self) -> FreedomLevel | None:
        """The stored freedom level, or None when none is set."""
        ...

    def get(self, tool_id: str) -> ToolApproval | None:
        """The stored approval of ``tool_id`` (whatever its version), or None."""
        ...

    def approvals(self) -> dict[str, ToolApproval]:
        """Every stored approval by tool name, sorted by name."""
        ...

    def is_approved(self, tool_id: str, version_hash: str) -> bool:
        """True when ``tool_id`` is approved for exactly ``version_hash``."""
        ...

    def approve(self, tool_id: str, version_hash: str, *, risk: RiskLevel | None = None) -> ToolApproval:
        """Store (or replace) the approval of ``tool_id`` for ``version_hash``."""
        ...

    def revoke(self, tool_id: str) -> ToolApproval | None:
        """Remove the approval of ``tool_id``; returns it, or None when there was none."""
        ...

    def set_freedom(self, level: FreedomLevel | str | None) -> FreedomLevel | None:
        """Store the freedom level (None removes it: ``tooldeck configure freedom unset``);
        returns the level stored."""
        ...

    def update(self, change: Callable[[ApprovalsFile], ApprovalsFile]) -> ApprovalsFile:
        """Read everything, apply ``change`` and store the result, atomically: no write of
        another process in between is lost; nothing is written when ``change`` returns its
        argument unchanged. Returns what is stored now."""
        ...


def open_approvals_store(
    env: Mapping[str, str], *, database_url: str | None = None, database: Database | None = None
) -> ApprovalsBackend:
    """The approvals store an entry point should use.

    Args:
        env: The environment (for the default file's location: ``XDG_CONFIG_HOME``, ``HOME``).
        database_url: ``TOOLDECK_DATABASE_URL`` as the entry point read it: set, the
            approvals live in that PostgreSQL database; None, in the user's approvals file.
        database: An open :class:`~tools.postgres.Database` to share (instead of the URL).
    """
    if database is not None or database_url:
        from tools.approvals.postgres_store import PostgresApprovalsStore

        return PostgresApprovalsStore(database_url, database=database)
    from tools.approvals.store import ApprovalsStore

    return ApprovalsStore.from_env(env)
