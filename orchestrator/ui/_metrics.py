"""The Metrics page: each tool's calls, failures and latency over time, from the hourly buckets
of the metrics store (`tools.telemetry.MetricsHistory`), drawn as SVG on the server."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING

from markupsafe import Markup

from orchestrator.ui._svg import Series, TimePoint, line_chart, stacked_columns
from tools.telemetry import HourBucket, redact_data

if TYPE_CHECKING:
    from orchestrator.ui.sources import ConsoleSources
    from tools.telemetry import MetricsHistory, ToolSummary

__all__ = ["WINDOWS", "MetricsView", "ToolCharts", "metrics_view", "tool_charts"]

#: The windows a page can show: name -> (length, slot size).
WINDOWS: dict[str, tuple[timedelta, timedelta]] = {
    "24h": (timedelta(hours=24), timedelta(hours=1)),
    "7d": (timedelta(days=7), timedelta(hours=6)),
    "30d": (timedelta(days=30), timedelta(days=1)),
}
DEFAULT_WINDOW = "7d"


@dataclass(frozen=True)
class ToolCharts:
    """One tool's charts over a window.

    Attributes:
        name: The tool.
        summary: Its figures over the window (redacted last error).
        calls: Calls and failures per slot (SVG).
        latency: p50 and p95 per slot (SVG).
    """

    name: str
    summary: ToolSummary
    calls: Markup
    latency: Markup


@dataclass(frozen=True)
class MetricsView:
    """The Metrics page: the window, the tools with calls in it (busiest first), and the
    calls of every tool together over time."""

    window: str
    tools: list[ToolSummary]
    total: Markup
    available: bool


def metrics_view(sources: ConsoleSources, window: str, *, now: datetime | None = None) -> MetricsView:
    """Every tool's figures over ``window`` (one of `WINDOWS`)."""
    metrics = sources.metrics
    window = window if window in WINDOWS else DEFAULT_WINDOW
    if metrics is None:
        return MetricsView(window, [], Markup(""), available=False)
    start, slots, step = _slots(window, now)
    names = sorted(set(metrics.all_stats()) | set(sources.registry.names()))
    summaries = []
    per_slot = {slot: [0, 0] for slot in slots}
    for name in names:
        summary = _redacted(metrics.summary(name, since=start), sources.secrets)
        if summary.calls:
            summaries.append(summary)
            for slot, bucket in _grouped(metrics.series(name, since=start), slots, step).items():
                per_slot[slot][0] += bucket.successes
                per_slot[slot][1] += bucket.failures
    summaries.sort(key=lambda s: (-s.calls, s.tool))
    points = [TimePoint(slot, good, bad) for slot, (good, bad) in per_slot.items()]
    return MetricsView(window, summaries, stacked_columns(points, title="calls of every tool"), available=True)


def tool_charts(sources: ConsoleSources, name: str, window: str, *, now: datetime | None = None) -> ToolCharts | None:
    """One tool's charts over ``window`` (None without a metrics store)."""
    metrics: MetricsHistory | None = sources.metrics
    if metrics is None:
        return None
    window = window if window in WINDOWS else DEFAULT_WINDOW
    start, slots, step = _slots(window, now)
    grouped = _grouped(metrics.series(name, since=start), slots, step)
    empty = HourBucket(start)
    buckets = [grouped.get(slot, empty) for slot in slots]
    calls = stacked_columns(
        [TimePoint(slot, b.successes, b.failures) for slot, b in zip(slots, buckets, strict=True)],
        title=f"calls and failures of {name}",
    )
    latency = line_chart(
        [
            Series("p50", "p50", [(slot, b.p50_ms) for slot, b in zip(slots, buckets, strict=True)]),
            Series("p95", "p95", [(slot, b.p95_ms) for slot, b in zip(slots, buckets, strict=True)]),
        ],
        unit="ms",
        title=f"latency of {name}",
    )
    summary = _redacted(metrics.summary(name, since=start), sources.secrets)
    return ToolCharts(name, summary, calls, latency)


def _slots(window: str, now: datetime | None) -> tuple[datetime, list[datetime], timedelta]:
    """The window's start and its slots (starts, oldest first), aligned to whole hours (days)."""
    length, step = WINDOWS[window]
    moment = (now or datetime.now(timezone.utc)).astimezone(timezone.utc)
    end = moment.replace(minute=0, second=0, microsecond=0) + timedelta(hours=1)
    if step >= timedelta(days=1):
        end = end.replace(hour=0) + timedelta(days=1)
    count = int(length / step)
    first = end - count * step
    return first, [first + i * step for i in range(count)], step


def _grouped(buckets: Sequence[HourBucket], slots: list[datetime], step: timedelta) -> dict[datetime, HourBucket]:
    """The hourly ``buckets`` summed per slot (histograms added, so percentiles stay right)."""
    found: dict[datetime, list[HourBucket]] = {}
    first = slots[0]
    for bucket in buckets:
        index = int((bucket.start - first) / step)
        if 0 <= index < len(slots):
            found.setdefault(slots[index], []).append(bucket)
    return {slot: HourBucket.merged(group, slot) for slot, group in found.items()}


def _redacted(summary: ToolSummary, secrets: tuple[str, ...]) -> ToolSummary:
    from dataclasses import replace

    if summary.last_error is None:
        return summary
    return replace(summary, last_error=redact_data(summary.last_error, secrets))
