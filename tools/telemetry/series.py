"""Metrics over time: hourly buckets per tool, latency percentiles, the read interface.

Every call is counted into its tool's bucket for the UTC hour it started in: calls,
failures, failures by error type, summed duration, the slowest call, and a latency
histogram over :data:`LATENCY_BOUNDS_MS` (fixed bounds, so buckets from any number of
processes and hosts add up exactly). Percentiles are read from the histogram, interpolated
inside the bucket that holds them: within that bucket's width of the true value, which is
what a dashboard's p50/p95 needs.

:class:`MetricsHistory` is the read interface a console or report uses, whatever stores the
figures: :class:`~tools.telemetry.MetricsStore` (a JSON file) implements it, and so can a
database-backed store (one row per tool and hour holding the same fields); :func:`summarize`
and :meth:`HourBucket.merged` are the shared arithmetic.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Protocol, runtime_checkable

from tools.metrics import ToolStats

#: Upper bounds (ms, inclusive) of the latency histogram; one more slot counts the rest.
LATENCY_BOUNDS_MS: tuple[float, ...] = (
    1.0,
    2.0,
    5.0,
    10.0,
    20.0,
    50.0,
    100.0,
    200.0,
    500.0,
    1_000.0,
    2_000.0,
    5_000.0,
    10_000.0,
    30_000.0,
    60_000.0,
)
HISTOGRAM_SLOTS = len(LATENCY_BOUNDS_MS) + 1
#: How long hourly buckets are kept by default.
DEFAULT_RETENTION = timedelta(days=30)
_UTC = timezone.utc


def latency_slot(duration_ms: float) -> int:
    """The histogram slot of a call that took ``duration_ms``."""
    return bisect.bisect_left(LATENCY_BOUNDS_MS, duration_ms)


def hour_key(moment: datetime) -> str:
    """The bucket key of the UTC hour holding ``moment`` (naive means UTC): ``2026-11-25T13``."""
    if moment.tzinfo is not None:
        moment = moment.astimezone(_UTC)
    return moment.strftime("%Y-%m-%dT%H")


def hour_start(key: str) -> datetime:
    """The start of the hour a bucket key names, as an aware UTC datetime.

    Read field by field (``strptime`` costs ~20 us a key, and a console reads thousands).

    Raises:
        ValueError: ``key`` is not ``YYYY-MM-DDTHH`` (or names no real hour).
    """
    digits = key[:4] + key[5:7] + key[8:10] + key[11:13]
    shaped = len(key) == 13 and key[4] == "-" and key[7] == "-" and key[10] == "T"
    if not (shaped and digits.isascii() and digits.isdigit()):
        raise ValueError(f"not an hour key (YYYY-MM-DDTHH): {key[:40]!r}")
    return datetime(int(key[:4]), int(key[5:7]), int(key[8:10]), int(key[11:13]), tzinfo=_UTC)


@dataclass(frozen=True)
class HourBucket:
    """One tool's calls that started in one UTC hour.

    Attributes:
        start: The hour (aware, UTC).
        calls: Calls counted.
        failures: Calls that ended in an error envelope.
        error_types: Failures by ``ErrorInfo.type``.
        duration_ms: Summed duration of the calls.
        max_ms: The slowest call.
        histogram: Calls per latency slot (:data:`LATENCY_BOUNDS_MS`, then the rest).
    """

    start: datetime
    calls: int = 0
    failures: int = 0
    error_types: Mapping[str, int] = field(default_factory=dict)
    duration_ms: float = 0.0
    max_ms: float = 0.0
    histogram: tuple[int, ...] = (0,) * HISTOGRAM_SLOTS

    @property
    def successes(self) -> int:
        """Calls that succeeded."""
        return self.calls - self.failures

    @property
    def avg_ms(self) -> float:
        """Mean duration (0.0 without calls)."""
        return self.duration_ms / self.calls if self.calls else 0.0

    @property
    def p50_ms(self) -> float | None:
        """Median latency (None without calls)."""
        return percentile(self.histogram, 0.50, self.max_ms)

    @property
    def p95_ms(self) -> float | None:
        """95th percentile latency (None without calls)."""
        return percentile(self.histogram, 0.95, self.max_ms)

    @staticmethod
    def merged(buckets: Iterable[HourBucket], start: datetime) -> HourBucket:
        """The sum of ``buckets`` as one bucket starting at ``start``."""
        calls = failures = 0
        duration = slowest = 0.0
        errors: dict[str, int] = {}
        histogram = [0] * HISTOGRAM_SLOTS
        for bucket in buckets:
            calls += bucket.calls
            failures += bucket.failures
            duration += bucket.duration_ms
            slowest = max(slowest, bucket.max_ms)
            for kind, count in bucket.error_types.items():
                errors[kind] = errors.get(kind, 0) + count
            for slot, count in enumerate(bucket.histogram[:HISTOGRAM_SLOTS]):
                histogram[slot] += count
        return HourBucket(start, calls, failures, errors, duration, slowest, tuple(histogram))

    def to_dict(self) -> dict[str, object]:
        """JSON-compatible view (``start`` as ISO-8601)."""
        return {
            "start": self.start.isoformat(),
            "calls": self.calls,
            "failures": self.failures,
            "error_types": dict(self.error_types),
            "duration_ms": round(self.duration_ms, 3),
            "max_ms": round(self.max_ms, 3),
            "p50_ms": self.p50_ms,
            "p95_ms": self.p95_ms,
            "histogram": list(self.histogram),
        }


def percentile(histogram: Iterable[int], q: float, max_ms: float | None = None) -> float | None:
    """The ``q`` quantile (0..1) of the latencies counted in ``histogram``, or None if empty.

    Interpolated linearly inside the slot that holds it; the last slot (slower than the
    last bound) and the slot of the slowest call are capped by ``max_ms`` when given.
    """
    counts = list(histogram)
    total = sum(counts)
    if total <= 0:
        return None
    rank = q * total
    seen = 0
    for slot, count in enumerate(counts):
        if count <= 0:
            continue
        if seen + count >= rank:
            low = LATENCY_BOUNDS_MS[slot - 1] if slot > 0 else 0.0
            high = LATENCY_BOUNDS_MS[slot] if slot < len(LATENCY_BOUNDS_MS) else max(max_ms or low, low)
            if max_ms is not None and max_ms > 0:
                high = min(high, max(max_ms, low))
            value = low + (high - low) * max(rank - seen, 0.0) / count
            return round(value, 3)
        seen += count
    return round(max_ms, 3) if max_ms else LATENCY_BOUNDS_MS[-1]  # pragma: no cover - rank <= total


@dataclass(frozen=True)
class ToolSummary:
    """One tool over a window of hours, with its latest error.

    Attributes:
        tool: The tool (or bucket) name.
        since: Start of the window (the oldest hour kept when none was asked for).
        calls: Calls in the window.
        failures: Failures in the window.
        error_types: Failures by type in the window.
        p50_ms: Median latency in the window (None without calls).
        p95_ms: 95th percentile latency in the window (None without calls).
        avg_ms: Mean latency in the window.
        last_error: The latest failure's message (redacted, short), whenever it was.
        last_error_type: Its type.
        last_failure: When it started (ISO-8601 UTC).
        last_success: When the latest success started.
    """

    tool: str
    since: datetime | None
    calls: int
    failures: int
    error_types: Mapping[str, int]
    p50_ms: float | None
    p95_ms: float | None
    avg_ms: float
    last_error: str | None
    last_error_type: str | None
    last_failure: str | None
    last_success: str | None

    @property
    def success_rate(self) -> float:
        """Successes over calls in the window (0.0 without calls)."""
        return (self.calls - self.failures) / self.calls if self.calls else 0.0

    def to_dict(self) -> dict[str, object]:
        """JSON-compatible view."""
        return {
            "tool": self.tool,
            "since": self.since.isoformat() if self.since is not None else None,
            "calls": self.calls,
            "failures": self.failures,
            "success_rate": round(self.success_rate, 4),
            "error_types": dict(self.error_types),
            "p50_ms": self.p50_ms,
            "p95_ms": self.p95_ms,
            "avg_ms": round(self.avg_ms, 3),
            "last_error": self.last_error,
            "last_error_type": self.last_error_type,
            "last_failure": self.last_failure,
            "last_success": self.last_success,
        }


def summarize(tool: str, buckets: Iterable[HourBucket], stats: ToolStats | None, since: datetime | None) -> ToolSummary:
    """A :class:`ToolSummary` from a tool's buckets in the window and its all-time figures."""
    listed = list(buckets)
    start = since if since is not None else (listed[0].start if listed else None)
    total = HourBucket.merged(listed, start or datetime.now(_UTC))
    return ToolSummary(
        tool=tool,
        since=start,
        calls=total.calls,
        failures=total.failures,
        error_types=dict(total.error_types),
        p50_ms=total.p50_ms,
        p95_ms=total.p95_ms,
        avg_ms=total.avg_ms,
        last_error=stats.last_error if stats else None,
        last_error_type=stats.last_error_type if stats else None,
        last_failure=stats.last_failure if stats else None,
        last_success=stats.last_success if stats else None,
    )


@runtime_checkable
class MetricsHistory(Protocol):
    """What a console or report reads from a metrics store, whatever keeps the figures.

    Implementations: :class:`~tools.telemetry.MetricsStore` (a JSON file with an append
    log); a database-backed store keeps one row per (tool, hour) with the
    :class:`HourBucket` fields and merges concurrent writers by adding them.
    """

    def all_stats(self) -> dict[str, ToolStats]:
        """All-time figures of every tool (and bucket), by name."""
        ...

    def series(
        self, tool_name: str, *, since: datetime | None = None, until: datetime | None = None
    ) -> list[HourBucket]:
        """The tool's hours with calls in ``[since, until)`` (naive datetimes are UTC), oldest
        first; hours older than the store's retention are gone."""
        ...

    def summary(self, tool_name: str, *, since: datetime | None = None) -> ToolSummary:
        """The tool's calls, failures and latency percentiles since ``since`` (default: all
        the hours kept), with its latest error."""
        ...
