"""``tooldeck schema | serve-mcp``: export the tools' schemas, serve them over MCP."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from tools.cli._context import fail, print_json, state

if TYPE_CHECKING:
    from tools.registry import LocalToolRegistry

RegistryArgument = Annotated[
    str | None,
    typer.Argument(help="module:attribute naming a LocalToolRegistry or a factory (default: adopted + builtins)."),
]
AppDirOption = Annotated[Path | None, typer.Option("--app-dir", help="Where the registry module is imported from.")]


class SchemaFormat(str, Enum):
    """Wire formats ``tooldeck schema`` writes."""

    OPENAI = "openai"
    ANTHROPIC = "anthropic"
    MCP = "mcp"
    GEMINI = "gemini"


def register(app: typer.Typer) -> None:
    """Add this module's commands to ``app``."""
    app.command("schema")(schema)
    app.command("serve-mcp")(serve_mcp)


def _registry(ctx: typer.Context, spec: str | None, app_dir: Path | None) -> LocalToolRegistry:
    from tools.cli._registry_spec import default_registry, load_registry

    return load_registry(spec, app_dir) if spec is not None else default_registry(state(ctx))


def schema(  # noqa: PLR0917 - typer maps parameters to options
    ctx: typer.Context,
    registry: RegistryArgument = None,
    fmt: Annotated[SchemaFormat, typer.Option("--format", "-f", help="Wire format.")] = SchemaFormat.OPENAI,
    strict: Annotated[bool, typer.Option("--strict", help="OpenAI strict mode (with --format openai).")] = False,
    agent: Annotated[
        str | None, typer.Option("--agent", help="Only the tools this agent type may use (routing).")
    ] = None,
    raise_unsupported: Annotated[
        bool,
        typer.Option(
            "--raise-unsupported",
            help="Fail on a tool strict mode (or Gemini) cannot express (default: warn).",
        ),
    ] = False,
    app_dir: AppDirOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Accepted for symmetry: the output is always JSON.")] = False,
) -> None:
    """Print the tools' schemas as JSON (OpenAI, Anthropic, MCP or Gemini format).

    [b]Examples[/b]

      tooldeck schema --format openai --strict > tools.json
      tooldeck schema myapp.tools:build_registry --format anthropic
      tooldeck schema --agent explore --format mcp
      tooldeck schema --format gemini                  # function declarations for google-genai
    """
    del as_json
    if strict and fmt is not SchemaFormat.OPENAI:
        fail("--strict applies to --format openai only; drop --strict or use --format openai")
    target: Any = _registry(ctx, registry, app_dir)
    if agent is not None:
        for_agent = getattr(target, "for_agent", None)
        if for_agent is None:
            fail("--agent needs per-agent routing (registry.for_agent), which this tooldeck does not have yet")
        target = for_agent(agent)
    on_unsupported = "raise" if raise_unsupported else "warn"
    if fmt is SchemaFormat.OPENAI:
        tools = target.to_openai_tools(strict=strict, on_unsupported=on_unsupported)
    elif fmt is SchemaFormat.GEMINI:
        tools = target.to_gemini_tools(on_unsupported=on_unsupported)
    elif fmt is SchemaFormat.ANTHROPIC:
        tools = target.to_anthropic_tools()
    else:
        tools = target.to_mcp_tools()
    print_json(tools)


def serve_mcp(
    ctx: typer.Context,
    registry: RegistryArgument = None,
    app_dir: AppDirOption = None,
) -> None:
    """Serve the tools as an MCP server over stdio (needs the mcp extra).

    The freedom level applies (TOOLDECK_FREEDOM, else the stored level, else medium): a call
    that needs approval is asked about through the client (MCP elicitation), or refused with
    how to approve it.

    [b]Examples[/b]

      tooldeck serve-mcp                               # adopted tools + builtins
      tooldeck serve-mcp myapp.tools:build_registry --app-dir ./src
    """
    from tools.cli.approve_cmds import cli_policy

    target = _registry(ctx, registry, app_dir)
    policy = cli_policy(state(ctx)) if target.policy is None else None  # a registry's own policy stays
    try:
        from tools.external.mcp.server import serve_stdio
    except ImportError as exc:
        fail(f"serve-mcp needs the MCP SDK ({exc}); install it with: pip install -e '.[mcp]'")
    serve_stdio(target, policy=policy)
