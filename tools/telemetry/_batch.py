"""What every persisted metrics store does before it writes: queue calls, fold them into
per-tool deltas and hourly buckets, and flush them from a background thread.

Shared by the file store (:class:`~tools.telemetry.MetricsStore`) and the PostgreSQL store
(:class:`~tools.telemetry.PostgresMetricsStore`): they differ only in where a flush goes.
"""

from __future__ import annotations

import math
import threading
import weakref
from collections import deque
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any, Protocol

from tools.metrics import BUCKETS, OVERFLOW_BUCKET, ToolStats, add_call, metrics_key
from tools.result import ErrorInfo
from tools.telemetry._buckets import Bucket, Series, call_hour
from tools.telemetry._redaction import summarize_error
from tools.telemetry.series import hour_key, hour_start

#: One recorded call: the result's metadata and error.
Item = tuple[dict[str, Any], ErrorInfo | None]


def drain_calls(
    queue: deque[Item],
    deltas: dict[str, ToolStats],
    series: Series,
    max_tools: int,
    redact: Callable[[str], str] | None,
) -> None:
    """Fold the queued calls into ``deltas`` and ``series`` (one thread at a time).

    Calls to unknown tools go to their bucket; past ``max_tools`` entries, new tools go to
    the overflow entry; only the last error of each entry is redacted (not every failure).
    """
    popleft, lookup = queue.popleft, deltas.get
    last_errors: dict[str, ErrorInfo] = {}
    real_hours: dict[str, str] = {}  # hour keys seen in this drain, checked once each
    while queue:
        try:
            metadata, error = popleft()
        except IndexError:  # pragma: no cover - only this thread pops
            break
        name = metadata.get("tool_name")
        key = name if error is None and type(name) is str else None
        stats = lookup(key) if key is not None else None  # the common case
        if stats is None:
            key = metrics_key(name, error)
            stats = lookup(key)
            if stats is None:
                if key not in BUCKETS and len(deltas) - buckets_in(deltas) >= max_tools:
                    key = OVERFLOW_BUCKET
                stats = deltas.setdefault(key, ToolStats())
            if error is not None:
                last_errors[key] = error
        add_call(stats, metadata, error, None)
        count_hour(series, key, metadata, error, real_hours)  # type: ignore[arg-type]  # key is set above
    for key, error in last_errors.items():
        deltas[key].last_error = summarize_error(error.message, redact=redact)


def buckets_in(stats: dict[str, ToolStats]) -> int:
    """How many of the non-tool entries (unknown tools, overflow) ``stats`` holds."""
    return sum(1 for bucket in BUCKETS if bucket in stats)


def count_hour(
    series: Series, key: str, metadata: dict[str, Any], error: ErrorInfo | None, real_hours: dict[str, str]
) -> None:
    """Count one call into ``key``'s bucket for the hour it started in (``real_hours``: the
    hour keys checked so far, and what each stands for)."""
    duration = metadata.get("duration_ms", 0.0)
    if type(duration) is not float:
        duration = float(duration) if type(duration) is int else 0.0
    if not 0.0 <= duration < math.inf:  # negative, infinite or NaN: not a duration
        duration = 0.0
    hours = series.get(key)
    if hours is None:
        hours = series[key] = {}
    hour = call_hour(metadata.get("started_at"))
    bucket = hours.get(hour)
    if bucket is None:  # a new bucket (once per tool and hour between flushes): is it a real hour?
        real = real_hours.get(hour)
        if real is None:
            real = real_hours[hour] = _real_hour(hour)
        hour = real
        bucket = hours.get(hour)
        if bucket is None:
            bucket = hours[hour] = Bucket()
    bucket.add(duration, None if error is None else str(error.type)[:64])


def _real_hour(key: str) -> str:
    """``key`` when it names a real UTC hour, else the current hour's key (a ``started_at``
    such as ``2026-13-45T99:00:00+00:00`` has the right shape and no such hour)."""
    try:
        hour_start(key)
    except ValueError:
        return hour_key(datetime.now(timezone.utc))
    return key


def inside(until: datetime | None, hour: str) -> bool:
    """Whether ``until`` falls inside ``hour`` (that hour is then partly in the window)."""
    return until is not None and hour_key(until) == hour and (until.minute or until.second or until.microsecond) > 0


class Flushable(Protocol):
    """A store the background flusher drives."""

    def _background_flush(self) -> None: ...


def start_flusher(
    store: Flushable, interval: float, *, name: str, wake: threading.Event, stop: threading.Event
) -> threading.Thread:
    """Start the background flusher of ``store``: every ``interval`` seconds (sooner when
    ``wake`` is set) it calls ``store._background_flush()``, until ``stop`` is set.

    The thread holds the store weakly, so a store dropped without closing can be collected.
    """
    thread = threading.Thread(
        target=_flush_loop, args=(weakref.ref(store), interval, wake, stop), name=name, daemon=True
    )
    thread.start()
    return thread


def _flush_loop(
    ref: weakref.ReferenceType[Flushable], interval: float, wake: threading.Event, stop: threading.Event
) -> None:
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
