"""`PostgresApprovalsStore`: the freedom level and the per-tool approvals in PostgreSQL.

The same contract as the approvals file (:class:`~tools.approvals.ApprovalsStore`), for
several replicas that must agree on what a person approved: one row per approved tool
(``tooldeck_approvals``: tool, version hash, approval time, risk) and the level in
``tooldeck_approval_settings``. Every read is fresh; every write is one statement, so
concurrent writers lose nothing. What the database holds is checked on every read like the
file's content: a row that is not a valid approval (edited by hand, say) is an
:class:`ApprovalsDatabaseError`, and a policy then refuses to run anything that needs
approval (it fails closed).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from tools._names import is_tool_name
from tools.approvals.errors import ApprovalError
from tools.approvals.levels import FreedomLevel
from tools.approvals.store import ApprovalsFile, ToolApproval, check_approval_id
from tools.postgres import Database, DatabaseError, Migration, database_for

if TYPE_CHECKING:
    import psycopg

    from tools.manual import RiskLevel

TABLE = "tooldeck_approvals"
SETTINGS_TABLE = "tooldeck_approval_settings"
MIGRATIONS = (
    Migration(
        "approvals and the freedom level",
        f"""
        CREATE TABLE {TABLE} (
            tool text PRIMARY KEY CHECK (tool ~ '^[a-zA-Z0-9_-]{{1,64}}$'),
            version_hash text NOT NULL CHECK (version_hash ~ '^[0-9a-f]{{64}}$'),
            approved_at timestamptz NOT NULL,
            risk text CHECK (risk IN ('safe', 'moderate', 'dangerous'))
        );
        CREATE TABLE {SETTINGS_TABLE} (
            name text PRIMARY KEY,
            value text NOT NULL
        );
        """,
    ),
)
_COLUMNS = "tool, version_hash, approved_at, risk"


class ApprovalsDatabaseError(ApprovalError, DatabaseError):
    """The approvals database cannot be used, or holds something that is not an approval."""


def _utc_now() -> datetime:
    return datetime.now(timezone.utc)


class PostgresApprovalsStore:
    """Approvals kept in a PostgreSQL database (an :class:`~tools.approvals.ApprovalsBackend`).

    Args:
        database_url: ``postgresql://...`` (``TOOLDECK_DATABASE_URL``); the store opens its
            own connection pool and closes it on `close`.
        database: A :class:`~tools.postgres.Database` shared with other stores (instead of
            ``database_url``).
        clock: Current time, for ``approved_at`` (injectable for tests).

    Raises:
        ValueError: neither or both of ``database_url`` and ``database``, or a URL that is
            not ``postgresql://``.
    """

    def __init__(
        self,
        database_url: str | None = None,
        *,
        database: Database | None = None,
        clock: Callable[[], datetime] = _utc_now,
    ) -> None:
        self.database, self._owned = database_for(database_url, database, store="PostgresApprovalsStore")
        self._clock = clock

    def __repr__(self) -> str:
        return f"PostgresApprovalsStore({self.database.location!r})"

    @property
    def location(self) -> str:
        """The database and table, for people (never the password)."""
        return f"{self.database.location} (table {TABLE})"

    def close(self) -> None:
        """Close the connection pool when this store opened it."""
        if self._owned:
            self.database.close()

    # ------------------------------------------------------------------ reading

    def load(self) -> ApprovalsFile:
        """Everything stored now (the same model the approvals file holds)."""
        with self._connection() as conn:
            level = self._level(conn)
            rows = conn.execute(f"SELECT {_COLUMNS} FROM {TABLE} ORDER BY tool").fetchall()  # noqa: S608
        return ApprovalsFile(freedom=level, approvals={row[0]: self._approval(row) for row in rows})

    def freedom(self) -> FreedomLevel | None:
        """The stored freedom level, or None when none is set."""
        with self._connection() as conn:
            return self._level(conn)

    def get(self, tool_id: str) -> ToolApproval | None:
        """The stored approval of ``tool_id`` (whatever its version), or None."""
        if not is_tool_name(tool_id):
            return None  # never stored (approve refuses it)
        with self._connection() as conn:
            row = conn.execute(f"SELECT {_COLUMNS} FROM {TABLE} WHERE tool = %s", (tool_id,)).fetchone()  # noqa: S608
        return None if row is None else self._approval(row)

    def approvals(self) -> dict[str, ToolApproval]:
        """Every stored approval by tool name (sorted by name)."""
        return dict(self.load().approvals)

    def is_approved(self, tool_id: str, version_hash: str) -> bool:
        """True when ``tool_id`` is approved for exactly ``version_hash``."""
        approval = self.get(tool_id)
        return approval is not None and approval.version_hash == version_hash

    # ------------------------------------------------------------------ writing

    def approve(self, tool_id: str, version_hash: str, *, risk: RiskLevel | None = None) -> ToolApproval:
        """Store (or replace) the approval of ``tool_id`` for ``version_hash``.

        Raises:
            InvalidApprovalIdError: ``tool_id`` is not a tool name.
            ApprovalError: ``version_hash`` is not a SHA-256 hex digest.
            ApprovalsDatabaseError: the database cannot be used (nothing is written).
        """
        check_approval_id(tool_id)
        try:
            approval = ToolApproval(version_hash=version_hash, approved_at=self._clock(), risk=risk)
        except ValidationError:
            raise ApprovalError(
                f"version hash {str(version_hash)[:80]!r} of tool {tool_id!r} is not a SHA-256 hex digest "
                "(64 characters 0-9a-f); take it from the refusal's details or from tool_version_hash(tool)"
            ) from None
        with self._connection() as conn:
            self._store_approval(conn, tool_id, approval)
        return approval

    def revoke(self, tool_id: str) -> ToolApproval | None:
        """Remove the approval of ``tool_id``; returns it, or None when there was none.

        Raises:
            InvalidApprovalIdError: ``tool_id`` is not a tool name.
            ApprovalsDatabaseError: the database cannot be used.
        """
        check_approval_id(tool_id)
        with self._connection() as conn:
            row = conn.execute(f"DELETE FROM {TABLE} WHERE tool = %s RETURNING {_COLUMNS}", (tool_id,)).fetchone()  # noqa: S608
        return None if row is None else self._approval(row)

    def set_freedom(self, level: FreedomLevel | str | None) -> FreedomLevel | None:
        """Store the freedom level (None removes it); returns the level stored.

        Raises:
            InvalidFreedomLevelError: ``level`` is not ``low``, ``medium`` or ``high``.
            ApprovalsDatabaseError: the database cannot be used.
        """
        parsed = None if level is None else FreedomLevel.parse(level)
        with self._connection() as conn:
            self._store_level(conn, parsed)
        return parsed

    def update(self, change: Callable[[ApprovalsFile], ApprovalsFile]) -> ApprovalsFile:
        """Read everything under a lock, apply ``change``, write the difference, in one transaction.

        Writers (``approve``, ``revoke``, ``set_freedom``, other updates) wait for the lock,
        so nothing another process writes meanwhile is lost; readers do not wait. Nothing
        is written when ``change`` returns its argument unchanged.

        Raises:
            ApprovalsDatabaseError: the database cannot be used, or holds a row that is not
                an approval (nothing is written).
        """
        with self._connection() as conn:
            conn.execute(f"LOCK TABLE {TABLE}, {SETTINGS_TABLE} IN SHARE ROW EXCLUSIVE MODE")
            level = self._level(conn)
            rows = conn.execute(f"SELECT {_COLUMNS} FROM {TABLE} ORDER BY tool").fetchall()  # noqa: S608
            old = ApprovalsFile(freedom=level, approvals={row[0]: self._approval(row) for row in rows})
            new = change(old)
            if new is old:
                return old
            self._write_difference(conn, old, new)
        return new

    # ------------------------------------------------------------------ internals

    def _write_difference(
        self, conn: psycopg.Connection[tuple[Any, ...]], old: ApprovalsFile, new: ApprovalsFile
    ) -> None:
        gone = sorted(set(old.approvals) - set(new.approvals))
        if gone:
            conn.execute(f"DELETE FROM {TABLE} WHERE tool = ANY(%s)", (gone,))  # noqa: S608
        for tool in sorted(new.approvals):
            if old.approvals.get(tool) != new.approvals[tool]:
                self._store_approval(conn, tool, new.approvals[tool])
        if new.freedom != old.freedom:
            self._store_level(conn, new.freedom)

    @staticmethod
    def _store_approval(conn: psycopg.Connection[tuple[Any, ...]], tool: str, approval: ToolApproval) -> None:
        conn.execute(
            f"INSERT INTO {TABLE} ({_COLUMNS}) VALUES (%s, %s, %s, %s) ON CONFLICT (tool) DO UPDATE "  # noqa: S608
            "SET version_hash = excluded.version_hash, approved_at = excluded.approved_at, risk = excluded.risk",
            (tool, approval.version_hash, approval.approved_at, approval.risk),
        )

    @staticmethod
    def _store_level(conn: psycopg.Connection[tuple[Any, ...]], level: FreedomLevel | None) -> None:
        if level is None:
            conn.execute(f"DELETE FROM {SETTINGS_TABLE} WHERE name = 'freedom'")  # noqa: S608
        else:
            conn.execute(
                f"INSERT INTO {SETTINGS_TABLE} (name, value) VALUES ('freedom', %s) "  # noqa: S608
                "ON CONFLICT (name) DO UPDATE SET value = excluded.value",
                (level.value,),
            )

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[tuple[Any, ...]]]:
        """A connection to a migrated database; every database failure as ApprovalsDatabaseError."""
        try:
            with self.database.session("approvals", MIGRATIONS) as conn:
                yield conn
        except ApprovalsDatabaseError:
            raise
        except DatabaseError as exc:
            raise ApprovalsDatabaseError(f"approvals: {exc}; nothing was changed") from exc

    def _level(self, conn: psycopg.Connection[tuple[Any, ...]]) -> FreedomLevel | None:
        row = conn.execute(f"SELECT value FROM {SETTINGS_TABLE} WHERE name = 'freedom'").fetchone()  # noqa: S608
        if row is None:
            return None
        try:
            return FreedomLevel(row[0])
        except ValueError:
            raise self._bad(f"freedom level {str(row[0])[:40]!r} is not low, medium or high") from None

    def _approval(self, row: tuple[Any, ...]) -> ToolApproval:
        tool, version_hash, approved_at, risk = row
        try:
            check_approval_id(tool)
            return ToolApproval(version_hash=version_hash, approved_at=approved_at, risk=risk)
        except (ApprovalError, ValidationError):
            raise self._bad(f"the row of tool {str(tool)[:80]!r} is not a valid approval") from None

    def _bad(self, problem: str) -> ApprovalsDatabaseError:
        return ApprovalsDatabaseError(
            f"approvals in {self.location}: {problem}; fix or delete that row (tooldeck never overwrites it)"
        )
