"""``tooldeck executor status DIR``: a directory of tool binaries, as the executor sees it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from tools.cli._context import console, fail, print_json, state

executor_app = typer.Typer(help="Tool binaries served by the binary executor.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    """Add this module's command group to ``app``."""
    app.add_typer(executor_app, name="executor")


@executor_app.command("status")
def status(
    ctx: typer.Context,
    directory: Annotated[Path, typer.Argument(help="Directory of tool binaries.")],
    metrics: Annotated[
        Path | None,
        typer.Option(
            "--metrics",
            help="Metrics JSON file (default: the database of TOOLDECK_DATABASE_URL, else .tooldeck/metrics.json).",
        ),
    ] = None,
    timeout: Annotated[float, typer.Option("--timeout", min=0.1, help="Seconds for each --schema answer.")] = 5.0,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")] = False,
) -> None:
    """Scan a directory of tool binaries: each one's status and metrics.

    Status is ready (schema known), schema-unknown (runs with free-form arguments),
    missing-binary or broken (with the reason).

    [b]Examples[/b]

      tooldeck executor status ~/.tooldeck/bin
      tooldeck executor status ./bin --json --metrics .tooldeck/metrics.json
    """
    from rich.progress import Progress, SpinnerColumn, TextColumn

    from tools.external.executor import ToolExecutorService

    cli = state(ctx)
    if not directory.is_dir():
        fail(f"{directory} is not a directory; pass the directory that holds the tool binaries")
    figures = {name: stats.to_dict() for name, stats in cli.stored_metrics(metrics).items()}
    service = ToolExecutorService(directory, env=cli.env, poll_interval=0, schema_timeout=timeout)
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), console=console(stderr=True), transient=True) as p:
        p.add_task(f"asking the binaries in {directory} for --schema", total=None)
        try:
            service.start()
            found = service.status()
        finally:
            service.stop()
    rows: list[dict[str, Any]] = [
        {"name": s.name, "path": s.path, "status": s.state, "message": s.message, "metrics": figures.get(s.name)}
        for s in found.values()
    ]
    if as_json:
        print_json(rows)
        return
    from rich.table import Table

    from tools._terminal import safe_text

    table = Table(box=None, pad_edge=False, header_style="bold")
    for column in ("name", "status", "calls", "success", "avg ms", "note"):
        table.add_column(column)
    colors = {"ready": "green", "schema-unknown": "yellow"}
    for row in rows:
        m = row["metrics"] or {}
        rate = m.get("success_rate")
        table.add_row(
            row["name"],
            safe_text(row["status"], colors.get(row["status"], "red")),
            str(m.get("calls", 0)),
            "-" if rate is None else f"{rate:.0%}",
            "-" if m.get("avg_duration_ms") is None else f"{m['avg_duration_ms']:.1f}",
            row["message"] or "",
        )
    out = console()
    out.print(table if rows else f"No tool binaries in {directory}.", soft_wrap=False)  # cells wrap, never cut
