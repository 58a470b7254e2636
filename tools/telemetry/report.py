"""Rows and a table for ``tooldeck stats``: per-tool calls, success rate, latency, last error.

:func:`stats_rows` is pure (figures in, rows out) so the CLI, JSON output and tests share
it; :func:`render_stats_table` turns rows into a ``rich`` table whose success rates are
green above 80 %, yellow from 50 to 80 % and red below 50 %, and which shows "no calls
yet" for registered tools that were never run. ``rich`` is imported only by the renderer.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tools.metrics import BUCKETS, ToolStats

if TYPE_CHECKING:
    from rich.table import Table

NO_CALLS = "no calls yet"
#: Success rates above this are green; from :data:`RED_BELOW` up to it, yellow.
GREEN_ABOVE = 0.8
#: Success rates below this are red.
RED_BELOW = 0.5


@dataclass(frozen=True)
class StatsRow:
    """One tool's line of the stats report.

    Attributes:
        tool: The tool's name (or a bucket such as ``(unknown tool)``).
        calls: Recorded calls.
        successes: Successful calls.
        failures: Failed calls.
        success_rate: Successes over calls; None when the tool has no calls yet.
        avg_duration_ms: Mean duration of successful calls; None without successes.
        last_success: When the latest success started (ISO-8601 UTC), if any.
        last_failure: When the latest failure started, if any.
        last_error: The latest failure's message (redacted, short), if any.
        last_error_type: The latest failure's error type, if any.
        error_types: Failures by error type.
        degraded: At least ``min_calls`` calls and a success rate below the threshold.
        registered: The tool is in the registry (False for names only the file knows).
    """

    tool: str
    calls: int
    successes: int
    failures: int
    success_rate: float | None
    avg_duration_ms: float | None
    last_success: str | None
    last_failure: str | None
    last_error: str | None
    last_error_type: str | None
    error_types: dict[str, int] = field(default_factory=dict)
    degraded: bool = False
    registered: bool = True

    def to_dict(self) -> dict[str, Any]:
        """JSON-compatible view (``tooldeck stats --json``)."""
        return {
            "tool": self.tool,
            "calls": self.calls,
            "successes": self.successes,
            "failures": self.failures,
            "success_rate": None if self.success_rate is None else round(self.success_rate, 4),
            "avg_duration_ms": None if self.avg_duration_ms is None else round(self.avg_duration_ms, 3),
            "last_success": self.last_success,
            "last_failure": self.last_failure,
            "last_error": self.last_error,
            "last_error_type": self.last_error_type,
            "error_types": dict(self.error_types),
            "degraded": self.degraded,
            "registered": self.registered,
        }


def stats_rows(
    stats: Mapping[str, ToolStats],
    tool_names: Iterable[str] = (),
    *,
    tool: str | None = None,
    degraded_only: bool = False,
    threshold: float = 0.7,
    min_calls: int = 5,
) -> list[StatsRow]:
    """The report's rows: registered tools in registry order, then tools only the figures
    know (sorted), then the buckets.

    Args:
        stats: Figures by tool name (``MetricsStore.all_stats()`` or ``InMemoryMetrics.all_stats()``).
        tool_names: The registry's tool names; those without figures get a "no calls yet" row.
        tool: Only this tool's row (empty when it is neither registered nor recorded).
        degraded_only: Only degraded tools.
        threshold: Success rate below which a tool is degraded.
        min_calls: Calls needed before a tool can be judged degraded.
    """
    registered = list(dict.fromkeys(tool_names))
    known = set(registered)
    others = sorted(name for name in stats if name not in known and name not in BUCKETS)
    buckets = sorted(name for name in stats if name in BUCKETS)
    rows = []
    for name in [*registered, *others, *buckets]:
        if tool is not None and name != tool:
            continue
        row = _row(name, stats.get(name), threshold, min_calls, registered=name in known)
        if not degraded_only or row.degraded:
            rows.append(row)
    return rows


def _row(name: str, figures: ToolStats | None, threshold: float, min_calls: int, *, registered: bool) -> StatsRow:
    if figures is None or figures.calls == 0:
        return StatsRow(name, 0, 0, 0, None, None, None, None, None, None, registered=registered)
    rate = figures.success_rate
    return StatsRow(
        tool=name,
        calls=figures.calls,
        successes=figures.successes,
        failures=figures.failures,
        success_rate=rate,
        avg_duration_ms=figures.avg_duration_ms if figures.successes else None,
        last_success=figures.last_success,
        last_failure=figures.last_failure,
        last_error=figures.last_error,
        last_error_type=figures.last_error_type,
        error_types=dict(figures.error_types),
        degraded=name not in BUCKETS and figures.calls >= min_calls and rate < threshold,
        registered=registered,
    )


def success_rate_style(rate: float | None) -> str:
    """The ``rich`` style of a success rate: green (> 80 %), yellow (50-80 %), red (< 50 %)."""
    if rate is None:
        return "dim"
    if rate > GREEN_ABOVE:
        return "green"
    if rate >= RED_BELOW:
        return "yellow"
    return "red"


def render_stats_table(rows: Sequence[StatsRow], *, title: str | None = "Tool metrics") -> Table:
    """A ``rich`` table of ``rows`` (print it with ``rich.console.Console().print``).

    Cell text is never read as rich markup, and its control characters are shown as
    escapes, so a tool name or an error message can neither restyle the table nor drive
    the terminal.

    Raises:
        ImportError: ``rich`` is not installed (extra ``cli``).
    """
    from rich.table import Table
    from rich.text import Text

    from tools._terminal import safe_text

    table = Table(title=title)
    table.add_column("Tool", no_wrap=True)
    table.add_column("Calls", justify="right")
    table.add_column("Success", justify="right")
    table.add_column("Avg ms", justify="right")
    table.add_column("Last success")
    table.add_column("Last error", overflow="fold")
    for row in rows:
        name = safe_text(row.tool, "bold red" if row.degraded else "")
        if row.success_rate is None:
            table.add_row(name, "0", Text(NO_CALLS, style="dim"), "", "", "")
            continue
        rate = Text(f"{row.success_rate:.0%}", style=success_rate_style(row.success_rate))
        avg = "" if row.avg_duration_ms is None else _ms(row.avg_duration_ms)
        error = ""
        if row.last_error_type is not None:
            error = f"{row.last_error_type}: {row.last_error}" if row.last_error else row.last_error_type
        table.add_row(name, str(row.calls), rate, avg, _when(row.last_success), safe_text(error))
    return table


def _ms(value: float) -> str:
    if value < 10:
        return f"{value:.2f}"
    return f"{value:.1f}" if value < 1000 else f"{value:.0f}"


def _when(stamp: str | None) -> str:
    """ISO-8601 UTC shortened to the second, e.g. ``2026-01-01 12:00:00``."""
    return "" if stamp is None else stamp[:19].replace("T", " ")
