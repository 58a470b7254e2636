"""``tooldeck catalog sync | search | sources``: the catalog of tools that could be adopted."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from tools._terminal import markup_safe
from tools.cli._context import EXIT_USAGE, console, fail, print_json, print_table, state

if TYPE_CHECKING:
    from tools.store import CatalogEntry, CatalogSource

catalog_app = typer.Typer(
    help="The catalog of known tools: fill it from sources, search it, then adopt entries.",
    no_args_is_help=True,
)
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")]


def register(app: typer.Typer) -> None:
    """Add this module's command group to ``app``."""
    app.add_typer(catalog_app, name="catalog")


def _mcp_source(spec: str) -> CatalogSource:
    from tools.store.sources import MCPServerSource

    name, sep, command = spec.partition("=")
    if not sep or not name.strip() or not command.strip():
        fail(f"--mcp {spec!r}: expected NAME=COMMAND, e.g. --mcp 'time=python -m mcp_server_time'")
    target = command.strip()
    if target.startswith(("http://", "https://")):
        return MCPServerSource(name=name.strip(), url=target)
    try:
        argv = shlex.split(target)
    except ValueError as exc:
        fail(f"--mcp {spec!r}: the command cannot be split into words ({exc})")
    return MCPServerSource(name=name.strip(), command=argv)


def _named(spec: str) -> tuple[str, Path]:
    """``NAME=PATH`` or ``PATH`` (named after the file or directory)."""
    name, sep, path = spec.partition("=")
    if sep and name and path:
        return _safe_name(name), Path(path)
    return _safe_name(Path(spec).stem), Path(spec)


@catalog_app.command("sync")
def sync(  # noqa: PLR0917 - typer maps parameters to options
    ctx: typer.Context,
    manuals: Annotated[
        list[str] | None,
        typer.Option("--manuals", help="[NAME=]FILE: a JSON file of tool manuals (repeatable)."),
    ] = None,
    mcp: Annotated[
        list[str] | None,
        typer.Option("--mcp", help="NAME=COMMAND or NAME=URL of an MCP server to list (repeatable)."),
    ] = None,
    binaries: Annotated[
        list[str] | None,
        typer.Option("--binaries", help="[NAME=]DIR of tool binaries answering --schema (repeatable)."),
    ] = None,
    only: Annotated[list[str] | None, typer.Option("--only", help="Sync only this source (repeatable).")] = None,
    as_json: JsonOption = False,
) -> None:
    """Add sources (remembered in the catalog) and refresh every source.

    [b]Examples[/b]

      tooldeck catalog sync --mcp "time=python -m mcp_server_time"
      tooldeck catalog sync --manuals apis=./tools.json --binaries ./bin
      tooldeck catalog sync                      # refresh every remembered source
    """
    from pydantic import ValidationError

    from tools.store.sources import BinaryDirSource, ManualFileSource

    catalog = state(ctx).catalog()
    added: list[Any] = []
    try:
        for spec in manuals or []:
            name, path = _named(spec)
            added.append(ManualFileSource(name=name, path=str(path.resolve())))
        for spec in binaries or []:
            name, path = _named(spec)
            added.append(BinaryDirSource(name=name, path=str(path.resolve())))
        added += [_mcp_source(spec) for spec in mcp or []]
    except ValidationError as exc:
        first = exc.errors()[0]
        fail(f"bad source: {'.'.join(str(p) for p in first['loc'])}: {first['msg']}")
    for source in added:
        catalog.add_source(source)
    if not catalog.sources():
        fail("the catalog has no sources; add one, e.g. tooldeck catalog sync --mcp 'time=python -m mcp_server_time'")
    names = only or ([s.name for s in added] if added else None)
    from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn

    with Progress(
        SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), console=console(stderr=True), transient=True
    ) as progress:
        task = progress.add_task("syncing", total=None)

        def on_progress(name: str, index: int, total: int, done: bool) -> None:
            progress.update(task, total=total, completed=index, description=f"{'synced' if done else 'syncing'} {name}")

        report = catalog.sync(names, progress=on_progress)
    rows = [
        {"source": s.source, "entries": s.entries, "added": s.added, "removed": s.removed, "error": s.error}
        for s in report.sources
    ]
    if as_json:
        print_json({"ok": report.ok, "sources": rows})
    else:
        out = console()
        for row in rows:
            if row["error"]:
                out.print(
                    f"[red]{markup_safe(str(row['source']))}[/]: failed, kept {row['entries']} entries: "
                    f"{markup_safe(str(row['error']))}",
                    markup=True,
                )
            else:
                out.print(f"{row['source']}: {row['entries']} tools (+{row['added']} -{row['removed']})")
    if not report.ok:
        raise typer.Exit(EXIT_USAGE)


def _safe_name(name: str) -> str:
    import re

    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)[:64] or "source"


def entry_record(entry: CatalogEntry) -> dict[str, Any]:
    """The JSON record of one catalog entry."""
    from tools.store.service import adopt_command

    return {
        "catalog_id": entry.catalog_id,
        "source": entry.source,
        "name": entry.name,
        "adapter_type": entry.adapter_type,
        "description": entry.description,
        "capabilities": list(entry.capabilities),
        "adopt_command": adopt_command(entry),
    }


@catalog_app.command("search")
def search(
    ctx: typer.Context,
    text: Annotated[str, typer.Argument(help="Words to look for in names, descriptions and capabilities.")] = "",
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, max=1000, help="Most entries shown.")] = 20,
    as_json: JsonOption = False,
) -> None:
    """Search the catalog by text (all words first, then any word).

    [b]Examples[/b]

      tooldeck catalog search time
      tooldeck catalog search "current weather" --json
    """
    entries = state(ctx).catalog().search(text, limit=limit)
    rows = [entry_record(e) for e in entries]
    if as_json:
        print_json(rows)
        return
    out = console()
    if not rows:
        out.print(f"Nothing in the catalog matches {text!r}. Add sources with: tooldeck catalog sync --help")
        return
    print_table(
        ["catalog id", "adapter", "capabilities", "description"],
        [[r["catalog_id"], r["adapter_type"], ",".join(r["capabilities"]), r["description"][:70]] for r in rows],
    )
    if out.is_terminal:
        out.print("Adopt one with: tooldeck adopt CATALOG_ID")


@catalog_app.command("sources")
def sources(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """List the catalog's remembered sources.

    [b]Examples[/b]

      tooldeck catalog sources --json
    """
    found = [s.model_dump(mode="json") for s in state(ctx).catalog().sources()]
    if as_json:
        print_json(found)
        return
    out = console()
    for source in found:
        target = source.get("path") or source.get("url") or " ".join(source.get("command") or [])
        out.print(f"{source['name']}\t{source['kind']}\t{target}")
