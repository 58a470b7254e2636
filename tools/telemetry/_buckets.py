"""Hourly buckets being counted: per tool, per UTC hour, mergeable, pruned, bounded.

The mutable twin of :class:`~tools.telemetry.series.HourBucket`, used while recording and
merging; ``Series`` maps a tool to its hours (``"2026-11-25T13"`` keys sort by time).
"""

from __future__ import annotations

import heapq
from datetime import datetime, timezone
from typing import Any

from tools.telemetry.series import HISTOGRAM_SLOTS, HourBucket, hour_key, hour_start, latency_slot


class Bucket:
    """Counts of one tool's calls in one hour."""

    __slots__ = ("calls", "duration_ms", "error_types", "failures", "histogram", "max_ms")

    def __init__(self) -> None:
        self.calls = 0
        self.failures = 0
        self.duration_ms = 0.0
        self.max_ms = 0.0
        self.error_types: dict[str, int] = {}
        self.histogram = [0] * HISTOGRAM_SLOTS

    def add(self, duration_ms: float, error_type: str | None) -> None:
        """Count one call."""
        self.calls += 1
        self.duration_ms += duration_ms
        self.max_ms = max(self.max_ms, duration_ms)
        self.histogram[latency_slot(duration_ms)] += 1
        if error_type is not None:
            self.failures += 1
            self.error_types[error_type] = self.error_types.get(error_type, 0) + 1

    def merge(self, other: Bucket) -> None:
        """Add ``other``'s counts to these."""
        self.calls += other.calls
        self.failures += other.failures
        self.duration_ms += other.duration_ms
        self.max_ms = max(self.max_ms, other.max_ms)
        for kind, count in other.error_types.items():
            self.error_types[kind] = self.error_types.get(kind, 0) + count
        for slot, count in enumerate(other.histogram):
            self.histogram[slot] += count

    def frozen(self, hour: str) -> HourBucket:
        """The public, frozen view of this bucket."""
        return HourBucket(
            hour_start(hour),
            self.calls,
            self.failures,
            dict(self.error_types),
            self.duration_ms,
            self.max_ms,
            tuple(self.histogram),
        )

    def to_json(self) -> dict[str, Any]:
        """The file's form of this bucket."""
        return {
            "calls": self.calls,
            "failures": self.failures,
            "duration_ms": round(self.duration_ms, 6),
            "max_ms": round(self.max_ms, 6),
            "error_types": dict(sorted(self.error_types.items())),
            "histogram": self.histogram,
        }

    @classmethod
    def from_json(cls, data: Any) -> Bucket:
        """A bucket from the file's (already validated) form."""
        bucket = cls()
        bucket.calls = data.calls
        bucket.failures = data.failures
        bucket.duration_ms = data.duration_ms
        bucket.max_ms = data.max_ms
        bucket.error_types = {k: v for k, v in data.error_types.items() if v > 0}
        bucket.histogram = list(data.histogram)
        return bucket


#: tool -> hour key -> bucket.
Series = dict[str, dict[str, Bucket]]


def call_hour(started_at: Any) -> str:
    """The hour key of a call from its ``started_at`` (ISO-8601; now when unusable)."""
    if type(started_at) is str and len(started_at) >= 13 and started_at[10] == "T":
        if started_at.endswith("+00:00") or started_at.endswith("Z"):
            return started_at[:13]  # the envelope's own UTC stamps: no parsing
        try:
            return hour_key(datetime.fromisoformat(started_at))
        except ValueError:
            pass
    return hour_key(datetime.now(timezone.utc))


def merge_series(into: Series, other: Series) -> None:
    """Add every bucket of ``other`` to ``into``."""
    for tool, hours in other.items():
        target = into.setdefault(tool, {})
        for hour, bucket in hours.items():
            mine = target.get(hour)
            if mine is None:
                mine = target[hour] = Bucket()
            mine.merge(bucket)


def prune(series: Series, oldest: str, max_buckets: int) -> None:
    """Drop hours before ``oldest``, then the oldest hours until at most ``max_buckets`` remain."""
    count = 0
    for tool in list(series):
        hours = series[tool]
        for hour in [h for h in hours if h < oldest]:
            del hours[hour]
        if not hours:
            del series[tool]
        count += len(hours)
    excess = count - max_buckets
    if excess <= 0:
        return
    doomed = heapq.nsmallest(excess, ((hour, tool) for tool, hours in series.items() for hour in hours))
    for hour, tool in doomed:
        del series[tool][hour]
        if not series[tool]:
            del series[tool]
