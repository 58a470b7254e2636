"""``tooldeck run``: call a tool and print its result."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from tools.cli._context import EXIT_TOOL_ERROR, EXIT_USAGE, fail, parse_json_object, print_json, say, state
from tools.cli.approve_cmds import ApproveMode, cli_approver, cli_policy


def register(app: typer.Typer) -> None:
    """Add this module's commands to ``app``."""
    app.command("run")(run)
    app.command("call", hidden=True)(call)


def parse_args(params: str | None, args: list[str]) -> dict[str, Any]:
    """The call's arguments from ``--params`` JSON and ``--arg`` pairs (pairs win).

    ``key=value`` gives a string; ``key:=json`` gives a JSON value (number, bool, list, ...).
    """
    out = parse_json_object(params, what="--params") if params is not None else {}
    for item in args:
        key, sep, value = item.partition("=")
        typed = key.endswith(":")
        key = key[:-1] if typed else key
        if not sep or not key:
            fail(f"--arg {item!r}: expected key=value (a string) or key:=json, e.g. --arg city=Lisbon --arg days:=3")
        if typed:
            try:
                out[key] = json.loads(value)
            except ValueError:
                fail(f"--arg {item!r}: the value after ':=' must be JSON, e.g. --arg days:=3 or --arg tags:='[\"a\"]'")
        else:
            out[key] = value
    return out


def run(  # noqa: PLR0917 - typer maps parameters to options
    ctx: typer.Context,
    tool_id: Annotated[str, typer.Argument(help="The tool's id (or name, with --registry).")],
    params: Annotated[str | None, typer.Option("--params", "-p", help="Arguments as a JSON object.")] = None,
    arg: Annotated[
        list[str] | None, typer.Option("--arg", "-a", help="key=value (string) or key:=json; repeatable.")
    ] = None,
    action: Annotated[str, typer.Option("--action", help="Action of a multi-action tool.")] = "default",
    timeout: Annotated[float, typer.Option("--timeout", min=0.001, help="Seconds the call may take.")] = 30.0,
    artifact: Annotated[
        bool, typer.Option("--artifact", help="Keep the call (secrets masked) in .tooldeck/runs/.")
    ] = False,
    registry: Annotated[
        str | None, typer.Option("--registry", "-r", help="Call a tool of module:factory instead.")
    ] = None,
    app_dir: Annotated[Path | None, typer.Option("--app-dir", help="Where --registry is imported from.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the whole result envelope as JSON.")] = False,
    approve: Annotated[
        ApproveMode,
        typer.Option("--approve", help="A call that needs approval: ask at the terminal, or deny it."),
    ] = ApproveMode.ASK,
) -> None:
    """Run a tool once and print its result (exit code 1 when it returns an error).

    The freedom level (tooldeck configure freedom) decides which tools need a person's approval.

    --approve ask (the default) asks at the terminal; without a terminal such a call is denied.

    [b]Examples[/b]

      tooldeck run get_current_time --arg timezone=Europe/Lisbon
      tooldeck run weather --params '{"city": "Lisbon"}' --json
      tooldeck run forecast --arg city=Porto --arg days:=3 --artifact
      tooldeck run add --registry myapp.tools:build_registry --params '{"a": 1}'
      tooldeck run shell --arg cmd=ls --approve deny
    """
    cli = state(ctx)
    arguments = parse_args(params, arg or [])
    policy, approver = cli_policy(cli), cli_approver(approve)
    if registry is not None:
        from tools.approvals import call_with_approval
        from tools.cli._registry_spec import load_registry

        target = load_registry(registry, app_dir)
        if action != "default" and "action" not in arguments:  # a multi-action tool's action
            arguments["action"] = action
        result = call_with_approval(target, tool_id, arguments, policy=policy, approver=approver)
    else:
        execution = cli.execution(artifacts=artifact, policy=policy, approver=approver)
        result = execution.execute(tool_id, action, arguments, timeout)
        details = (result.error.details or {}) if result.error else {}
        if details.get("reason") == "not_adopted":
            fail(result.error.message if result.error else "not adopted", code=EXIT_USAGE)
    if as_json:
        print_json(result.to_dict())
    elif result.error is None:
        data = result.data
        say(data if isinstance(data, str) else json.dumps(data, indent=2, ensure_ascii=False, default=str))
    else:
        from tools.cli._human import for_people

        say(f"tooldeck: {tool_id} failed ({result.error.type}): {for_people(tool_id, result.error)}", err=True)
    if result.error is not None:
        raise typer.Exit(EXIT_TOOL_ERROR)


def call(
    ctx: typer.Context,
    registry: Annotated[str, typer.Argument(help="module:attribute naming a LocalToolRegistry or a factory.")],
    tool: Annotated[str, typer.Argument(help="The tool name.")],
    arguments: Annotated[str, typer.Argument(help="The arguments as a JSON object.")] = "{}",
    app_dir: Annotated[Path | None, typer.Option("--app-dir", help="Where the registry is imported from.")] = None,
) -> None:
    """Call a tool of a registry and print the envelope (the 0.1 form of ``run --registry``).

    [b]Examples[/b]

      tooldeck call myapp.tools:build_registry weather '{"city": "Lisbon"}'
    """
    from tools.approvals import call_with_approval
    from tools.cli._registry_spec import load_registry

    policy, approver = cli_policy(state(ctx)), cli_approver(ApproveMode.ASK)
    result = call_with_approval(load_registry(registry, app_dir), tool, arguments, policy=policy, approver=approver)
    print_json(result.to_dict())
    if result.error is not None:
        raise typer.Exit(EXIT_TOOL_ERROR)
