"""``python -m tools.external.mcp --registry module:factory``: serve a registry over MCP.

``factory`` is a function taking no arguments and returning a registry (a
``LocalToolRegistry``). Logs go to stderr; stdout carries only the protocol.

The freedom dial applies as everywhere: ``--freedom``, else ``TOOLDECK_FREEDOM``, else the
level ``tooldeck configure freedom`` stored, else ``medium`` (a registry built with its own
policy keeps it). A call that needs approval is asked about through the client (MCP
elicitation) or refused with how to approve it (``tooldeck approve ...``).
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from tools._procgroup import exit_if_terminated, sigterm_as_interrupt
from tools.external.mcp.server import ServableRegistry, serve_http, serve_stdio

if TYPE_CHECKING:
    from tools.approvals import ApprovalPolicy


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
        "--freedom",
        choices=("low", "medium", "high"),
        help="approval level (default: TOOLDECK_FREEDOM, else the stored level, else medium)",
    )
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
    policy = None if getattr(registry, "policy", None) is not None else user_policy(os.environ, args.freedom)
    try:
        with sigterm_as_interrupt() as terminated:  # SIGTERM stops tool children as Ctrl-C does
            if args.transport == "http":
                serve_http(registry, host=args.host, port=args.port, name=args.name, policy=policy)
            else:
                serve_stdio(registry, name=args.name, policy=policy)
    except KeyboardInterrupt:
        exit_if_terminated(terminated)
        raise
    return 0


def user_policy(env: Mapping[str, str], freedom: str | None = None) -> ApprovalPolicy:
    """The user's policy: ``freedom``, else ``TOOLDECK_FREEDOM``, else the stored level, else
    medium; the approvals of the user's file, or of the database of ``TOOLDECK_DATABASE_URL``.

    Raises:
        SystemExit: the variable, the approvals file or the database is unusable (nothing is served).
    """
    from tools.approvals import ApprovalError, ApprovalPolicy, freedom_from_env, open_approvals_store
    from tools.postgres import DATABASE_URL_VARIABLE, check_database_url

    try:
        url = env.get(DATABASE_URL_VARIABLE, "").strip()
        store = open_approvals_store(env, database_url=check_database_url(url) if url else None)
        policy = ApprovalPolicy(freedom or freedom_from_env(env), store)
        _ = policy.level  # a corrupt approvals file stops the server now, not every call
    except (ApprovalError, ValueError) as exc:
        raise SystemExit(f"approvals: {exc}") from None
    return policy


if __name__ == "__main__":
    sys.exit(main())
