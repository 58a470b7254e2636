"""MetricsStore: per-tool figures and hourly buckets, persisted across runs and processes.

``record()`` only appends the result's metadata and error to a queue (no lock, no I/O), so
a registry with the store attached costs about as much as one without. A background
thread drains the queue into per-tool deltas and hourly buckets and, every
``flush_interval`` seconds, appends them to the file's log: under a file lock
(``filelock``), one line per flush, whatever the number of tools in the file. Now and then
(the log past ``compact_bytes``) a flush compacts: it folds the log into the snapshot,
writes the snapshot atomically (temp file, fsync, rename) naming a new, empty log, and
removes the old one. The rename is the commit point, so a process killed at any moment
leaves the previous state readable and no count is applied twice; several processes can
record into one file at once without losing a count. The formats are in
:mod:`tools.telemetry._file`; the log's crash rules in :mod:`tools.telemetry._log`.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import glob
import logging
import os
import threading
from collections import deque
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from tools._files import atomic_write_text
from tools.metrics import BUCKETS, DEFAULT_MAX_TOOLS, ToolStats
from tools.result import ToolResult
from tools.telemetry._batch import Item, buckets_in, drain_calls, inside, start_flusher
from tools.telemetry._buckets import Bucket, Series, prune
from tools.telemetry._file import (
    Figures,
    MetricsFileError,
    dump_delta,
    dump_snapshot,
    move_aside,
    remove_stale_temp_files,
    snapshot_log,
)
from tools.telemetry._log import append_line
from tools.telemetry._reader import FileReader, merge
from tools.telemetry._reads import StatsReads
from tools.telemetry.series import DEFAULT_RETENTION, HourBucket, ToolSummary, hour_key, summarize

logger = logging.getLogger(__name__)

#: Where a project keeps its metrics unless told otherwise (relative to the working directory).
DEFAULT_METRICS_PATH = Path(".tooldeck") / "metrics.json"

_UTC = timezone.utc


def _utc_now() -> datetime:
    return datetime.now(_UTC)


class MetricsStore(StatsReads):
    """A :class:`~tools.metrics.MetricsSink` that persists per-tool figures and hourly
    buckets to a JSON snapshot and its append log; a
    :class:`~tools.telemetry.series.MetricsHistory` to read them back.

    Use it as a context manager, or call :meth:`close` when done: figures recorded since
    the last flush are written then (and, as a last resort, at interpreter exit).

    Args:
        path: The snapshot file (default ``.tooldeck/metrics.json``); ``<path>.lock`` and
            the log ``<path>.<id>.log`` live beside it.
        flush_interval: Seconds between background flushes; None: no background thread,
            only :meth:`flush` and :meth:`close` write.
        max_tools: Distinct tool entries kept (in memory and in the file); further tools
            are counted under :data:`~tools.metrics.OVERFLOW_BUCKET`.
        max_pending: Queued calls that wake the flusher before its interval is up.
        lock_timeout: Seconds a flush waits for another process's lock.
        redact: Extra redaction for error messages (e.g. masking known secret values), run
            before the built-in patterns.
        retention: How long hourly buckets are kept (default 30 days).
        max_buckets: Hourly buckets kept in all (oldest dropped first, at compaction).
        compact_bytes: Log size past which a flush compacts.
        clock: The current time (aware UTC), for retention (injectable for tests).

    Raises:
        ValueError: a limit is not positive.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] = DEFAULT_METRICS_PATH,
        *,
        flush_interval: float | None = 2.0,
        max_tools: int = DEFAULT_MAX_TOOLS,
        max_pending: int = 50_000,
        lock_timeout: float = 10.0,
        redact: Callable[[str], str] | None = None,
        retention: timedelta = DEFAULT_RETENTION,
        max_buckets: int = 100_000,
        compact_bytes: int = 1_000_000,
        clock: Callable[[], datetime] = _utc_now,
    ) -> None:
        limits = (("max_tools", max_tools), ("max_pending", max_pending), ("max_buckets", max_buckets))
        for label, value in (*limits, ("compact_bytes", compact_bytes)):
            if value < 1:
                raise ValueError(f"MetricsStore {label} must be at least 1, got {value}")
        if flush_interval is not None and not flush_interval > 0:
            raise ValueError(f"MetricsStore flush_interval must be positive or None, got {flush_interval}")
        if retention <= timedelta(0):
            raise ValueError(f"MetricsStore retention must be positive, got {retention}")
        self.path = Path(path)
        self._lock_file = FileLock(self.path.with_name(self.path.name + ".lock"), timeout=lock_timeout)
        self._lock_timeout = lock_timeout
        self._max_tools = max_tools
        self._max_pending = max_pending
        self._redact = redact
        self._retention = retention
        self._max_buckets = max_buckets
        self._compact_bytes = compact_bytes
        self._clock = clock
        self._queue: deque[Item] = deque()
        self._append = self._queue.append
        self._deltas: dict[str, ToolStats] = {}
        self._series: Series = {}
        self._flush_lock = threading.Lock()  # one drain / flush at a time in this process
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._failing = False
        self._reader = FileReader(self.path, max_tools, self._locked)
        self._thread: threading.Thread | None = None
        if flush_interval is not None:
            name = f"tooldeck-metrics-{self.path.name}"
            self._thread = start_flusher(self, flush_interval, name=name, wake=self._wake, stop=self._stop)
        # A strong reference until close(): a store dropped without closing still writes
        # its last figures when the interpreter exits.
        atexit.register(self._close_at_exit)

    # ----------------------------------------------------------------- the hot path

    def record(self, result: ToolResult) -> None:
        """Queue one finished call (thread-safe, no I/O, never raises)."""
        self._append((result.metadata, result.error))
        if len(self._queue) > self._max_pending:
            self._wake.set()

    # ----------------------------------------------------------------- writing

    def flush(self) -> None:
        """Write every call recorded so far now: one appended line (a compaction now and then).

        A corrupt file is moved aside (its new name is logged) and a fresh one started.
        On failure nothing recorded is lost: the figures stay in memory for the next flush.

        Raises:
            MetricsFileError: The file is from a newer tooldeck, or another process held
                the lock longer than ``lock_timeout``.
            OSError: The file could not be written (directory missing rights, disk full).
        """
        with self._flush_lock:
            self._drain()
            if not self._deltas:
                return
            with self._locked():
                self._write(Figures(self._deltas, self._series))
            self._deltas, self._series = {}, {}

    def compact(self) -> None:
        """Fold the log into the snapshot now (with this process's unwritten figures).

        Raises:
            MetricsFileError: as :meth:`flush`.
            OSError: as :meth:`flush`.
        """
        with self._flush_lock:
            self._drain()
            with self._locked():
                self._compact(Figures(self._deltas, self._series))
            self._deltas, self._series = {}, {}

    @contextlib.contextmanager
    def _locked(self) -> Any:
        try:
            with self._lock_file:
                yield
        except Timeout:
            raise MetricsFileError(
                f"metrics file {self.path}: another process held {self._lock_file.lock_file} for more "
                f"than {self._lock_timeout:g} s; the figures are kept in memory and written at the next "
                "flush (delete the lock file only if no tooldeck process is running)",
                path=self.path,
                reason="locked",
            ) from None

    def _write(self, delta: Figures) -> None:
        """Append ``delta`` to the log (caller holds both locks); compact when it is time."""
        remove_stale_temp_files(self.path)  # a killed compaction's (cheap: one directory scan)
        log, _ = snapshot_log(self.path)
        if log is None:  # no snapshot yet, a version-1 file, or one we do not recognise
            self._compact(delta)
            return
        try:
            size = append_line(self.path.parent / log, dump_delta(delta))
        except OSError as exc:
            if exc.errno != errno.ELOOP:
                raise
            aside = move_aside(self.path.parent / log)  # a planted link: never written through
            logger.error("metrics log %s is a symbolic link; moved it aside to %s", log, aside)
            self._compact(delta)
            return
        if size > self._compact_bytes:
            try:
                self._compact(None)
            except (MetricsFileError, OSError) as exc:  # the line is written: only log it
                logger.warning("metrics store %s: compaction failed (%s); the log keeps growing", self.path, exc)

    def _compact(self, extra: Figures | None) -> None:
        """Snapshot + log (+ ``extra``) -> a new snapshot naming a new, empty log."""
        remove_stale_temp_files(self.path)
        figures = self._reader.take()
        if extra is not None:
            merge(figures, extra, self._max_tools)
        prune(figures.series, hour_key(self._clock() - self._retention), self._max_buckets)
        new_log = f"{self.path.name}.{os.urandom(8).hex()}.log"
        atomic_write_text(self.path, dump_snapshot(figures, new_log))
        self._reader.remember(figures, new_log)
        for stale in self.path.parent.glob(f"{glob.escape(self.path.name)}.*.log"):
            if stale.name != new_log:  # folded in (or left by a compaction that died)
                with contextlib.suppress(OSError):
                    stale.unlink()

    def close(self) -> None:
        """Stop the background flusher and write what is left. Idempotent; never raises.

        A failing final flush is logged with the number of calls it could not write.
        """
        self._stop.set()
        self._wake.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()
        atexit.unregister(self._close_at_exit)
        try:
            self.flush()
        except (MetricsFileError, OSError) as exc:
            lost = sum(stats.calls for stats in self._deltas.values())
            logger.error("metrics store %s: final flush failed (%s); %d call(s) not written", self.path, exc, lost)

    def _close_at_exit(self) -> None:
        with contextlib.suppress(Exception):
            self.close()

    def __enter__(self) -> MetricsStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # ----------------------------------------------------------------- reading

    def all_stats(self) -> dict[str, ToolStats]:
        """Every entry: the file's figures plus this process's unwritten ones.

        A file that cannot be read is logged and left out (figures of this process only);
        it is never replaced by a read. Use :meth:`read_file` to get the error instead.
        """
        with self._flush_lock:
            view = self._view()
            tools = {name: stats.copy() for name, stats in view.tools.items()}
            merge(Figures(tools), Figures(self._deltas), self._max_tools)
        return dict(sorted(tools.items()))

    def _view(self) -> Figures:
        """The file's figures (shared, read-only) after draining the queue into the deltas;
        caller holds ``_flush_lock``, so a concurrent flush cannot move deltas into the
        file in between: no call is counted twice or missed."""
        try:
            view = self._reader.view()
        except (MetricsFileError, OSError) as exc:
            logger.warning("metrics store: %s; showing this process's figures only", exc)
            view = Figures()
        self._drain()
        return view

    def read_file(self) -> dict[str, ToolStats]:
        """The figures in the file alone, its log included (copies; empty when there is no file).

        Raises:
            MetricsFileError: The file or its log is corrupt, or from a newer tooldeck.
            OSError: The file cannot be read.
        """
        with self._flush_lock:
            view = self._reader.view()
            return {name: stats.copy() for name, stats in view.tools.items()}

    def stats(self, tool_name: str) -> ToolStats:
        """One tool's figures (zeros for a tool never called)."""
        return self._one(tool_name, datetime.max.replace(tzinfo=_UTC))[0]

    def series(
        self, tool_name: str, *, since: datetime | None = None, until: datetime | None = None
    ) -> list[HourBucket]:
        """The tool's hours with calls in ``[since, until)`` (naive datetimes are UTC),
        oldest first, from the file and this process alike; hours past the retention are gone."""
        _, hours = self._one(tool_name, since)
        high = hour_key(until) if until is not None else None
        return [
            hours[hour].frozen(hour) for hour in sorted(hours) if high is None or hour < high or inside(until, hour)
        ]

    def summary(self, tool_name: str, *, since: datetime | None = None) -> ToolSummary:
        """The tool's calls, failures and p50/p95 latency since ``since`` (default: every
        hour kept), with its latest error (whenever it was)."""
        stats, hours = self._one(tool_name, since)
        if not hours:
            return summarize(tool_name, [], stats, since)
        total = Bucket()  # the window as one bucket: histograms add, so the percentiles are the same
        for bucket in hours.values():
            total.merge(bucket)
        return summarize(tool_name, [total.frozen(min(hours))], stats, since)

    def _one(self, tool_name: str, since: datetime | None) -> tuple[ToolStats, dict[str, Bucket]]:
        """Copies of one entry's figures and of its hours from ``since`` on (default: the
        retention), the file's and this process's unwritten ones added up."""
        low = hour_key(since) if since is not None else hour_key(self._clock() - self._retention)
        with self._flush_lock:
            view = self._view()
            mine, my_hours = self._deltas.get(tool_name), self._series.get(tool_name, {})
            full = len(view.tools) - buckets_in(view.tools) >= self._max_tools
            if full and tool_name not in view.tools and tool_name not in BUCKETS:
                mine, my_hours = None, {}  # its calls are the overflow entry's in this file
            stats = ToolStats()
            for source in (view.tools.get(tool_name), mine):
                if source is not None:
                    stats.merge(source)
            hours: dict[str, Bucket] = {}
            for found in (view.series.get(tool_name, {}), my_hours):
                for hour, bucket in found.items():
                    if hour >= low:
                        hours.setdefault(hour, Bucket()).merge(bucket)
        return stats, hours

    # ----------------------------------------------------------------- internals

    def _drain(self) -> None:
        """Fold queued calls into the deltas and buckets (caller holds ``_flush_lock``)."""
        drain_calls(self._queue, self._deltas, self._series, self._max_tools, self._redact)

    def _background_flush(self) -> None:
        try:
            self.flush()
        except (MetricsFileError, OSError) as exc:
            if not self._failing:
                logger.warning("metrics store: flush failed (%s); figures kept in memory, retrying", exc)
            self._failing = True
        else:
            if self._failing:
                logger.info("metrics store %s: flushing again", self.path)
            self._failing = False
