"""Per-tool call metrics: counts, successes, failures, durations and error types."""

from __future__ import annotations

import json
import os
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from tools.result import ToolResult


@runtime_checkable
class MetricsSink(Protocol):
    """Receives every call's result; ``result.metadata['tool_name']`` names the tool."""

    def record(self, result: ToolResult) -> None:
        """Record one finished call. Must be cheap and thread-safe; must not raise."""


@dataclass
class ToolStats:
    """Aggregated figures for one tool."""

    calls: int = 0
    successes: int = 0
    failures: int = 0
    total_duration_ms: float = 0.0
    error_types: Counter[str] = field(default_factory=Counter)

    @property
    def success_rate(self) -> float:
        """Successes over calls (1.0 when there were no calls)."""
        return self.successes / self.calls if self.calls else 1.0

    @property
    def avg_duration_ms(self) -> float:
        """Mean duration of a call in milliseconds (0.0 when there were no calls)."""
        return self.total_duration_ms / self.calls if self.calls else 0.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-compatible view."""
        return {
            "calls": self.calls,
            "successes": self.successes,
            "failures": self.failures,
            "success_rate": round(self.success_rate, 4),
            "avg_duration_ms": round(self.avg_duration_ms, 3),
            "error_types": dict(self.error_types),
        }


class InMemoryMetrics:
    """A thread-safe in-process :class:`MetricsSink`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stats: dict[str, ToolStats] = {}

    def record(self, result: ToolResult) -> None:
        """Add one call's outcome to its tool's figures."""
        name = str(result.metadata.get("tool_name", "?"))
        duration = float(result.metadata.get("duration_ms", 0.0))
        with self._lock:
            stats = self._stats.get(name)
            if stats is None:
                stats = self._stats[name] = ToolStats()
            stats.calls += 1
            stats.total_duration_ms += duration
            if result.error is None:
                stats.successes += 1
            else:
                stats.failures += 1
                stats.error_types[result.error.type] += 1

    def stats(self, tool_name: str) -> ToolStats:
        """A copy of one tool's figures (zeros for a tool never called)."""
        with self._lock:
            stats = self._stats.get(tool_name, ToolStats())
            return ToolStats(
                stats.calls,
                stats.successes,
                stats.failures,
                stats.total_duration_ms,
                Counter(stats.error_types),
            )

    def snapshot(self) -> dict[str, dict[str, Any]]:
        """Every tool's figures as JSON-compatible dicts."""
        with self._lock:
            return {name: stats.to_dict() for name, stats in sorted(self._stats.items())}

    def degraded_tools(self, threshold: float = 0.8, *, min_calls: int = 5) -> list[str]:
        """Tools with at least ``min_calls`` calls whose success rate is below ``threshold``."""
        with self._lock:
            return sorted(
                name
                for name, stats in self._stats.items()
                if stats.calls >= min_calls and stats.success_rate < threshold
            )

    def write_json(self, path: str | os.PathLike[str]) -> None:
        """Write :meth:`snapshot` to ``path`` atomically (temp file + rename).

        Concurrent writers never leave a torn file: each replaces it whole.
        """
        from tools._files import atomic_write_text

        atomic_write_text(path, json.dumps(self.snapshot(), indent=2, sort_keys=True))
