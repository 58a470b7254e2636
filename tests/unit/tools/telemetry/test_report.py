"""``tooldeck stats`` rows and table: order, "no calls yet", filters, colours, JSON."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from tools import InMemoryMetrics, LocalToolRegistry, ToolError
from tools.metrics import ToolStats
from tools.telemetry import StatsRow, render_stats_table, stats_rows, success_rate_style

pytest.importorskip("rich")

from rich.console import Console
from rich.text import Text


def figures(calls: int, successes: int, **extra: object) -> ToolStats:
    return ToolStats(
        calls=calls,
        successes=successes,
        failures=calls - successes,
        success_duration_ms=12.5 * successes,
        total_duration_ms=12.5 * calls,
        **extra,  # type: ignore[arg-type]
    )


STATS = {
    "weather": figures(10, 9, last_success="2026-03-01T10:00:00.123456+00:00"),
    "search": figures(10, 6, last_error="rate limited", last_error_type="upstream_error"),
    "old_tool": figures(4, 1),
    "(unknown tool)": figures(3, 0, error_types=Counter({"unknown_tool": 3})),
}


def test_rows_order_registered_first_then_file_only_then_buckets() -> None:
    rows = stats_rows(STATS, ["weather", "math", "search"])
    assert [row.tool for row in rows] == ["weather", "math", "search", "old_tool", "(unknown tool)"]
    assert [row.registered for row in rows] == [True, True, True, False, False]
    math = rows[1]
    assert (math.calls, math.success_rate, math.avg_duration_ms) == (0, None, None)


def test_row_figures() -> None:
    (row,) = stats_rows(STATS, tool="search")
    assert row == StatsRow(
        tool="search",
        calls=10,
        successes=6,
        failures=4,
        success_rate=0.6,
        avg_duration_ms=12.5,
        last_success=None,
        last_failure=None,
        last_error="rate limited",
        last_error_type="upstream_error",
        error_types={},
        degraded=True,
        registered=False,
    )


def test_filters() -> None:
    assert [r.tool for r in stats_rows(STATS, ["weather", "search"], degraded_only=True)] == ["search"]
    assert [r.tool for r in stats_rows(STATS, degraded_only=True, threshold=0.5, min_calls=4)] == ["old_tool"]
    assert stats_rows(STATS, ["weather"], tool="missing") == []
    assert [r.tool for r in stats_rows(STATS, ["math"], tool="math")] == ["math"]
    assert not any(row.degraded for row in stats_rows(STATS, min_calls=1) if row.tool.startswith("("))


def test_rows_are_json() -> None:
    rows = stats_rows(STATS, ["math", "weather"])
    payload = json.loads(json.dumps([row.to_dict() for row in rows]))
    assert payload[0] == {
        "tool": "math",
        "calls": 0,
        "successes": 0,
        "failures": 0,
        "success_rate": None,
        "avg_duration_ms": None,
        "last_success": None,
        "last_failure": None,
        "last_error": None,
        "last_error_type": None,
        "error_types": {},
        "degraded": False,
        "registered": True,
    }
    assert payload[1]["success_rate"] == 0.9


@pytest.mark.parametrize(
    ("rate", "style"),
    [(None, "dim"), (1.0, "green"), (0.81, "green"), (0.8, "yellow"), (0.5, "yellow"), (0.49, "red"), (0.0, "red")],
)
def test_success_rate_colours(rate: float | None, style: str) -> None:
    assert success_rate_style(rate) == style


def render(rows: list[StatsRow]) -> tuple[str, Console]:
    console = Console(record=True, width=160, color_system="truecolor", force_terminal=True)
    console.print(render_stats_table(rows))
    return console.export_text(), console


def test_table_shows_rates_coloured_and_no_calls_yet() -> None:
    rows = stats_rows(STATS, ["weather", "math", "search"])
    table = render_stats_table(rows)
    success = table.columns[2]
    cells = {row.tool: cell for row, cell in zip(rows, success._cells, strict=True) if isinstance(cell, Text)}
    assert (str(cells["weather"]), cells["weather"].style) == ("90%", "green")
    assert (str(cells["search"]), cells["search"].style) == ("60%", "yellow")
    assert (str(cells["old_tool"]), cells["old_tool"].style) == ("25%", "red")
    assert str(cells["math"]) == "no calls yet"
    text, _ = render(rows)
    assert "2026-03-01 10:00:00" in text
    assert "upstream_error: rate limited" in text
    assert "12.5 " in text


def test_cells_are_not_markup() -> None:
    stats = {
        "t": figures(2, 1, last_error="[bold red]boom[/] [link=http://evil]x[/link]", last_error_type="execution_error")
    }
    text, _ = render(stats_rows(stats))
    assert "[bold red]boom[/] [link=http://evil]x[/link]" in text


def test_rows_from_in_memory_metrics_of_a_real_registry() -> None:
    metrics = InMemoryMetrics()
    registry = LocalToolRegistry(metrics=metrics, failure_threshold=100)

    @registry.tool
    def half(n: int) -> int:
        """Fails on odd numbers."""
        if n % 2:
            raise ToolError("odd")
        return n

    @registry.tool
    def unused() -> None:
        """Never called."""

    for n in range(4):
        registry("half", n=n)
    rows = stats_rows(metrics.all_stats(), list(registry))
    assert [(r.tool, r.calls, r.success_rate, r.last_error) for r in rows] == [
        ("half", 4, 0.5, "odd"),
        ("unused", 0, None, None),
    ]
