"""`PostgresClaimStore`: the resume claim ledger in PostgreSQL, shared by every host.

One row per claimed call (``tooldeck_claims``: run id, call key, time), primary key
``(run_id, call_key)``. A resume claims all its calls in **one transaction**: one ``INSERT
... ON CONFLICT DO NOTHING RETURNING`` of every key; when any key was already there, the
transaction is rolled back, so a resume gets all its calls or none. Two resumes racing for
the same call on different hosts meet at the primary key: the second waits for the first
transaction, then finds the key taken. A process killed mid-transaction never commits, so
it leaves nothing behind.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any

from orchestrator.graph.claims import ClaimStoreError
from tools.postgres import Database, DatabaseError, Migration, database_for

if TYPE_CHECKING:
    import psycopg

__all__ = ["PostgresClaimStore"]

TABLE = "tooldeck_claims"
MIGRATIONS = (
    Migration(
        "resume claims",
        f"""
        CREATE TABLE {TABLE} (
            run_id text NOT NULL,
            call_key text NOT NULL,
            claimed_at timestamptz NOT NULL,
            PRIMARY KEY (run_id, call_key)
        );
        CREATE INDEX {TABLE}_claimed_at ON {TABLE} (claimed_at);
        """,
    ),
)


def _utc_now() -> datetime:
    return datetime.now(timezone.utc)


class PostgresClaimStore:
    """Claims kept in a PostgreSQL table (a `ClaimStore`); see the module docstring.

    Args:
        database_url: ``postgresql://...``; the store opens its own pool (closed by `close`).
        database: A shared :class:`tools.postgres.Database` instead of ``database_url``.
        retention: Claims older than this are deleted (as the file ledger does); an
            `AgentGraph` refuses states older than its ``max_state_age``, which may not
            exceed it.
        clock: Current UTC time (injectable for tests).

    Raises:
        ValueError: neither or both of ``database_url`` and ``database``, or a retention
            that is not positive.
    """

    def __init__(
        self,
        database_url: str | None = None,
        *,
        database: Database | None = None,
        retention: timedelta = timedelta(days=30),
        clock: Callable[[], datetime] = _utc_now,
    ) -> None:
        if retention <= timedelta(0):
            raise ValueError(f"retention must be positive, got {retention}")
        self.database, self._owned = database_for(database_url, database, store="PostgresClaimStore")
        self.retention = retention
        self._clock = clock

    def __repr__(self) -> str:
        return f"PostgresClaimStore({self.database.location!r})"

    def claim(self, run_id: str, keys: Sequence[str]) -> list[str]:
        """See `ClaimStore.claim`: every key at once in one transaction, or none."""
        wanted = list(dict.fromkeys(keys))
        if not wanted:
            return []
        now = self._clock()
        with self._ledger() as conn:
            rows = conn.execute(
                f"INSERT INTO {TABLE} (run_id, call_key, claimed_at) "  # noqa: S608 - constant table name
                "SELECT %s, key, %s FROM unnest(%s::text[]) AS key ON CONFLICT DO NOTHING RETURNING call_key",
                (run_id, now, wanted),
            ).fetchall()
            fresh = {row[0] for row in rows}
            taken = [key for key in wanted if key not in fresh]
            if taken:
                conn.rollback()
                return taken
            conn.execute(f"DELETE FROM {TABLE} WHERE claimed_at < %s", (now - self.retention,))  # noqa: S608
        return []

    def claimed(self, run_id: str) -> list[str]:
        """The keys claimed for ``run_id``, in claim order (for inspection)."""
        with self._ledger() as conn:
            rows = conn.execute(
                f"SELECT call_key FROM {TABLE} WHERE run_id = %s ORDER BY claimed_at, call_key",  # noqa: S608
                (run_id,),
            ).fetchall()
        return [row[0] for row in rows]

    def close(self) -> None:
        """Close the connection pool when this store opened it."""
        if self._owned:
            self.database.close()

    @contextmanager
    def _ledger(self) -> Iterator[psycopg.Connection[tuple[Any, ...]]]:
        """A transaction on the migrated ledger; database failures as `ClaimStoreError`."""
        try:
            with self.database.session("claims", MIGRATIONS) as conn:
                yield conn
        except DatabaseError as exc:
            raise ClaimStoreError(f"claim ledger: {exc}; nothing was claimed, so nothing ran") from exc
