"""``tooldeck trust | trust --revoke | untrust``: whether this project's registry file is used.

A project's ``.tooldeck/registry.json`` can declare tools that run programs; it arrives with a
cloned repository. Like ``direnv allow``, tooldeck uses it only after ``tooldeck trust``, and
only as it was then (the SHA-256 of its bytes, kept in the user's configuration): any change
asks again. ``trust`` prints what each tool runs, so what is trusted is on screen.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, Annotated, Any

import typer

from tools.cli._context import fail, print_json, say, state

if TYPE_CHECKING:
    from tools.store import ToolConfig

JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")]


def register(app: typer.Typer) -> None:
    """Add this module's commands to ``app``."""
    app.command("trust")(trust)
    app.command("untrust")(untrust)


def trust(
    ctx: typer.Context,
    revoke: Annotated[bool, typer.Option("--revoke", help="Withdraw the trust instead (same as untrust).")] = False,
    as_json: JsonOption = False,
) -> None:
    """Trust this project's .tooldeck/registry.json as it is now, so its tools are used.

    Until then (and after any change to the file) its tools are neither listed, started nor
    offered to a model. Review the file first: it can run programs. Your own registry
    (~/.config/tooldeck/registry.json) needs no trust.

    [b]Examples[/b]

      tooldeck trust
      tooldeck -C ~/src/app trust --json
      tooldeck trust --revoke
    """
    if revoke:
        _revoke(ctx, as_json)
        return
    from tools.errors import TooldeckError

    store = state(ctx).store()
    try:
        trusted, registry = store.trust_project()
    except TooldeckError as exc:
        fail(str(exc))
    tools = [_described(registry.tools[key]) for key in sorted(registry.tools)]
    if as_json:
        print_json(
            {
                "file": str(trusted.path),
                "sha256": trusted.sha256,
                "trusted_at": trusted.trusted_at.isoformat() if trusted.trusted_at else None,
                "tools": tools,
            }
        )
        return
    lines = [f"trusted {trusted.path} (sha256 {str(trusted.sha256)[:12]}): its {len(tools)} tool(s) are used now:"]
    lines += [f"  {tool['id']} ({tool['adapter_type']}): {tool['runs']}" for tool in tools]
    lines.append("any change to the file asks again; withdraw it with: tooldeck trust --revoke")
    say("\n".join(lines))


def untrust(ctx: typer.Context, as_json: JsonOption = False) -> None:
    """Withdraw the trust of this project's .tooldeck/registry.json: its tools are no longer used.

    [b]Examples[/b]

      tooldeck untrust
    """
    _revoke(ctx, as_json)


def _revoke(ctx: typer.Context, as_json: bool) -> None:
    from tools.errors import TooldeckError

    store = state(ctx).store()
    try:
        removed = store.revoke_project_trust()
    except TooldeckError as exc:
        fail(str(exc))
    if as_json:
        print_json({"file": str(store.project_path), "revoked": removed is not None})
        return
    if removed is None:
        say(f"{store.project_path} was not trusted; nothing changed")
    else:
        say(f"no longer trusted: {store.project_path}; its tools are not used until you run: tooldeck trust")


def _described(config: ToolConfig) -> dict[str, Any]:
    """What a person reviews of one tool: its id, kind and what it runs or reaches."""
    runs: str
    if config.cli is not None:
        runs = "runs " + shlex.join(config.cli.command)
    elif config.binary is not None:
        runs = "runs " + config.binary.path
    elif config.mcp is not None:
        runs = "starts " + shlex.join(config.mcp.command) if config.mcp.command else f"connects to {config.mcp.url}"
    elif config.http is not None:
        runs = f"calls {config.http.base_url}"
    else:  # pragma: no cover - a config has exactly one adapter
        runs = "?"
    return {"id": config.id, "adapter_type": config.adapter_type, "runs": runs}
