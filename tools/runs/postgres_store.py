"""`PostgresRunStore`: run records in PostgreSQL, so every replica lists and shows every run.

The contract of :class:`~tools.runs.FileRunStore` (see :class:`~tools.runs.RunStore`), in one
table (``tooldeck_runs``): one row per run, its record as the same JSON text the file store
writes (so any text a model or tool produced, NUL and lone surrogates included, round-trips
exactly), with the run's status, ``updated_at`` and the time it was saved beside it for
filtering, ordering and bounds.

* ``save`` replaces the run's row and prunes, in one transaction: a reader never sees half a
  record, and two replicas saving the same run leave one whole record (the later).
* ``list`` is newest first by ``updated_at`` (then id), optionally of one status; rows that
  are not readable records are skipped with a warning and do not count against ``limit``.
* ``prune`` deletes records not saved for ``max_age``, then the oldest past ``max_runs``,
  finished runs first: paused runs wait for a person, so they go last.

Records are stored as given: redact them first (`tools.runs.redacted`), as for the files.
"""

from __future__ import annotations

import builtins
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any

from tools.postgres import Database, DatabaseError, Migration, database_for
from tools.runs.store import (
    DEFAULT_MAX_AGE,
    DEFAULT_MAX_RUNS,
    MAX_RECORD_BYTES,
    RunStoreError,
    check_run_id,
    parse_record,
    record_text,
)

if TYPE_CHECKING:
    import psycopg

    from tools.runs.model import RunRecord, RunStatus

logger = logging.getLogger(__name__)

TABLE = "tooldeck_runs"
MIGRATIONS = (
    Migration(
        "run records",
        f"""
        CREATE TABLE {TABLE} (
            id text PRIMARY KEY CHECK (id ~ '^[A-Za-z0-9_-]{{1,80}}$'),
            status text NOT NULL,
            updated_at timestamptz NOT NULL,
            saved_at timestamptz NOT NULL,
            record text NOT NULL
        );
        CREATE INDEX {TABLE}_updated ON {TABLE} (updated_at DESC, id);
        CREATE INDEX {TABLE}_status_updated ON {TABLE} (status, updated_at DESC, id);
        CREATE INDEX {TABLE}_saved ON {TABLE} (saved_at);
        """,
    ),
)
_PAGE = 100


def _utc_now() -> datetime:
    return datetime.now(timezone.utc)


class PostgresRunStore:
    """Run records kept in a PostgreSQL table (a :class:`~tools.runs.RunStore`; see the
    module docstring).

    Args:
        database_url: ``postgresql://...`` (``TOOLDECK_DATABASE_URL``); the store opens its
            own connection pool and closes it on `close`.
        database: A :class:`~tools.postgres.Database` shared with other stores (instead of
            ``database_url``).
        max_runs: Most records kept; the oldest go first (records of paused runs last).
        max_age: Records not saved for longer are removed.
        now: The current UTC time (injectable for tests).

    Raises:
        ValueError: ``max_runs`` below 1; neither or both of ``database_url`` and
            ``database``, or a URL that is not ``postgresql://``.
    """

    def __init__(
        self,
        database_url: str | None = None,
        *,
        database: Database | None = None,
        max_runs: int = DEFAULT_MAX_RUNS,
        max_age: timedelta = DEFAULT_MAX_AGE,
        now: Callable[[], datetime] = _utc_now,
    ) -> None:
        if max_runs < 1:
            raise ValueError(f"max_runs must be at least 1, got {max_runs}")
        self.database, self._owned = database_for(database_url, database, store="PostgresRunStore")
        self.max_runs = max_runs
        self.max_age = max_age
        self._now = now

    def __repr__(self) -> str:
        return f"PostgresRunStore({self.database.location!r})"

    @property
    def location(self) -> str:
        """The database and table, for people (never the password)."""
        return f"{self.database.location} (table {TABLE})"

    def close(self) -> None:
        """Close the connection pool when this store opened it."""
        if self._owned:
            self.database.close()

    def save(self, record: RunRecord) -> None:
        """Store ``record`` (replacing the run's row), then prune, in one transaction.

        Raises:
            RunStoreError: the id is not a run id, or the database cannot be used (nothing
                was changed).
        """
        check_run_id(record.id)
        with self._table("save the run record") as conn:
            conn.execute(
                f"INSERT INTO {TABLE} (id, status, updated_at, saved_at, record) VALUES (%s, %s, %s, %s, %s) "  # noqa: S608
                "ON CONFLICT (id) DO UPDATE SET status = excluded.status, updated_at = excluded.updated_at, "
                "saved_at = excluded.saved_at, record = excluded.record",
                (record.id, record.status, record.updated_at, self._now(), record_text(record)),
            )
            self._prune(conn)

    def get(self, run_id: str) -> RunRecord | None:
        """The record of ``run_id`` (None when there is none).

        Raises:
            RunStoreError: ``run_id`` is not a run id, the row is not a readable record, or
                the database cannot be used.
        """
        check_run_id(run_id)
        with self._table("read the run record") as conn:
            query = f"SELECT record, octet_length(record) FROM {TABLE} WHERE id = %s"  # noqa: S608
            row = conn.execute(query, (run_id,)).fetchone()
        return None if row is None else self._parse(run_id, row[0], row[1])

    def list(self, *, status: RunStatus | None = None, limit: int | None = 50) -> builtins.list[RunRecord]:
        """Records newest first (see `RunStore.list`); unreadable rows are skipped with a warning.

        Raises:
            RunStoreError: the database cannot be used.
        """
        if limit is not None and limit <= 0:
            return []
        where, params = ("WHERE status = %s", [status]) if status is not None else ("", [])
        records: builtins.list[RunRecord] = []
        offset = 0
        with self._table("list the run records") as conn:
            while limit is None or len(records) < limit:
                rows = conn.execute(
                    f"SELECT id, record, octet_length(record) FROM {TABLE} {where} "  # noqa: S608
                    "ORDER BY updated_at DESC, id LIMIT %s OFFSET %s",
                    (*params, _PAGE, offset),
                ).fetchall()
                for run_id, text, size in rows:
                    try:
                        records.append(self._parse(run_id, text, size))
                    except RunStoreError as exc:
                        logger.warning("skipping run record %s: %s", run_id, exc)
                if len(rows) < _PAGE:
                    break
                offset += _PAGE
        return records if limit is None else records[:limit]

    def prune(self) -> int:
        """Remove records not saved for ``max_age``, then the oldest past ``max_runs``
        (finished runs first, paused ones last); how many were removed.

        Raises:
            RunStoreError: the database cannot be used.
        """
        with self._table("prune the run records") as conn:
            return self._prune(conn)

    def _prune(self, conn: psycopg.Connection[tuple[Any, ...]]) -> int:
        aged = conn.execute(f"DELETE FROM {TABLE} WHERE saved_at < %s", (self._now() - self.max_age,)).rowcount  # noqa: S608
        excess = conn.execute(
            f"DELETE FROM {TABLE} WHERE id IN (SELECT id FROM {TABLE} "  # noqa: S608
            "ORDER BY status = 'paused', saved_at, id LIMIT greatest((SELECT count(*) FROM "
            f"{TABLE}) - %s, 0))",
            (self.max_runs,),
        ).rowcount
        return max(aged, 0) + max(excess, 0)

    def _parse(self, run_id: str, text: str, size: int) -> RunRecord:
        where = f"run record {run_id!r} in {self.location}"
        if size > MAX_RECORD_BYTES:
            raise RunStoreError(f"{where} is larger than {MAX_RECORD_BYTES} bytes; not a record tooldeck wrote")
        return parse_record(text, where=where, run_id=run_id)

    @contextmanager
    def _table(self, doing: str) -> Iterator[psycopg.Connection[tuple[Any, ...]]]:
        try:
            with self.database.session("runs", MIGRATIONS) as conn:
                yield conn
        except DatabaseError as exc:
            raise RunStoreError(
                f"cannot {doing}: {exc}; check TOOLDECK_DATABASE_URL, or turn recording off (--no-record)"
            ) from exc
