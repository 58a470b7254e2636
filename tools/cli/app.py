"""The ``tooldeck`` application: global options, the command modules, exit codes.

Each command group lives in its own module with a ``register(app)`` function; adding one
(``tools/cli/stats.py``) is one line in :data:`COMMAND_MODULES`.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated

import typer

from tools._procgroup import Termination, exit_if_terminated, sigterm_as_interrupt
from tools.cli._context import EXIT_USAGE, CliContext, CliError

#: One module per command group, each with ``register(app: typer.Typer) -> None``.
COMMAND_MODULES: tuple[str, ...] = (
    "tools.cli.registry_cmds",
    "tools.cli.run_cmds",
    "tools.cli.catalog_cmds",
    "tools.cli.schema_cmds",
    "tools.cli.executor_cmds",
    "tools.cli.stats_cmds",
    "tools.cli.approve_cmds",
    "tools.cli.trust_cmds",
    "tools.cli.runs_cmds",
)

HELP = """\
Declare, discover, adopt, check and run tools; export and serve their schemas.

[b]Examples[/b]

  tooldeck catalog sync --mcp "time=python -m mcp_server_time"
  tooldeck catalog search time
  tooldeck adopt time:get_current_time
  tooldeck run get_current_time --arg timezone=Europe/Lisbon
  tooldeck list --json | jq '.[].id'
  tooldeck runs list --status paused

A project's .tooldeck/registry.json is used only after [b]tooldeck trust[/b] (any change asks again).

Exit codes: 0 success; 1 the tool returned an error envelope; 2 usage or setup error.
"""


def build_app() -> typer.Typer:
    """The ``tooldeck`` Typer application with every command group registered."""
    app = typer.Typer(
        name="tooldeck",
        help=HELP,
        rich_markup_mode="rich",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        context_settings={"help_option_names": ["-h", "--help"]},
    )

    @app.callback()
    def _root(
        ctx: typer.Context,
        project_dir: Annotated[
            Path | None,
            typer.Option("--project-dir", "-C", help="Project directory whose .tooldeck/ is used (default: cwd)."),
        ] = None,
        catalog: Annotated[
            Path | None,
            typer.Option("--catalog", help="Catalog database (default: .tooldeck/catalog.sqlite3)."),
        ] = None,
        verbose: Annotated[int, typer.Option("--verbose", "-v", count=True, help="Log more (-v, -vv).")] = 0,
        quiet: Annotated[int, typer.Option("--quiet", "-q", count=True, help="Log only errors (-q) or nothing.")] = 0,
    ) -> None:
        obj = ctx.obj
        if isinstance(obj, CliContext):
            if project_dir is not None:
                obj.project_dir = project_dir.resolve()
            obj.catalog_path = catalog
        from tools._terminal import cli_logging, level_for

        cli_logging(level_for(verbose, quiet), sys.stderr)

    for name in COMMAND_MODULES:
        importlib.import_module(name).register(app)
    return app


def run(argv: Sequence[str] | None = None, *, env: Mapping[str, str] | None = None) -> int:
    """Run ``tooldeck`` with ``argv``; returns the exit code, never raises, prints no traceback."""
    environ = os.environ if env is None else env
    context = CliContext(env=dict(environ), project_dir=Path.cwd())
    args = list(sys.argv[1:] if argv is None else argv)
    terminated = Termination()
    try:
        command = typer.main.get_command(build_app())
        with sigterm_as_interrupt(terminated):  # SIGTERM stops tool children as Ctrl-C does
            code = command.main(args=args, prog_name="tooldeck", obj=context, standalone_mode=False)
        return int(code or 0)
    except CliError as exc:
        _error(str(exc))
        return exc.code
    except KeyboardInterrupt:
        _error("interrupted")
        return 130
    except BrokenPipeError:
        _silence_stdout()
        return 0
    except Exception as exc:
        return _handle(exc, debug=bool(environ.get("TOOLDECK_DEBUG")))
    finally:
        context.close()
        exit_if_terminated(terminated)


def _kinds(exc: BaseException) -> set[str]:
    """Class names in ``exc``'s MRO: click's exceptions come from click or from typer's vendored
    copy (typer >= 0.25), so they are recognised by name."""
    return {cls.__name__ for cls in type(exc).__mro__}


def _handle(exc: Exception, *, debug: bool) -> int:
    from tools.errors import TooldeckError

    kinds = _kinds(exc)
    if "NoArgsIsHelpError" in kinds:
        getattr(exc, "show", lambda: None)()
        return EXIT_USAGE
    if "UsageError" in kinds:
        ctx = getattr(exc, "ctx", None)
        hint = f" (see: {ctx.command_path} --help)" if ctx is not None else ""
        _error(f"{exc.format_message()}{hint}")  # type: ignore[attr-defined]
        return EXIT_USAGE
    if "ClickException" in kinds:
        _error(exc.format_message())  # type: ignore[attr-defined]
        return EXIT_USAGE
    if "Abort" in kinds:
        _error("aborted")
        return 130
    if isinstance(exc, TooldeckError):
        _error(str(exc))
        return EXIT_USAGE
    if debug:
        raise exc
    _error(f"internal error: {type(exc).__name__}: {exc} (a bug; rerun with TOOLDECK_DEBUG=1 for the traceback)")
    return EXIT_USAGE


def _error(message: str) -> None:
    from tools._terminal import terminal_safe

    first = terminal_safe(" ".join(message.split()))
    with contextlib.suppress(OSError):
        sys.stderr.write(f"tooldeck: error: {first}\n")
        sys.stderr.flush()


def _silence_stdout() -> None:
    """After a broken pipe (``tooldeck list | head``), make the final flush a no-op."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
