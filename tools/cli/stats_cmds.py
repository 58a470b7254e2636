"""``tooldeck stats``: the learning loop's figures, per tool, from ``.tooldeck/metrics.json`` (or
the database of ``TOOLDECK_DATABASE_URL``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tools.cli._context import console, fail, print_json, print_table, state


def register(app: typer.Typer) -> None:
    """Add this module's command to ``app``."""
    app.command("stats")(stats)


def stats(  # noqa: PLR0917 - typer maps parameters to options
    ctx: typer.Context,
    tool_id: Annotated[str | None, typer.Argument(help="Only this tool.")] = None,
    degraded: Annotated[bool, typer.Option("--degraded", help="Only tools whose success rate is low.")] = False,
    threshold: Annotated[
        float, typer.Option("--threshold", min=0.0, max=1.0, help="Success rate below which a tool is degraded.")
    ] = 0.7,
    min_calls: Annotated[int, typer.Option("--min-calls", min=1, help="Calls needed before judging a tool.")] = 5,
    metrics: Annotated[
        Path | None,
        typer.Option(
            "--metrics",
            help="Metrics file (default: the database of TOOLDECK_DATABASE_URL, else .tooldeck/metrics.json).",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")] = False,
) -> None:
    """Calls, success rate, average duration and last error of each tool.

    Tools that are adopted but never ran show "no calls yet". Success rates are green above
    80%, yellow from 50% to 80%, red below 50%.

    [b]Examples[/b]

      tooldeck stats
      tooldeck stats get_current_time
      tooldeck stats --degraded --threshold 0.8 --json
    """
    from tools.telemetry import render_stats_table, stats_rows

    cli = state(ctx)
    if metrics is not None and not metrics.exists():
        fail(f"metrics file {metrics} does not exist; run some tools first or pass the right --metrics path")
    figures = cli.stored_metrics(metrics)
    names = [config.id for config in cli.registry_service(with_catalog=False).list_tools()]
    rows = stats_rows(figures, names, tool=tool_id, degraded_only=degraded, threshold=threshold, min_calls=min_calls)
    if tool_id is not None and not rows:
        fail(f"no tool {tool_id!r} is adopted or has figures; see `tooldeck list`")
    if as_json:
        print_json([row.to_dict() for row in rows])
        return
    if not rows:
        console().print("No degraded tools." if degraded else "No tools and no calls recorded yet.")
        return
    import sys

    if sys.stdout.isatty():
        console().print(render_stats_table(rows))
        return
    print_table(
        ["tool", "calls", "success", "avg_ms", "last_error"],
        [
            [
                row.tool,
                str(row.calls),
                "no calls yet" if row.success_rate is None else f"{row.success_rate:.0%}",
                "" if row.avg_duration_ms is None else f"{row.avg_duration_ms:.1f}",
                row.last_error_type or "",
            ]
            for row in rows
        ],
    )
