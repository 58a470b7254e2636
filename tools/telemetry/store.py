"""MetricsStore: per-tool figures persisted across runs and processes (the learning loop).

``record()`` only appends the result's metadata and error to a queue (no lock, no I/O), so
a registry with the store attached costs about as much as one without. A background
thread drains the queue into per-tool deltas and, every ``flush_interval`` seconds,
merges them into the file: under a file lock (``filelock``), it reads the file, adds this
process's deltas and writes the result atomically (temp file, fsync, rename). Several
processes can record into one file at once without losing a count, and a process killed
mid-flush leaves the previous file intact (its temp file is removed by the next flush).
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import threading
import weakref
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from tools._files import atomic_write_text
from tools.metrics import (
    BUCKETS,
    DEFAULT_MAX_TOOLS,
    OVERFLOW_BUCKET,
    ToolStats,
    add_call,
    degraded,
    metrics_key,
)
from tools.result import ErrorInfo, ToolResult
from tools.telemetry._file import (
    MetricsFileError,
    dump_metrics,
    move_aside,
    read_metrics,
    remove_stale_temp_files,
)
from tools.telemetry._redaction import summarize_error

logger = logging.getLogger(__name__)

#: Where a project keeps its metrics unless told otherwise (relative to the working directory).
DEFAULT_METRICS_PATH = Path(".tooldeck") / "metrics.json"

_Item = tuple[dict[str, Any], ErrorInfo | None]


class MetricsStore:
    """A :class:`~tools.metrics.MetricsSink` that persists per-tool figures to a JSON file.

    Use it as a context manager, or call :meth:`close` when done: figures recorded since
    the last flush are written then (and, as a last resort, at interpreter exit).

    Args:
        path: The metrics file (default ``.tooldeck/metrics.json``); ``<path>.lock`` is
            created beside it.
        flush_interval: Seconds between background flushes; None: no background thread,
            only :meth:`flush` and :meth:`close` write.
        max_tools: Distinct tool entries kept (in memory and in the file); further tools
            are counted under :data:`~tools.metrics.OVERFLOW_BUCKET`.
        max_pending: Queued calls that wake the flusher before its interval is up.
        lock_timeout: Seconds a flush waits for another process's lock.
        redact: Extra redaction for error messages (e.g. masking known secret values), run
            before the built-in patterns.

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
    ) -> None:
        for label, value in (("max_tools", max_tools), ("max_pending", max_pending)):
            if value < 1:
                raise ValueError(f"MetricsStore {label} must be at least 1, got {value}")
        if flush_interval is not None and not flush_interval > 0:
            raise ValueError(f"MetricsStore flush_interval must be positive or None, got {flush_interval}")
        self.path = Path(path)
        self._lock_file = FileLock(self.path.with_name(self.path.name + ".lock"), timeout=lock_timeout)
        self._lock_timeout = lock_timeout
        self._max_tools = max_tools
        self._max_pending = max_pending
        self._redact = redact
        self._queue: deque[_Item] = deque()
        self._append = self._queue.append
        self._deltas: dict[str, ToolStats] = {}
        self._flush_lock = threading.Lock()  # one drain / flush at a time in this process
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._failing = False
        self._read_cache: tuple[tuple[int, int, int], dict[str, ToolStats]] | None = None
        self._thread: threading.Thread | None = None
        if flush_interval is not None:
            self._thread = threading.Thread(
                target=_flush_loop,
                args=(weakref.ref(self), flush_interval, self._wake, self._stop),
                name=f"tooldeck-metrics-{self.path.name}",
                daemon=True,
            )
            self._thread.start()
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
        """Merge every call recorded so far into the file now.

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
            try:
                with self._lock_file:
                    self._merge_into_file()
            except Timeout:
                raise MetricsFileError(
                    f"metrics file {self.path}: another process held {self._lock_file.lock_file} for more "
                    f"than {self._lock_timeout:g} s; the figures are kept in memory and written at the next "
                    "flush (delete the lock file only if no tooldeck process is running)",
                    path=self.path,
                    reason="locked",
                ) from None
            self._deltas = {}

    def _merge_into_file(self) -> None:
        remove_stale_temp_files(self.path)
        try:
            current = read_metrics(self.path)
        except MetricsFileError as exc:
            if exc.reason != "corrupt":
                raise
            aside = move_aside(self.path)
            logger.error("%s; moved it aside to %s and started a new file", exc, aside)
            current = {}
        for name, delta in self._deltas.items():
            target = current.get(name)
            if target is None:
                full = name not in BUCKETS and _tool_count(current) >= self._max_tools
                target = current.setdefault(OVERFLOW_BUCKET if full else name, ToolStats())
            target.merge(delta)
        atomic_write_text(self.path, dump_metrics(current))
        self._read_cache = None

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
        # Under the flush lock: a concurrent flush moves deltas into the file atomically
        # with respect to this read, so no call is counted twice or missed.
        with self._flush_lock:
            try:
                merged = self.read_file()
            except (MetricsFileError, OSError) as exc:
                logger.warning("metrics store: %s; showing this process's figures only", exc)
                merged = {}
            self._drain()
            for name, delta in self._deltas.items():
                merged.setdefault(name, ToolStats()).merge(delta)
        return dict(sorted(merged.items()))

    def read_file(self) -> dict[str, ToolStats]:
        """The figures in the file alone (copies; empty when there is no file).

        Raises:
            MetricsFileError: The file is corrupt or from a newer tooldeck.
            OSError: The file cannot be read.
        """
        try:
            info = self.path.stat()
        except FileNotFoundError:
            return {}
        key = (info.st_mtime_ns, info.st_size, info.st_ino)
        cache = self._read_cache
        if cache is None or cache[0] != key:
            cache = self._read_cache = (key, read_metrics(self.path))
        return {name: stats.copy() for name, stats in cache[1].items()}

    def stats(self, tool_name: str) -> ToolStats:
        """One tool's figures (zeros for a tool never called)."""
        return self.all_stats().get(tool_name) or ToolStats()

    def success_rate(self, tool_name: str) -> float:
        """Successes over calls for one tool (0.0 with no calls)."""
        return self.stats(tool_name).success_rate

    def avg_duration_ms(self, tool_name: str) -> float:
        """Mean duration of one tool's successful calls (0.0 without successes)."""
        return self.stats(tool_name).avg_duration_ms

    def get_degraded(self, threshold: float = 0.7, min_calls: int = 5) -> list[str]:
        """Tools with at least ``min_calls`` calls whose success rate is below ``threshold``."""
        return degraded(self.all_stats(), threshold, min_calls)

    def snapshot(self) -> dict[str, dict[str, Any]]:
        """Every entry's figures as JSON-compatible dicts."""
        return {name: stats.to_dict() for name, stats in self.all_stats().items()}

    # ----------------------------------------------------------------- internals

    def _drain(self) -> None:
        """Fold queued calls into the deltas (caller holds ``_flush_lock``)."""
        queue, deltas = self._queue, self._deltas
        popleft, lookup = queue.popleft, deltas.get
        last_errors: dict[str, ErrorInfo] = {}
        while queue:
            try:
                metadata, error = popleft()
            except IndexError:  # pragma: no cover - only this thread pops
                break
            name = metadata.get("tool_name")
            stats = lookup(name) if error is None and type(name) is str else None  # the common case
            if stats is None:
                key = metrics_key(name, error)
                stats = lookup(key)
                if stats is None:
                    if key not in BUCKETS and _tool_count(deltas) >= self._max_tools:
                        key = OVERFLOW_BUCKET
                    stats = deltas.setdefault(key, ToolStats())
                if error is not None:
                    last_errors[key] = error
            add_call(stats, metadata, error, None)
        # Only the last error of each tool is kept: redact that one, not every failure.
        for key, error in last_errors.items():
            deltas[key].last_error = summarize_error(error.message, redact=self._redact)

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


def _tool_count(stats: dict[str, ToolStats]) -> int:
    return len(stats) - sum(1 for bucket in BUCKETS if bucket in stats)


def _flush_loop(
    ref: weakref.ReferenceType[MetricsStore], interval: float, wake: threading.Event, stop: threading.Event
) -> None:
    """The background flusher; holds the store weakly so a dropped store can be collected."""
    while not stop.is_set():
        wake.wait(interval)
        wake.clear()
        if stop.is_set():
            return
        store = ref()
        if store is None:
            return
        store._background_flush()
        del store
