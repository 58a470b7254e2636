"""``python -m shared.context_service --config context.toml [--host 127.0.0.1 --port 8765]``.

The API key is read from the environment variable named by the config's ``api_key_env``
(or ``--api-key-env``), never from the command line or the file.

Startup order: the config is loaded and checked (unknown time zones, adapters or options
are errors here, not at the first request), then the port is bound (a port in use is one
clear error), then the sources are read in the background, one log line each.

Modules (``--modules-dir``) run only in sandboxed worker processes, which the tool layer
starts (``shared`` does not import it): serve them with
``python -m tools.builtin.modules.context_service`` (the same arguments), which passes
``main`` its ``module_workers`` factory. Without one, ``--modules-dir`` is refused.

Exit codes: 0 stopped normally; 2 configuration or startup error (bad config, missing API
key, port unavailable), with one ``error:`` line per problem and no traceback.
"""

from __future__ import annotations

import argparse
import errno
import logging
import os
import socket
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from shared.modules import ModuleWorkers

EXIT_CONFIG = 2
#: Builds the module workers: (store folder, key folder, hosts the operator allows) -> workers.
WorkersFactory = Callable[[Path, Path, Sequence[str]], "ModuleWorkers"]


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number; use e.g. 8765") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port number (0-65535); use e.g. 8765")
    return port


def build_parser() -> argparse.ArgumentParser:
    """The command-line parser."""
    parser = argparse.ArgumentParser(prog="python -m shared.context_service", description=__doc__)
    parser.add_argument("--config", required=True, help="JSON or TOML config file")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=_port, default=8765)
    parser.add_argument("--api-key-env", default=None, help="environment variable holding the API key")
    parser.add_argument(
        "--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"], type=str.lower
    )
    parser.add_argument("--no-warm-up", action="store_true", help="do not read the sources at startup")
    parser.add_argument("--modules-dir", default=None, help="serve the enabled modules of this module store")
    parser.add_argument(
        "--module-allow-host",
        action="append",
        default=[],
        metavar="HOST",
        help="a host modules may reach even on loopback or a private network (repeatable)",
    )
    return parser


def bind(host: str, port: int) -> socket.socket:
    """A listening-ready socket on ``host:port``.

    Raises:
        OSError: With a message naming the address and the fix (port in use, not allowed,
            address not on this machine).
    """
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise OSError(f"cannot listen on host {host!r} ({exc.strerror}); pass --host 127.0.0.1") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise OSError(
                f"port {port} on {host} is already in use (another context service?); stop the "
                f"program using it or pass another port, e.g. --port {port + 1}"
            ) from None
        if exc.errno == errno.EACCES:
            raise OSError(
                f"not allowed to listen on port {port} on {host}; use a port above 1023, e.g. --port 8765"
            ) from None
        raise OSError(f"cannot listen on {host}:{port} ({exc.strerror}); check --host and --port") from None
    return sock


def _fail(stderr: TextIO, *lines: str) -> int:
    for line in lines:
        print(f"error: {line}", file=stderr)
    return EXIT_CONFIG


class _SetupError(Exception):
    """The service cannot start; ``lines`` say why and what to do (one ``error:`` line each)."""

    def __init__(self, *lines: str) -> None:
        super().__init__(*lines)
        self.lines = lines


def main(
    argv: Sequence[str] | None = None,
    environ: Mapping[str, str] | None = None,
    *,
    stderr: TextIO | None = None,
    module_workers: WorkersFactory | None = None,
) -> int:
    """Parse arguments, load and check the config, bind the port and serve until interrupted.

    Args:
        argv: The arguments (default ``sys.argv[1:]``).
        environ: The environment (default ``os.environ``).
        stderr: Where ``error:`` lines go.
        module_workers: Starts the module workers (needed for ``--modules-dir``).
    """
    args = build_parser().parse_args(argv)
    env = os.environ if environ is None else environ
    err = stderr or sys.stderr
    try:
        import uvicorn

        from shared.context_service.app import create_app
    except ImportError as exc:
        return _fail(err, f"the context service needs the 'context' extra: pip install -e '.[context]' ({exc})")
    closers: list[Callable[[], None]] = []
    try:
        config, api_key, aggregator = _setup(args, env, module_workers, closers)
    except _SetupError as exc:
        _close(closers)
        return _fail(err, *exc.lines)
    try:
        sock = bind(args.host, args.port)
    except OSError as exc:
        aggregator.close()
        _close(closers)
        return _fail(err, str(exc))
    _configure_logging(args.log_level, err)
    port = sock.getsockname()[1]
    shown_host = f"[{args.host}]" if ":" in args.host else args.host
    logging.getLogger("shared.context_service").info(
        "serving %s on http://%s:%d (users: %s)",
        os.path.basename(args.config),
        shown_host,
        port,
        ", ".join(config.users) or "none",
    )
    # Workers are stopped when the app shuts down: uvicorn re-raises SIGTERM once it has.
    app = create_app(aggregator, api_key=api_key, warm_up=not args.no_warm_up, on_shutdown=[lambda: _close(closers)])
    server: Any = uvicorn.Server(uvicorn.Config(app, log_level=args.log_level, access_log=False))
    try:
        with sock:
            server.run(sockets=[sock])
    finally:
        _close(closers)
    return 0


def _close(closers: list[Callable[[], None]]) -> None:
    """Run and forget ``closers``, last added first."""
    while closers:
        closers.pop()()


def _setup(
    args: argparse.Namespace,
    env: Mapping[str, str],
    module_workers: WorkersFactory | None,
    closers: list[Callable[[], None]],
) -> tuple[Any, str | None, Any]:
    """The config, the API key and a checked aggregator; every problem before serving."""
    from shared.context_service.aggregator import ContextAggregator
    from shared.context_service.config import ConfigError, load_config

    try:
        config = load_config(args.config)
    except ConfigError as exc:
        raise _SetupError(f"config: {exc}") from None
    key_env = args.api_key_env or config.api_key_env
    api_key = env.get(key_env) if key_env else None
    if key_env and not api_key:
        raise _SetupError(f"config: environment variable {key_env} (the API key) is not set")
    try:
        modules = _modules(args, env, module_workers, closers)
    except ValueError as exc:  # KeyFileError: an unusable module key
        raise _SetupError(f"config: {exc}") from None
    aggregator = ContextAggregator(config, modules=modules)
    problems = aggregator.check_config()
    if problems:
        aggregator.close()
        raise _SetupError(*(f"config: {os.path.basename(args.config)}: {problem}" for problem in problems))
    return config, api_key, aggregator


def _configure_logging(level: str, stream: TextIO) -> None:
    """Our loggers at ``level``; other libraries' only from WARNING (ofxtools logs at INFO
    for every transaction it parses)."""
    logging.basicConfig(level=logging.WARNING, stream=stream, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    logging.getLogger("shared").setLevel(level.upper())


def _modules(
    args: argparse.Namespace,
    env: Mapping[str, str],
    module_workers: WorkersFactory | None,
    closers: list[Callable[[], None]],
) -> Any:
    """The enabled modules of ``--modules-dir`` (keys from the environment or the key
    files), each run by a worker from ``module_workers``."""
    if not args.modules_dir:
        return None
    if module_workers is None:
        raise _SetupError(
            "--modules-dir: modules run only in sandboxed worker processes, which this entry point cannot "
            "start; serve them with 'python -m tools.builtin.modules.context_service' and the same arguments"
        )
    from shared.modules import ModuleAdapters, default_key_dir

    folder = Path(args.modules_dir)
    workers = module_workers(folder, default_key_dir(folder), tuple(args.module_allow_host))
    closers.append(workers.close)
    modules = ModuleAdapters.from_store(
        folder,
        credentials_key=env.get("TOOLDECK_MODULE_CREDENTIALS_KEY"),
        signing_key=env.get("TOOLDECK_MODULE_SIGNING_KEY"),
        workers=workers,
    )
    closers.append(modules.close)
    return modules


if __name__ == "__main__":
    sys.exit(main())
