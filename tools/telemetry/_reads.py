"""The figures a metrics store derives from its per-tool stats, written once for every store."""

from __future__ import annotations

from typing import Any

from tools.metrics import ToolStats, degraded


class StatsReads:
    """``success_rate``, ``avg_duration_ms``, ``get_degraded`` and ``snapshot`` from a store's
    own :meth:`stats` and :meth:`all_stats` (:class:`~tools.telemetry.MetricsStore`,
    :class:`~tools.telemetry.PostgresMetricsStore`)."""

    def stats(self, tool_name: str) -> ToolStats:
        """One tool's figures (zeros for a tool never called)."""
        raise NotImplementedError

    def all_stats(self) -> dict[str, ToolStats]:
        """Every tool's figures, by name."""
        raise NotImplementedError

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
