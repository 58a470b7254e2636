"""``python -m tools.external.mcp --registry module:factory``: serve a registry over MCP.

``factory`` is a function taking no arguments and returning a registry (a
``LocalToolRegistry``). Logs go to stderr; stdout carries only the protocol.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from collections.abc import Sequence
from typing import Any

from tools._procgroup import exit_if_terminated, sigterm_as_interrupt
from tools.external.mcp.server import ServableRegistry, serve_http, serve_stdio


def load_registry(spec: str) -> ServableRegistry:
    """Import ``module:factory`` and call the factory.

    Raises:
        SystemExit: with a message naming what is wrong (bad spec, import failure, a
            factory that is not callable or does not return a registry).
    """
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise SystemExit(f"--registry must look like 'package.module:factory', got {spec!r}")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise SystemExit(f"cannot import {module_name!r}: {exc}") from None
    factory: Any = module
    for part in attr.split("."):
        factory = getattr(factory, part, None)
    if not callable(factory):
        raise SystemExit(f"{spec!r} is not a callable factory")
    registry = factory()
    if not callable(getattr(registry, "to_mcp_tools", None)) or not callable(getattr(registry, "acall_tool", None)):
        raise SystemExit(f"{spec!r} returned {type(registry).__name__}, not a tool registry")
    return registry  # type: ignore[no-any-return]


def main(argv: Sequence[str] | None = None) -> int:
    """Parse arguments, build the registry and serve it until the client goes away."""
    parser = argparse.ArgumentParser(
        prog="python -m tools.external.mcp", description="Serve a tooldeck registry over MCP."
    )
    parser.add_argument("--registry", required=True, help="module:factory returning a registry")
    parser.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    parser.add_argument("--host", default="127.0.0.1", help="HTTP interface (http transport)")
    parser.add_argument("--port", type=int, default=8000, help="HTTP port (http transport)")
    parser.add_argument("--name", default="tooldeck", help="server name announced to clients")
    parser.add_argument(
        "--log-level",
        default=os.environ.get("TOOLDECK_LOG_LEVEL", "WARNING"),
        help="stderr log level",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(stream=sys.stderr, level=args.log_level.upper())
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    registry = load_registry(args.registry)
    try:
        with sigterm_as_interrupt() as terminated:  # SIGTERM stops tool children as Ctrl-C does
            if args.transport == "http":
                serve_http(registry, host=args.host, port=args.port, name=args.name)
            else:
                serve_stdio(registry, name=args.name)
    except KeyboardInterrupt:
        exit_if_terminated(terminated)
        raise
    return 0


if __name__ == "__main__":
    sys.exit(main())
