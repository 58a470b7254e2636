"""The ``tooldeck`` command: export schemas of, call, and serve the tools of a registry.

A registry is named as ``module:factory`` — a function (no arguments) returning a
``LocalToolRegistry`` — so the CLI works with any project's composition root.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Sequence
from typing import Any

from tools.errors import TooldeckError
from tools.registry import LocalToolRegistry

EPILOG = """\
examples:
  tooldeck schema myapp.tools:build_registry --format openai --strict > tools.json
  tooldeck list myapp.tools:build_registry
  tooldeck call myapp.tools:build_registry weather '{"city": "Lisbon"}'
  tooldeck serve-mcp myapp.tools:build_registry        # MCP over stdio (extra: mcp)

exit codes: 0 success, 1 the tool call returned an error envelope, 2 bad usage or setup.
"""


class CliError(Exception):
    """A usage or setup problem, reported as one line and exit code 2."""


def load_registry(spec: str) -> LocalToolRegistry:
    """Import ``module:factory`` and call the factory.

    Raises:
        CliError: the spec is malformed, the import fails, or the factory returns something else.
    """
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise CliError(f"registry {spec!r}: expected 'module:factory', e.g. 'myapp.tools:build_registry'.")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise CliError(
            f"registry {spec!r}: cannot import {module_name!r} ({exc}); run from the project root "
            "or install the package that provides it."
        ) from None
    factory = getattr(module, attr, None)
    if not callable(factory):
        raise CliError(f"registry {spec!r}: {module_name!r} has no callable {attr!r}.")
    registry = factory()
    if not isinstance(registry, LocalToolRegistry):
        raise CliError(f"registry {spec!r}: {attr}() returned {type(registry).__name__}, not a LocalToolRegistry.")
    return registry


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tooldeck",
        description="Export, call and serve the tools of a tooldeck registry.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True)
    schema = sub.add_parser("schema", help="print the tools' schemas as JSON")
    schema.add_argument("registry", help="module:factory returning a LocalToolRegistry")
    schema.add_argument("--format", choices=["openai", "anthropic", "mcp"], default="openai")
    schema.add_argument("--strict", action="store_true", help="OpenAI strict mode (with --format openai)")
    schema.add_argument(
        "--on-unsupported",
        choices=["warn", "raise"],
        default="warn",
        help="what to do with a tool strict mode cannot express (default: export it non-strict and warn)",
    )
    listing = sub.add_parser("list", help="list the registered tools, one per line")
    listing.add_argument("registry")
    call = sub.add_parser("call", help="call one tool and print the result envelope as JSON")
    call.add_argument("registry")
    call.add_argument("tool", help="the tool name")
    call.add_argument("arguments", nargs="?", default="{}", help="the arguments as a JSON object (default {})")
    serve = sub.add_parser("serve-mcp", help="serve the registry as an MCP server over stdio")
    serve.add_argument("registry")
    return parser


def _run(args: argparse.Namespace) -> int:
    registry = load_registry(args.registry)
    if args.command == "schema":
        tools: list[dict[str, Any]]
        if args.format == "openai":
            tools = registry.to_openai_tools(strict=args.strict, on_unsupported=args.on_unsupported)
        elif args.format == "anthropic":
            tools = registry.to_anthropic_tools()
        else:
            tools = registry.to_mcp_tools()
        print(json.dumps(tools, indent=2))
        return 0
    if args.command == "list":
        for name in registry:
            tool = registry.tool(name)
            print(f"{name}\t{tool.description if tool else ''}")
        return 0
    if args.command == "call":
        result = registry.call_tool_raw(args.tool, args.arguments)
        print(json.dumps(result.to_dict(), indent=2))
        return 0 if result.ok else 1
    return _serve_mcp(registry)


def _serve_mcp(registry: LocalToolRegistry) -> int:
    try:
        server = importlib.import_module("tools.external.mcp.server")
    except ImportError as exc:
        raise CliError(
            f"serve-mcp needs the MCP SDK ({exc}); "
            "install the mcp extra: pip install -e '.[mcp]' in a tooldeck checkout"
        ) from None
    server.serve_stdio(registry)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``tooldeck`` console script; returns the exit code."""
    args = _parser().parse_args(argv)
    try:
        return _run(args)
    except (CliError, TooldeckError) as exc:
        print(f"tooldeck: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
