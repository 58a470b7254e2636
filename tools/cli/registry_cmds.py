"""``tooldeck list | describe | check | adopt | remove``: the adopted tools."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from tools._terminal import markup_safe, safe_text
from tools.cli._context import EXIT_USAGE, console, fail, print_json, print_table, state
from tools.cli._manual_view import RiskChoice

if TYPE_CHECKING:
    from rich.text import Text

    from tools.store import CapabilityMatch, RegistryService, ToolConfig

JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON for scripts instead of a table.")]
_SENSITIVE_HEADER = re.compile(r"auth|key|token|secret|cookie|password", re.IGNORECASE)


def register(app: typer.Typer) -> None:
    """Add this module's commands to ``app``."""
    app.command("list")(list_tools)
    app.command("describe")(describe)
    app.command("check")(check)
    app.command("adopt")(adopt)
    app.command("remove")(remove)


def summary(config: ToolConfig, service: RegistryService, scope: str | None) -> dict[str, Any]:
    """The ``list --json`` record of one tool (never a secret: configs hold variable names)."""
    return {
        "id": config.id,
        "name": config.label,
        "adapter_type": config.adapter_type,
        "description": config.description,
        "capabilities": list(config.capabilities),
        "scope": scope,
        "adopted_from": config.adopted_from,
        "adopted_at": config.adopted_at.isoformat() if config.adopted_at else None,
        "auth_env": config.auth.env_var if config.auth else None,
        "approved": not _changed(config),
    }


def _changed(config: ToolConfig) -> bool:
    return config.version_hash is not None and config.version_hash != config.compute_version_hash()


def list_tools(
    ctx: typer.Context,
    capability: Annotated[
        str | None, typer.Option("--capability", "-c", help="Only tools with this capability tag.")
    ] = None,
    status: Annotated[bool, typer.Option("--status", help="Check each tool's readiness (starts MCP servers).")] = False,
    as_json: JsonOption = False,
) -> None:
    """List the adopted tools (project and user registries).

    [b]Examples[/b]

      tooldeck list
      tooldeck list --capability current_time
      tooldeck list --status --json
    """
    cli = state(ctx)
    service = cli.registry_service(with_catalog=capability is not None)
    store = service.store
    project, user = store.load_project(), store.load_user()
    merged = {**user.tools, **project.tools}
    configs = [merged[k] for k in sorted(merged)]
    match: CapabilityMatch | None = None
    if capability is not None:
        match = service.find_by_capability(capability)
        configs = match.available
    rows = [summary(c, service, "project" if c.id in project.tools else "user") for c in configs]
    if status:
        rows = _with_status(cli, rows)
    if as_json:
        if match is not None:
            print_json({"capability": match.capability, "available": rows, "suggested": _suggestions(match)})
        else:
            print_json(rows)
        return
    _print_table(rows, status)
    if match is not None and not match.available:
        _print_suggestions(match)


def _with_status(cli: Any, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    from rich.progress import Progress

    execution = cli.execution()
    with Progress(console=console(stderr=True), transient=True) as progress:
        task = progress.add_task("checking tools", total=len(rows))
        for row in rows:
            check = execution.check_ready(row["id"])
            row["ready"], row["missing"] = check.ready, check.missing
            progress.advance(task)
    return rows


def _suggestions(match: CapabilityMatch) -> list[dict[str, Any]]:
    from tools.store.service import adopt_command

    return [
        {
            "catalog_id": e.catalog_id,
            "description": e.description,
            "adapter_type": e.adapter_type,
            "capabilities": list(e.capabilities),
            "adopt_command": adopt_command(e),
        }
        for e in match.suggested
    ]


def _print_table(rows: list[dict[str, Any]], status: bool) -> None:
    if not rows:
        console().print("No adopted tools. Find some with: tooldeck catalog search TEXT")
        return
    headers = ["id", "adapter", "capabilities", "from", "description"] + (["status"] if status else [])
    cells: list[list[str | Text]] = []
    for row in rows:
        line: list[str | Text] = [
            row["id"],
            row["adapter_type"],
            ",".join(row["capabilities"]),
            row["adopted_from"] or row["scope"] or "",
            " ".join((row["description"] or "").split())[:80],
        ]
        if status:
            line.append(
                safe_text("ready", "green") if row["ready"] else safe_text("; ".join(row["missing"])[:160], "red")
            )
        cells.append(line)
    print_table(headers, cells)


def _print_suggestions(match: CapabilityMatch) -> None:
    from tools.store.service import adopt_command

    out = console()
    if not match.suggested:
        out.print(f"No adopted tool has capability {match.capability!r}, and the catalog suggests none.")
        return
    out.print(f"No adopted tool has capability {match.capability!r}. Catalog tools that could be adopted:")
    for entry in match.suggested:
        command, about = markup_safe(adopt_command(entry)), markup_safe(entry.description[:60])
        out.print(f"  {command}    [dim]{about}[/]", markup=True)


def describe(
    ctx: typer.Context,
    tool_id: Annotated[str, typer.Argument(help="The adopted tool's id.")],
    as_json: JsonOption = False,
) -> None:
    """Show one adopted tool: its settings, its risk, category and mutating flag (and where
    each came from: you, a hint, its name, the fail-closed default), and its version hash.

    [b]Examples[/b]

      tooldeck describe get_current_time
      tooldeck describe weather --json
    """
    from tools.cli._manual_view import manual_lines, manual_record
    from tools.store._secrets import redactor_for
    from tools.store.builder import manual_for

    service = state(ctx).registry_service()
    config = service.get(tool_id)
    settings = _masked(config.to_json_dict())
    manual = manual_for(config)
    doc = {
        "id": config.id,
        "scope": service.store.scope_of(config.id),
        "config": settings,
        "manual": manual.model_dump(mode="json"),
        "risk_model": manual_record(manual),
        "version_hash": config.compute_version_hash(),
        "adopted_version_hash": config.version_hash,
        "approved": not _changed(config),
        "needs_reapproval": _changed(config),
    }
    doc = redactor_for([config], service.builder.env).data(doc)
    if as_json:
        print_json(doc)
        return
    from rich.panel import Panel
    from rich.syntax import Syntax

    out = console()
    title = f"{config.id} ({config.adapter_type}, {doc['scope']} registry)"
    out.print(Panel(Syntax(json.dumps(doc["config"], indent=2), "json", word_wrap=True), title=title))
    for line in manual_lines(manual):
        out.print(line)  # plain text: the console reads no markup, so brackets stay as written
    out.print(f"capabilities {', '.join(manual.capabilities) or '-'}")
    state_line = "changed since adoption: adopt it again to approve" if doc["needs_reapproval"] else "approved"
    out.print(f"version {doc['version_hash'][:16]} ({state_line})")


def _masked(settings: dict[str, Any]) -> dict[str, Any]:
    http = settings.get("http")
    if isinstance(http, dict) and isinstance(http.get("headers"), dict):
        http["headers"] = {k: ("***" if _SENSITIVE_HEADER.search(k) else v) for k, v in http["headers"].items()}
    return settings


def check(
    ctx: typer.Context,
    tool_id: Annotated[str, typer.Argument(help="The adopted tool's id.")],
    as_json: JsonOption = False,
) -> None:
    """Check that a tool can run: auth variable set, program on PATH, MCP server starts.

    Exit code 0 when ready, 2 when something is missing (each item says how to fix it).

    [b]Examples[/b]

      tooldeck check get_current_time
      tooldeck check weather --json
    """
    result = state(ctx).execution().check_ready(tool_id)
    if as_json:
        print_json({"tool_id": result.tool_id, "ready": result.ready, "missing": result.missing, "notes": result.notes})
    else:
        out = console()
        if result.ready:
            out.print(f"[green]ready[/]: {markup_safe(tool_id)}", markup=True)
        else:
            out.print(f"[red]not ready[/]: {markup_safe(tool_id)}", markup=True)
            for item in result.missing:  # plain text: a fix such as pip install -e '.[mcp]' stays whole
                out.print(f"  - {item}")
        for note in result.notes:
            out.print(f"  note: {note}")
    if not result.ready:
        raise typer.Exit(EXIT_USAGE)


def adopt(  # noqa: PLR0917 - typer maps parameters to options
    ctx: typer.Context,
    catalog_id: Annotated[str | None, typer.Argument(help="Catalog id, e.g. time:get_current_time.")] = None,
    tool_id: Annotated[str | None, typer.Option("--id", help="Adopt under this tool id.")] = None,
    capability: Annotated[
        list[str] | None, typer.Option("--capability", "-c", help="Capability tag to add (repeatable).")
    ] = None,
    from_file: Annotated[
        Path | None, typer.Option("--from-file", "-f", help="Adopt a ToolConfig JSON file instead.")
    ] = None,
    replace: Annotated[bool, typer.Option("--replace", help="Replace an adopted tool with the same id.")] = False,
    risk: Annotated[
        RiskChoice | None, typer.Option("--risk", help="Declare its risk (else: moderate, or dangerous by name).")
    ] = None,
    category: Annotated[
        str | None, typer.Option("--category", help="Declare its category, e.g. file-read, web, search.")
    ] = None,
    read_only: Annotated[
        bool | None,
        typer.Option("--read-only/--mutating", help="Declare that it changes nothing (or that it changes things)."),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Adopt a catalog entry (or a ToolConfig file) into the project registry.

    Nothing a tool's name or source says makes it safe: without your declarations it is
    moderate (dangerous when its name or program deletes, sends, pays, deploys or executes)
    and may change things. --risk, --category and --read-only declare them (stored in the
    registry file); the output says where each value came from.

    [b]Examples[/b]

      tooldeck adopt time:get_current_time --read-only --risk safe
      tooldeck adopt manuals:weather --id weather --capability forecast
      tooldeck adopt --from-file mytool.json --category file-write
    """
    from tools.cli._manual_view import declarations, manual_lines, manual_record
    from tools.store.builder import manual_for

    if (catalog_id is None) == (from_file is None):
        fail("give a CATALOG_ID or --from-file FILE (one of them); e.g. tooldeck adopt time:get_current_time")
    declared = declarations(risk, category, read_only)
    service = state(ctx).registry_service()
    target: Any = catalog_id
    if from_file is not None:
        target = _config_file(from_file)
        target = target.model_copy(update={"adopted_from": target.adopted_from or str(from_file.resolve())})
    config = service.adopt(target, tool_id=tool_id, capabilities=capability or [], replace=replace, manual=declared)
    manual = manual_for(config)
    if as_json:
        print_json(summary(config, service, "project") | {"risk_model": manual_record(manual)})
        return
    out = console()
    out.print(
        f"adopted [bold]{markup_safe(config.id)}[/] ({config.adapter_type}) into "
        f"{markup_safe(str(service.store.project_path))}",
        markup=True,
    )
    for line in manual_lines(manual):
        out.print("  " + line)
    if declared is None:
        again = shlex.join([catalog_id]) if catalog_id is not None else f"--from-file {shlex.quote(str(from_file))}"
        out.print(
            f"  declare what you know of it: tooldeck adopt {again} --id {config.id} --replace "
            "[--risk R] [--category C] [--read-only]"
        )
    out.print(f"  try: tooldeck check {config.id}   then: tooldeck run {config.id} --params '{{...}}'")


def _config_file(path: Path) -> ToolConfig:
    from pydantic import ValidationError

    from tools.store.config import ToolConfig

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        fail(f"cannot read {path} ({exc}); give a JSON file with one ToolConfig")
    try:
        return ToolConfig.model_validate_json(text)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        fail(f"{path}: {where}: {first['msg']}; see docs/store.md for the ToolConfig fields")


def remove(
    ctx: typer.Context,
    tool_id: Annotated[str, typer.Argument(help="The adopted tool's id.")],
    as_json: JsonOption = False,
) -> None:
    """Remove an adopted tool from the project registry.

    [b]Examples[/b]

      tooldeck remove get_current_time
    """
    service = state(ctx).registry_service(with_catalog=False)
    config = service.remove(tool_id)
    if as_json:
        print_json({"removed": config.id})
    else:
        console().print(f"removed {config.id}")
