"""Per-tool call metrics: counts, successes, failures, durations and error types.

:class:`MetricsSink` is what a registry records every call into; :class:`InMemoryMetrics`
keeps the figures in this process, :class:`tools.telemetry.MetricsStore` persists them.
Both count calls to unknown tools in one entry (:data:`UNKNOWN_TOOL_BUCKET`) and stop
creating entries after ``max_tools`` distinct tools (:data:`OVERFLOW_BUCKET`), so a client
that sends a million made-up tool names cannot grow memory or the metrics file.
"""

from __future__ import annotations

import json
import math
import os
import threading
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Protocol, runtime_checkable

from tools.result import ErrorInfo, ToolResult

#: The one entry every call to an unregistered tool is counted under.
UNKNOWN_TOOL_BUCKET = "(unknown tool)"
#: The entry calls are counted under once ``max_tools`` distinct tools have entries.
OVERFLOW_BUCKET = "(other tools)"
#: Entries that are not tools; never reported as degraded.
BUCKETS = frozenset({UNKNOWN_TOOL_BUCKET, OVERFLOW_BUCKET})
#: Default cap on distinct tool entries (the two buckets come on top).
DEFAULT_MAX_TOOLS = 10_000
#: Longest tool name kept as its own entry (OpenAI's limit); longer ones are unknown.
_MAX_NAME = 64


@runtime_checkable
class MetricsSink(Protocol):
    """Receives every call's result; ``result.metadata['tool_name']`` names the tool."""

    def record(self, result: ToolResult) -> None:
        """Record one finished call. Must be cheap and thread-safe; must not raise."""


def metrics_key(name: object, error: ErrorInfo | None) -> str:
    """The entry a call is counted under: its tool's name, or :data:`UNKNOWN_TOOL_BUCKET`.

    Calls that ended in ``unknown_tool`` carry whatever name the model sent; they, and
    names that are not short strings, all go to one bucket.
    """
    if (error is not None and error.type == "unknown_tool") or type(name) is not str or len(name) > _MAX_NAME:
        return UNKNOWN_TOOL_BUCKET
    return name


@dataclass
class ToolStats:
    """Aggregated figures for one tool.

    Attributes:
        calls: Every recorded call (the invocations).
        successes: Calls that returned a success envelope.
        failures: Calls that returned an error envelope.
        total_duration_ms: Summed duration of every call.
        error_types: Failures by ``ErrorInfo.type``.
        success_duration_ms: Summed duration of the successful calls.
        last_success: ``started_at`` (ISO-8601 UTC) of the latest success, if any.
        last_failure: ``started_at`` of the latest failure, if any.
        last_error: The latest failure's message, redacted and at most 200 characters.
        last_error_type: The latest failure's ``ErrorInfo.type``.
    """

    calls: int = 0
    successes: int = 0
    failures: int = 0
    total_duration_ms: float = 0.0
    error_types: Counter[str] = field(default_factory=Counter)
    success_duration_ms: float = 0.0
    last_success: str | None = None
    last_failure: str | None = None
    last_error: str | None = None
    last_error_type: str | None = None

    @property
    def invocations(self) -> int:
        """Alias of :attr:`calls`."""
        return self.calls

    @property
    def success_rate(self) -> float:
        """Successes over calls (0.0 when there were no calls)."""
        return self.successes / self.calls if self.calls else 0.0

    @property
    def avg_duration_ms(self) -> float:
        """Mean duration of a successful call in milliseconds (0.0 without successes)."""
        return self.success_duration_ms / self.successes if self.successes else 0.0

    def merge(self, other: ToolStats) -> None:
        """Add ``other``'s figures to these; the later of each "last" wins."""
        self.calls += other.calls
        self.successes += other.successes
        self.failures += other.failures
        self.total_duration_ms += other.total_duration_ms
        self.success_duration_ms += other.success_duration_ms
        self.error_types.update(other.error_types)
        if other.last_success is not None and (self.last_success is None or other.last_success >= self.last_success):
            self.last_success = other.last_success
        if other.last_failure is not None and (self.last_failure is None or other.last_failure >= self.last_failure):
            self.last_failure = other.last_failure
            self.last_error = other.last_error
            self.last_error_type = other.last_error_type

    def copy(self) -> ToolStats:
        """An independent copy."""
        out = ToolStats()
        out.merge(self)
        return out

    def to_dict(self) -> dict[str, Any]:
        """JSON-compatible view."""
        return {
            "calls": self.calls,
            "successes": self.successes,
            "failures": self.failures,
            "success_rate": round(self.success_rate, 4),
            "avg_duration_ms": round(self.avg_duration_ms, 3),
            "total_duration_ms": round(self.total_duration_ms, 3),
            "error_types": dict(self.error_types),
            "last_success": self.last_success,
            "last_failure": self.last_failure,
            "last_error": self.last_error,
            "last_error_type": self.last_error_type,
        }


def add_call(stats: ToolStats, metadata: dict[str, Any], error: ErrorInfo | None, last_error: str | None) -> None:
    """Count one call into ``stats``; ``last_error`` is the already-redacted message."""
    duration = metadata.get("duration_ms", 0.0)
    if type(duration) is not float:
        duration = float(duration) if type(duration) is int else 0.0
    if not 0.0 <= duration < math.inf:  # negative, infinite or NaN: not a duration
        duration = 0.0
    stamp = metadata.get("started_at")
    if type(stamp) is not str:
        stamp = datetime.now(timezone.utc).isoformat()  # a result not built by a tool: "now" will do
    stats.calls += 1
    stats.total_duration_ms += duration
    if error is None:
        stats.successes += 1
        stats.success_duration_ms += duration
        if stats.last_success is None or stamp >= stats.last_success:
            stats.last_success = stamp
        return
    stats.failures += 1
    error_type = str(error.type)[:_MAX_NAME]
    stats.error_types[error_type] += 1
    if stats.last_failure is None or stamp >= stats.last_failure:
        stats.last_failure = stamp
        stats.last_error = last_error
        stats.last_error_type = error_type


def degraded(stats: dict[str, ToolStats], threshold: float, min_calls: int) -> list[str]:
    """Tools (not buckets) with at least ``min_calls`` calls and a success rate below ``threshold``."""
    return sorted(
        name
        for name, figures in stats.items()
        if name not in BUCKETS and figures.calls >= min_calls and figures.success_rate < threshold
    )


class InMemoryMetrics:
    """A thread-safe in-process :class:`MetricsSink`.

    Args:
        max_tools: Distinct tool entries kept; calls to further tools are counted under
            :data:`OVERFLOW_BUCKET`.
    """

    def __init__(self, *, max_tools: int = DEFAULT_MAX_TOOLS) -> None:
        if max_tools < 1:
            raise ValueError(f"max_tools must be at least 1, got {max_tools}")
        self._max_tools = max_tools
        self._lock = threading.Lock()
        self._stats: dict[str, ToolStats] = {}
        self._last_errors: dict[str, ErrorInfo] = {}

    def record(self, result: ToolResult) -> None:
        """Add one call's outcome to its tool's figures."""
        error = result.error
        key = metrics_key(result.metadata.get("tool_name"), error)
        with self._lock:
            stats = self._stats.get(key)
            if stats is None:
                if key not in BUCKETS and len(self._stats) - len(BUCKETS & self._stats.keys()) >= self._max_tools:
                    key = OVERFLOW_BUCKET
                stats = self._stats.get(key)
                if stats is None:
                    stats = self._stats[key] = ToolStats()
            # The message is redacted when read, not here: failures stay cheap to record.
            add_call(stats, result.metadata, error, None)
            if error is not None:
                self._last_errors[key] = error

    def stats(self, tool_name: str) -> ToolStats:
        """A copy of one tool's figures (zeros for a tool never called)."""
        with self._lock:
            stats = self._stats.get(tool_name)
            return ToolStats() if stats is None else self._copy(tool_name, stats)

    def all_stats(self) -> dict[str, ToolStats]:
        """Copies of every entry's figures, by name (buckets included)."""
        with self._lock:
            return {name: self._copy(name, stats) for name, stats in sorted(self._stats.items())}

    def _copy(self, name: str, stats: ToolStats) -> ToolStats:
        out = stats.copy()
        error = self._last_errors.get(name)
        if error is not None:
            from tools.telemetry._redaction import summarize_error

            out.last_error = summarize_error(error.message)
        return out

    def snapshot(self) -> dict[str, dict[str, Any]]:
        """Every tool's figures as JSON-compatible dicts."""
        return {name: stats.to_dict() for name, stats in self.all_stats().items()}

    def degraded_tools(self, threshold: float = 0.8, *, min_calls: int = 5) -> list[str]:
        """Tools with at least ``min_calls`` calls whose success rate is below ``threshold``."""
        with self._lock:
            return degraded(self._stats, threshold, min_calls)

    def write_json(self, path: str | os.PathLike[str]) -> None:
        """Write :meth:`snapshot` to ``path`` atomically (temp file + rename).

        Concurrent writers never leave a torn file: each replaces it whole.
        """
        from tools._files import atomic_write_text

        atomic_write_text(path, json.dumps(self.snapshot(), indent=2, sort_keys=True))
