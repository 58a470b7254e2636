"""`PostgresMetricsStore`: the learning loop's figures in PostgreSQL, shared by every replica.

The contract of :class:`~tools.telemetry.MetricsStore` (a :class:`~tools.metrics.MetricsSink`
and a :class:`~tools.telemetry.MetricsHistory`), with the figures in one database instead of
one file: ``record()`` only queues the call (no lock, no I/O), a background thread folds the
queue into per-tool deltas and hourly buckets and, every ``flush_interval`` seconds, adds
them to the tables in **one transaction**: ``INSERT ... ON CONFLICT DO UPDATE SET calls =
calls + excluded.calls`` (and so on for every counter and histogram slot), so any number of
processes on any number of hosts count into the same rows without losing an update, and a
process killed mid-flush leaves nothing of it (its transaction never commits). Each flush
carries an id recorded in the same transaction: a flush retried after its commit's answer
was lost is recognised and not counted twice. The tables are in
:mod:`tools.telemetry._pg_metrics`.

Tools past ``max_tools`` distinct entries are counted under
:data:`~tools.metrics.OVERFLOW_BUCKET`: new names are admitted under a transaction-level
advisory lock, so concurrent writers never push the table past the cap. Hours past
``retention`` and beyond ``max_buckets`` rows are deleted now and then (and by `compact`);
reads leave them out at once.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any

from tools.metrics import BUCKETS, DEFAULT_MAX_TOOLS, OVERFLOW_BUCKET, ToolStats
from tools.postgres import Database, DatabaseError, database_for
from tools.result import ToolResult
from tools.telemetry import _pg_metrics as sql
from tools.telemetry._batch import Item, drain_calls, inside, start_flusher
from tools.telemetry._buckets import Bucket, Series, merge_series
from tools.telemetry._file import Figures
from tools.telemetry._reader import merge
from tools.telemetry._reads import StatsReads
from tools.telemetry.series import DEFAULT_RETENTION, HourBucket, ToolSummary, hour_key, hour_start, summarize

if TYPE_CHECKING:
    import psycopg

logger = logging.getLogger(__name__)

_UTC = timezone.utc
#: Seconds between two deletions of expired hours by one process (flushes in between only add).
PRUNE_INTERVAL = 600.0
#: How long applied flush ids are kept (a retry comes within seconds).
_FLUSH_ID_DAYS = 1


def _utc_now() -> datetime:
    return datetime.now(_UTC)


class PostgresMetricsStore(StatsReads):
    """A :class:`~tools.metrics.MetricsSink` and :class:`~tools.telemetry.MetricsHistory`
    whose figures live in PostgreSQL (see the module docstring).

    Use it as a context manager, or call :meth:`close` when done: figures recorded since
    the last flush are written then (and, as a last resort, at interpreter exit).

    Args:
        database_url: ``postgresql://...`` (``TOOLDECK_DATABASE_URL``); the store opens its
            own connection pool and closes it on `close`.
        database: A :class:`~tools.postgres.Database` shared with other stores (instead of
            ``database_url``).
        flush_interval: Seconds between background flushes; None: no background thread,
            only :meth:`flush` and :meth:`close` write.
        max_tools: Distinct tool entries kept (in memory and in the database); further
            tools are counted under :data:`~tools.metrics.OVERFLOW_BUCKET`.
        max_pending: Queued calls that wake the flusher before its interval is up.
        redact: Extra redaction for error messages, run before the built-in patterns.
        retention: How long hourly buckets are kept (default 30 days).
        max_buckets: Hourly rows kept in all (oldest deleted first).
        clock: The current time (aware UTC), for retention (injectable for tests).

    Raises:
        ValueError: a limit is not positive; neither or both of ``database_url`` and
            ``database``, or a URL that is not ``postgresql://``.
    """

    def __init__(
        self,
        database_url: str | None = None,
        *,
        database: Database | None = None,
        flush_interval: float | None = 2.0,
        max_tools: int = DEFAULT_MAX_TOOLS,
        max_pending: int = 50_000,
        redact: Callable[[str], str] | None = None,
        retention: timedelta = DEFAULT_RETENTION,
        max_buckets: int = 100_000,
        clock: Callable[[], datetime] = _utc_now,
    ) -> None:
        for label, value in (("max_tools", max_tools), ("max_pending", max_pending), ("max_buckets", max_buckets)):
            if value < 1:
                raise ValueError(f"PostgresMetricsStore {label} must be at least 1, got {value}")
        if flush_interval is not None and not flush_interval > 0:
            raise ValueError(f"PostgresMetricsStore flush_interval must be positive or None, got {flush_interval}")
        if retention <= timedelta(0):
            raise ValueError(f"PostgresMetricsStore retention must be positive, got {retention}")
        self.database, self._owned = database_for(database_url, database, store="PostgresMetricsStore")
        self._url = database_url
        self._max_tools = max_tools
        self._max_pending = max_pending
        self._redact = redact
        self._retention = retention
        self._max_buckets = max_buckets
        self._clock = clock
        self._queue: deque[Item] = deque()
        self._append = self._queue.append
        self._deltas: dict[str, ToolStats] = {}
        self._series: Series = {}
        #: A flush that failed, kept whole with its id until it is known to be applied.
        self._pending: tuple[str, Figures] | None = None
        self._pruned_at: float | None = None
        self._flush_lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._failing = False
        self._thread: threading.Thread | None = None
        if flush_interval is not None:
            self._thread = start_flusher(
                self, flush_interval, name="tooldeck-metrics-postgres", wake=self._wake, stop=self._stop
            )
        atexit.register(self._close_at_exit)

    def __repr__(self) -> str:
        return f"PostgresMetricsStore({self.database.location!r})"

    @property
    def location(self) -> str:
        """The database and tables, for people (never the password)."""
        return f"{self.database.location} (tables {sql.TOOLS}, {sql.HOURS})"

    # ----------------------------------------------------------------- the hot path

    def record(self, result: ToolResult) -> None:
        """Queue one finished call (thread-safe, no I/O, never raises)."""
        self._append((result.metadata, result.error))
        if len(self._queue) > self._max_pending:
            self._wake.set()

    # ----------------------------------------------------------------- writing

    def flush(self) -> None:
        """Add every call recorded so far to the database now, in one transaction.

        On failure nothing is lost: the figures stay in memory (with their flush id) for
        the next flush, and are counted once however often it is retried.

        Raises:
            DatabaseError: the database cannot be reached or refused the write.
        """
        with self._flush_lock:
            self._drain()
            wrote = False
            while self._pending is not None or self._deltas:
                if self._pending is None:
                    self._pending = (uuid.uuid4().hex, Figures(self._deltas, self._series))
                    self._deltas, self._series = {}, {}
                self._write(*self._pending)
                self._pending, wrote = None, True
            if wrote and (self._pruned_at is None or time.monotonic() - self._pruned_at > PRUNE_INTERVAL):
                self._prune()

    def compact(self) -> None:
        """Flush, then delete the hours past ``retention`` and beyond ``max_buckets`` now.

        Raises:
            DatabaseError: as :meth:`flush`.
        """
        self.flush()
        with self._flush_lock:
            self._prune()

    def _write(self, flush_id: str, figures: Figures) -> None:
        """Apply one flush (or recognise it as applied already) in one transaction."""
        figures = sql.storable(figures)
        try:
            with self._session() as conn:
                applied = conn.execute(
                    f"INSERT INTO {sql.FLUSHES} (id) VALUES (%s) ON CONFLICT DO NOTHING RETURNING id",  # noqa: S608
                    (flush_id,),
                ).fetchone()
                if applied is None:  # a retry of a flush whose commit went through
                    logger.info("metrics flush %s was applied already; not counted again", flush_id)
                    return
                figures = self._admit(conn, figures)
                conn.execute(sql.ADD_TOOLS, sql.tool_columns(figures.tools))
                if figures.series:
                    conn.execute(sql.ADD_HOURS, sql.hour_columns(figures.series))
        except DatabaseError as exc:
            if not _unrepeatable(exc):
                raise
            lost = sum(stats.calls for stats in figures.tools.values())
            logger.error("metrics store %s: the database refused %d call(s) for good (%s)", self.location, lost, exc)

    def _admit(self, conn: psycopg.Connection[tuple[Any, ...]], figures: Figures) -> Figures:
        """``figures`` with the tools the table has no room for moved to the overflow entry."""
        new = [name for name in figures.tools if name not in BUCKETS]
        if new:
            new = self._absent(conn, new)
        if not new:
            return figures
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (sql.ADMISSION_LOCK_KEY,))
        new = self._absent(conn, new)  # again: another writer may have added some meanwhile
        room = self._max_tools - self._stored_tools(conn)
        refused = set(new[max(room, 0) :])
        if not refused:
            return figures
        out = Figures()
        for name, stats in figures.tools.items():
            key = OVERFLOW_BUCKET if name in refused else name
            out.tools.setdefault(key, ToolStats()).merge(stats)
            if name in figures.series:
                merge_series(out.series, {key: figures.series[name]})
        return out

    @staticmethod
    def _absent(conn: psycopg.Connection[tuple[Any, ...]], names: list[str]) -> list[str]:
        rows = conn.execute(f"SELECT tool FROM {sql.TOOLS} WHERE tool = ANY(%s)", (names,)).fetchall()  # noqa: S608
        present = {row[0] for row in rows}
        return [name for name in names if name not in present]

    @staticmethod
    def _stored_tools(conn: psycopg.Connection[tuple[Any, ...]]) -> int:
        row = conn.execute(
            f"SELECT count(*) FROM {sql.TOOLS} WHERE tool <> ALL(%s)",  # noqa: S608
            (sorted(BUCKETS),),
        ).fetchone()
        return int(row[0]) if row is not None else 0

    def _prune(self) -> None:
        """Delete expired hours, the oldest past ``max_buckets`` and old flush ids (caller
        holds ``_flush_lock``); a failure is only logged (the next prune catches up)."""
        oldest = hour_start(hour_key(self._clock() - self._retention))
        try:
            with self._session() as conn:
                conn.execute(f"DELETE FROM {sql.HOURS} WHERE hour < %s", (oldest,))  # noqa: S608
                conn.execute(
                    f"DELETE FROM {sql.HOURS} WHERE (tool, hour) IN (SELECT tool, hour FROM {sql.HOURS} "  # noqa: S608
                    f"ORDER BY hour, tool LIMIT greatest((SELECT count(*) FROM {sql.HOURS}) - %s, 0))",
                    (self._max_buckets,),
                )
                conn.execute(
                    f"DELETE FROM {sql.FLUSHES} WHERE applied_at < now() - make_interval(days => %s)",  # noqa: S608
                    (_FLUSH_ID_DAYS,),
                )
        except DatabaseError as exc:
            logger.warning("metrics store %s: deleting expired hours failed (%s); retrying later", self.location, exc)
        self._pruned_at = time.monotonic()

    def close(self) -> None:
        """Stop the background flusher and write what is left. Idempotent; never raises.

        A failing final flush is logged with the number of calls it could not write. The
        connection pool is closed when this store opened it (a later flush opens a new one).
        """
        self._stop.set()
        self._wake.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()
        atexit.unregister(self._close_at_exit)
        try:
            self.flush()
        except DatabaseError as exc:
            lost = sum(s.calls for f in self._unwritten() for s in f.tools.values())
            logger.error("metrics store %s: final flush failed (%s); %d call(s) not written", self.location, exc, lost)
        if self._owned:
            self.database.close()

    def _close_at_exit(self) -> None:
        with contextlib.suppress(Exception):
            self.close()

    def __enter__(self) -> PostgresMetricsStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # ----------------------------------------------------------------- reading

    def all_stats(self) -> dict[str, ToolStats]:
        """Every entry: the database's figures plus this process's unwritten ones.

        A database that cannot be read is logged and left out (figures of this process
        only). Use :meth:`read_database` to get the error instead.
        """
        with self._flush_lock:
            self._drain()
            try:
                tools = self._read_tools()
            except DatabaseError as exc:
                logger.warning("metrics store: %s; showing this process's figures only", exc)
                tools = {}
            for unwritten in self._unwritten():
                merge(Figures(tools), Figures(unwritten.tools), self._max_tools)
        return dict(sorted(tools.items()))

    def read_database(self) -> dict[str, ToolStats]:
        """The figures in the database alone (what every process has flushed).

        Raises:
            DatabaseError: the database cannot be reached, or holds rows tooldeck never writes.
        """
        return dict(sorted(self._read_tools().items()))

    def stats(self, tool_name: str) -> ToolStats:
        """One tool's figures (zeros for a tool never called)."""
        return self._one(tool_name, None, hours=False)[0]

    def series(
        self, tool_name: str, *, since: datetime | None = None, until: datetime | None = None
    ) -> list[HourBucket]:
        """The tool's hours with calls in ``[since, until)`` (naive datetimes are UTC),
        oldest first, from the database and this process alike; hours past the retention
        are left out."""
        _, hours = self._one(tool_name, since, until=until)
        high = hour_key(until) if until is not None else None
        return [
            hours[hour].frozen(hour) for hour in sorted(hours) if high is None or hour < high or inside(until, hour)
        ]

    def summary(self, tool_name: str, *, since: datetime | None = None) -> ToolSummary:
        """The tool's calls, failures and p50/p95 latency since ``since`` (default: every
        hour kept), added up in the database, with its latest error (whenever it was)."""
        stats, hours = self._one(tool_name, since, window=True)
        if not hours:
            return summarize(tool_name, [], stats, since)
        total = Bucket()
        for bucket in hours.values():
            total.merge(bucket)
        return summarize(tool_name, [total.frozen(min(hours))], stats, since)

    # ----------------------------------------------------------------- internals

    def _one(
        self,
        tool_name: str,
        since: datetime | None,
        *,
        until: datetime | None = None,
        hours: bool = True,
        window: bool = False,
    ) -> tuple[ToolStats, dict[str, Bucket]]:
        """One entry's figures and hours from ``since`` on (default: the retention), the
        database's and this process's unwritten ones added up; with ``window``, the
        database's hours come summed into one bucket (keyed by the first hour)."""
        low = hour_key(since) if since is not None else hour_key(self._clock() - self._retention)
        with self._flush_lock:
            self._drain()
            try:
                with self._session() as conn:
                    stored, found = self._stored_one(conn, tool_name, low, until, hours=hours, window=window)
                    unwritten = [] if self._overflowed(conn, tool_name, stored) else self._unwritten()
            except (DatabaseError, sql.UnusableRowError) as exc:
                logger.warning("metrics store: %s; showing this process's figures only", exc)
                stored, found, unwritten = None, {}, self._unwritten()
            stats = ToolStats()
            for source in [stored, *(f.tools.get(tool_name) for f in unwritten)]:
                if source is not None:
                    stats.merge(source)
            for figures in unwritten if hours else ():
                for hour, bucket in figures.series.get(tool_name, {}).items():
                    if hour >= low:
                        found.setdefault(hour, Bucket()).merge(bucket)
        return stats, found

    def _overflowed(self, conn: psycopg.Connection[tuple[Any, ...]], tool_name: str, stored: ToolStats | None) -> bool:
        """Whether this process's calls of ``tool_name`` count as the overflow entry's: the
        table is full and does not have the tool."""
        if stored is not None or tool_name in BUCKETS:
            return False
        if not any(tool_name in f.tools or tool_name in f.series for f in self._unwritten()):
            return False
        return self._stored_tools(conn) >= self._max_tools

    def _stored_one(
        self,
        conn: psycopg.Connection[tuple[Any, ...]],
        tool_name: str,
        low: str,
        until: datetime | None,
        *,
        hours: bool,
        window: bool,
    ) -> tuple[ToolStats | None, dict[str, Bucket]]:
        row = conn.execute(f"SELECT {sql.TOOL_COLUMNS} FROM {sql.TOOLS} WHERE tool = %s", (tool_name,)).fetchone()  # noqa: S608
        stored = None if row is None else sql.stats_from_row(row)[1]
        what = f"tool {tool_name[:64]!r}"
        if not hours:
            return stored, {}
        if window:
            total = conn.execute(sql.WINDOW, {"tool": tool_name, "low": hour_start(low)}).fetchone()
            if total is None or not total[0]:
                return stored, {}
            return stored, dict([sql.bucket_from_row(total[1:], what)])
        rows = conn.execute(
            f"SELECT {sql.HOUR_COLUMNS} FROM {sql.HOURS} WHERE tool = %s AND hour >= %s "  # noqa: S608
            "AND (%s::timestamptz IS NULL OR hour < %s) ORDER BY hour",
            (tool_name, hour_start(low), *((sql.utc(until),) * 2 if until is not None else (None, None))),
        ).fetchall()
        return stored, dict(sql.bucket_from_row(r, what) for r in rows)

    def _read_tools(self) -> dict[str, ToolStats]:
        try:
            with self._session() as conn:
                rows = conn.execute(f"SELECT {sql.TOOL_COLUMNS} FROM {sql.TOOLS}").fetchall()  # noqa: S608
            return dict(sql.stats_from_row(row) for row in rows)
        except sql.UnusableRowError as exc:
            raise DatabaseError(f"metrics in {self.location}: {exc}; fix or delete that row") from None

    def _unwritten(self) -> list[Figures]:
        """This process's figures not in the database yet (caller holds ``_flush_lock``)."""
        pending = [self._pending[1]] if self._pending is not None else []
        return [*pending, Figures(self._deltas, self._series)]

    def _drain(self) -> None:
        """Fold queued calls into the deltas and buckets (caller holds ``_flush_lock``)."""
        drain_calls(self._queue, self._deltas, self._series, self._max_tools, self._redact)

    @contextlib.contextmanager
    def _session(self) -> Iterator[psycopg.Connection[tuple[Any, ...]]]:
        if self._owned and self._url is not None and self.database.closed:
            self.database = Database(self._url)  # used again after close(): a new pool
        with self.database.session("metrics", sql.MIGRATIONS) as conn:
            yield conn

    def _background_flush(self) -> None:
        try:
            self.flush()
        except DatabaseError as exc:
            if not self._failing:
                logger.warning("metrics store: flush failed (%s); figures kept in memory, retrying", exc)
            self._failing = True
        else:
            if self._failing:
                logger.info("metrics store %s: flushing again", self.location)
            self._failing = False


def _unrepeatable(exc: DatabaseError) -> bool:
    """Whether the database refused the data itself (a retry would fail the same way)."""
    import psycopg

    return isinstance(exc.__cause__, (psycopg.errors.DataError, psycopg.errors.IntegrityError))
