"""``tooldeck ui``: serve the console on this machine.

The command is added to ``tooldeck`` through the ``tooldeck.commands`` entry-point group
(see `tools.cli.app`): ``tools`` never imports ``orchestrator``. This module imports only
typer; FastAPI, uvicorn and Jinja2 are imported when the console starts, and a missing one
is a one-line error naming the extra to install.
"""

from __future__ import annotations

import socket
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from orchestrator.ui._compose import ConsoleSetup
    from tools.cli._context import CliContext

__all__ = ["register", "ui"]

DEFAULT_PORT = 8777


def register(app: typer.Typer) -> None:
    """Add ``tooldeck ui`` to ``app`` (the ``tooldeck.commands`` entry point)."""
    app.command("ui")(ui)


def ui(  # noqa: PLR0917 - typer maps parameters to options
    ctx: typer.Context,
    port: Annotated[int, typer.Option("--port", "-p", min=0, max=65535, help="Port (0: any free one).")] = DEFAULT_PORT,
    host: Annotated[str, typer.Option("--host", help="Address to listen on (loopback unless --token).")] = "127.0.0.1",
    token: Annotated[
        str | None, typer.Option("--token", help="The URL's password (default: a random one); needed off loopback.")
    ] = None,
    allow_host: Annotated[
        list[str] | None, typer.Option("--allow-host", help="Another name the console answers to (repeatable).")
    ] = None,
    registry: Annotated[
        list[str] | None, typer.Option("--registry", "-r", help="Your tools: module:factory (repeatable).")
    ] = None,
    app_dir: Annotated[Path | None, typer.Option("--app-dir", help="Where --registry modules are imported.")] = None,
    no_builtins: Annotated[bool, typer.Option("--no-builtins", help="Only the --registry tools.")] = False,
) -> None:
    """A local web console: tools, routing, runs, approvals, metrics and settings.

    It listens on 127.0.0.1 only and prints its URL with a random token (like Jupyter's);
    keep that URL to yourself. Listening on another address needs --token.

    [b]Examples[/b]

      tooldeck ui
      tooldeck ui --port 9000 --registry myapp.tools:build_registry
      tooldeck ui --host 192.168.1.20 --token "$(openssl rand -hex 24)"
    """
    from orchestrator.ui.security import ConsoleSecurity, is_loopback, new_token
    from tools.cli._context import fail, state

    cli = state(ctx)
    if not is_loopback(host) and not token:
        fail(
            f"--host {host} would let anyone who can reach that address run your tools and approve calls: pass "
            "--token TOKEN (a long random secret, e.g. from `openssl rand -hex 24`) to listen there, or leave "
            "--host out to listen on 127.0.0.1 only"
        )
    try:
        import uvicorn

        from orchestrator.ui.app import create_app
    except ImportError as exc:
        fail(f"tooldeck ui needs the ui extra: pip install -e '.[ui]' in a tooldeck checkout ({exc})")
    try:
        sock = _bind(host, port)
    except OSError as exc:
        fail(f"cannot listen on {host}:{port} ({exc.strerror or exc}); choose another --port (0: any free one)")
    bound = sock.getsockname()[1]
    hosts = frozenset({host, *(allow_host or [])})
    try:
        security = ConsoleSecurity(token=token or new_token(), port=bound, hosts=hosts)
    except ValueError as exc:
        sock.close()
        fail(str(exc))
    setup = _setup(cli, registry or [], app_dir, not no_builtins, sock)
    shown = f"[{host}]" if ":" in host else host
    _say(f"tooldeck console: http://{shown}:{bound}/?token={security.token}")
    _say("  the token in this URL is the console's password: keep it to yourself. Ctrl-C stops the console.")
    config = uvicorn.Config(
        create_app(setup.sources, security),
        log_level="warning",
        access_log=False,
        lifespan="off",
        timeout_graceful_shutdown=2,
    )
    try:
        with sock:
            uvicorn.Server(config).run(sockets=[sock])
    except KeyboardInterrupt:
        pass  # Ctrl-C is how the console stops (uvicorn raises it again once it shut down)
    finally:
        setup.close()
    _say("tooldeck console stopped")


def _setup(
    cli: CliContext, registries: list[str], app_dir: Path | None, builtins: bool, sock: socket.socket
) -> ConsoleSetup:
    """The console's sources; a configuration problem is a one-line error (the socket closed)."""
    from orchestrator.service import ServiceConfigError
    from orchestrator.ui._compose import console_sources
    from tools.cli._context import fail
    from tools.errors import TooldeckError

    try:
        return console_sources(cli.env, cli.project_dir, registries=registries, app_dir=app_dir, builtins=builtins)
    except (TooldeckError, ServiceConfigError, ValueError) as exc:
        sock.close()
        fail(f"the console cannot start: {exc}")


def _bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (IPv6 when ``host`` is an IPv6 address)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host.strip("[]"), port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    return sock


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()
