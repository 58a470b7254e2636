"""What every command shares: the environment, the project, output helpers and errors.

The environment is read once, in :func:`tools.cli.main`, and handed to :class:`CliContext`;
the services (registry store, catalog, execution) are built from it on demand, so a command
imports only what it uses.
"""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import typer

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

    from tools.approvals import ApprovalPolicy, Approver
    from tools.metrics import ToolStats
    from tools.store import ExecutionService, RegistryService, RegistryStore, ToolCatalog
    from tools.telemetry import MetricsBackend

EXIT_OK = 0
EXIT_TOOL_ERROR = 1
EXIT_USAGE = 2


class CliError(Exception):
    """A usage or setup problem: one line naming the cause and the fix, exit code 2."""

    def __init__(self, message: str, *, code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.code = code


@dataclass
class CliContext:
    """The state of one ``tooldeck`` invocation.

    Attributes:
        env: The process environment (read once, at the entry point).
        project_dir: The project whose ``.tooldeck/`` is used.
        catalog_path: The catalog database (default ``.tooldeck/catalog.sqlite3``).
    """

    env: Mapping[str, str]
    project_dir: Path
    catalog_path: Path | None = None
    _closers: list[Any] = field(default_factory=list)
    _warned: bool = False

    @property
    def database_url(self) -> str | None:
        """``TOOLDECK_DATABASE_URL``: the PostgreSQL database of the shared state, or None.

        Raises:
            CliError: it is set but not a ``postgresql://`` URL.
        """
        from tools.postgres import DATABASE_URL_VARIABLE, check_database_url

        value = self.env.get(DATABASE_URL_VARIABLE, "").strip()
        try:
            return check_database_url(value) if value else None
        except ValueError as exc:
            fail(str(exc))

    @property
    def tooldeck_dir(self) -> Path:
        """``<project>/.tooldeck``."""
        return self.project_dir / ".tooldeck"

    def store(self) -> RegistryStore:
        """The user and project registry files."""
        from tools.store.registry_store import RegistryStore

        return RegistryStore.from_env(self.env, project_dir=self.project_dir)

    def catalog(self) -> ToolCatalog:
        """The project's catalog (the user's own only when they created it)."""
        from tools.store.catalog import ToolCatalog

        path = self.catalog_path or self.tooldeck_dir / "catalog.sqlite3"
        # A catalog that came with the directory (cloned, copied) runs and adopts nothing.
        return ToolCatalog(path, env=self.env, owners=self.store().trust)

    def registry_service(self, *, with_catalog: bool = True) -> RegistryService:
        """The registry service (closed when the command ends)."""
        from tools.store.service import RegistryService

        catalog = self.catalog() if with_catalog and self._catalog_exists() else None
        service = RegistryService(self.store(), catalog=catalog, env=self.env)
        self._closers.append(service.close)
        self.warn_untrusted(service.store)
        return service

    def trust_command(self) -> str:
        """The ``tooldeck trust`` command for this invocation's project."""
        if self.project_dir == Path.cwd():
            return "tooldeck trust"
        return f"tooldeck -C {shlex.quote(str(self.project_dir))} trust"

    def warn_untrusted(self, store: RegistryStore) -> None:
        """Say once, on stderr, why the project's registry file is not used (like direnv)."""
        from tools.errors import TooldeckError

        if self._warned:
            return
        self._warned = True
        try:
            notice = store.project_trust().notice(self.trust_command())
        except TooldeckError:  # the command that reads the file reports it
            return
        if notice is not None:
            say(f"tooldeck: warning: {notice}", err=True)

    def execution(
        self, *, artifacts: bool = False, policy: ApprovalPolicy | None = None, approver: Approver | None = None
    ) -> ExecutionService:
        """The execution service; every call is recorded in ``.tooldeck/metrics.json`` (the
        learning loop behind ``tooldeck stats``); with ``artifacts``, calls are kept under
        ``.tooldeck/runs``; with ``policy`` (and ``approver``), calls are approved first."""
        from tools.store.execution import ExecutionService

        runs = self.tooldeck_dir / "runs" if artifacts else None
        return ExecutionService(
            self.registry_service(),
            metrics=self.metrics_store(),
            artifacts_dir=runs,
            policy=policy,
            approver=approver,
        )

    def metrics_store(self) -> MetricsBackend:
        """The metrics store (flushed when the command ends): the project's
        ``.tooldeck/metrics.json``, or the database of ``TOOLDECK_DATABASE_URL``."""
        from tools.telemetry import open_metrics_store

        try:
            store = open_metrics_store(
                self.tooldeck_dir / "metrics.json", database_url=self.database_url, flush_interval=None
            )
        except ValueError as exc:
            fail(str(exc))
        self._closers.append(store.close)
        return store

    def stored_metrics(self, path: Path | None = None) -> dict[str, ToolStats]:
        """The figures every process has written: of the metrics file ``path`` when given,
        else of the database of ``TOOLDECK_DATABASE_URL``, else of ``.tooldeck/metrics.json``
        (empty when there is none).

        Raises:
            CliError: the file or the database cannot be read.
        """
        from tools.postgres import DatabaseError
        from tools.telemetry import MetricsFileError, MetricsStore, PostgresMetricsStore

        if path is None and self.database_url is not None:
            try:
                with PostgresMetricsStore(self.database_url, flush_interval=None) as database:
                    return database.read_database()
            except (ValueError, DatabaseError) as exc:
                fail(f"metrics: {exc}")
        path = path or self.tooldeck_dir / "metrics.json"
        if not path.exists():
            return {}
        store = MetricsStore(path, flush_interval=None)
        try:
            return store.read_file()
        except MetricsFileError as exc:
            fail(f"{exc}")
        finally:
            store.close()

    def _catalog_exists(self) -> bool:
        return (self.catalog_path or self.tooldeck_dir / "catalog.sqlite3").exists()

    def close(self) -> None:
        """Close what the command opened."""
        while self._closers:
            self._closers.pop()()


def state(ctx: typer.Context) -> CliContext:
    """The :class:`CliContext` of the running command."""
    obj = ctx.find_root().obj
    if not isinstance(obj, CliContext):  # pragma: no cover - main() always sets it
        raise CliError("tooldeck was started without its context; run it through the tooldeck command")
    return obj


def console(*, stderr: bool = False) -> Console:
    """A rich console on stdout (or stderr); plain text when not a terminal.

    It is a `tools._terminal.SafeConsole`: markup only where a ``print`` passes
    ``markup=True`` (interpolate untrusted text with ``markup_safe``), and control characters
    of everything printed are shown as escapes. Not on a terminal, printed text is not wrapped
    (a URL or a command cut at 80 columns cannot be copied, nor found by a script).
    """
    from tools._terminal import SafeConsole

    out = SafeConsole(stderr=stderr, soft_wrap=False)
    out.soft_wrap = not out.is_terminal
    return out


def say(text: str, *, err: bool = False) -> None:
    """Print ``text`` as plain lines (never wrapped, so scripts can read them), made
    terminal-safe, on stdout (or stderr)."""
    from tools._terminal import print_safe

    print_safe(text, sys.stderr if err else sys.stdout)


#: Above this many rows a terminal gets plain aligned columns (rich tables cost ~1 ms a row).
RICH_TABLE_ROWS = 200


def print_table(headers: list[str], rows: list[list[str | Text]]) -> None:
    """Rows for people: a rich table on a terminal, tab-separated lines when piped (like ``gh``).

    A ``str`` cell is plain text, shown as is (never read as markup); a styled cell is a
    ``rich.text.Text`` (build it from untrusted text with ``tools._terminal.safe_text``).
    Control characters are shown as escapes either way.
    """
    from tools._terminal import terminal_safe

    plain = [[terminal_safe(_plain(cell), newlines=False).replace("\t", " ") for cell in row] for row in rows]
    if not sys.stdout.isatty():  # piped: no rich table, no styles, one line per row
        sys.stdout.write("".join("\t".join(row) + "\n" for row in plain))
        sys.stdout.flush()
        return
    out = console()
    if len(rows) > RICH_TABLE_ROWS:
        widths = [min(40, max(len(h), *(len(r[i]) for r in plain))) for i, h in enumerate(headers)]
        out.print("  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)), style="bold")
        for row in plain:
            out.print("  ".join(c[:w].ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
        return
    from rich.table import Table

    table = Table(box=None, pad_edge=False, header_style="bold")
    for header in headers:
        table.add_column(header, overflow="fold")
    for row_cells, row_text in zip(rows, plain, strict=True):
        table.add_row(*(c if isinstance(c, str) else _styled(c, t) for c, t in zip(row_cells, row_text, strict=True)))
    out.print(table)


def _plain(cell: str | Text) -> str:
    return cell if isinstance(cell, str) else cell.plain


def _styled(cell: Text, safe: str) -> Text:
    """A styled cell with its text made safe (the style kept)."""
    if safe == cell.plain:
        return cell
    from rich.text import Text

    return Text(safe, style=cell.style)


def print_json(value: Any) -> None:
    """Print ``value`` as indented JSON on stdout (for ``--json``; characters that could drive
    a terminal are JSON escapes, so the values are unchanged)."""
    from tools._terminal import dumps_for_terminal

    sys.stdout.write(dumps_for_terminal(value) + "\n")
    sys.stdout.flush()


def fail(message: str, *, code: int = EXIT_USAGE) -> NoReturn:
    """Stop the command with a one-line error."""
    raise CliError(message, code=code)


def parse_json_object(text: str, *, what: str) -> dict[str, Any]:
    """``text`` as a JSON object, or a :class:`CliError` showing a correct example."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as exc:
        fail(f'{what} is not valid JSON ({exc}); pass an object, e.g. {what} \'{{"city": "Lisbon"}}\'')
    if not isinstance(value, dict):
        fail(f'{what} must be a JSON object, got {type(value).__name__}; e.g. {what} \'{{"city": "Lisbon"}}\'')
    return value
