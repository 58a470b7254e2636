"""The flags of ``python -m orchestrator`` for your own tools, run records, progress and
streaming, and what they turn into: the tools to register, the run store, the progress view."""

from __future__ import annotations

import argparse
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from orchestrator._progress import ProgressView
    from orchestrator.llm import ChatModel
    from orchestrator.settings import Settings
    from tools import LocalToolRegistry
    from tools.runs import RunStore

_RUN_ID = re.compile(r"^run_[0-9a-f]{6,32}$")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``--registry``, ``--app-dir``, ``--no-builtins``, ``--no-record``, ``--stream``, ``-q``."""
    group = parser.add_argument_group("your tools, records and output")
    group.add_argument(
        "--registry",
        action="append",
        default=[],
        metavar="MODULE:FACTORY",
        help="add the tools of MODULE:FACTORY (a LocalToolRegistry, a function returning one, a tool or a list of "
        "tools; the current directory is importable) to the builtins; repeatable",
    )
    group.add_argument("--app-dir", metavar="DIR", help="where --registry modules are imported from (default .)")
    group.add_argument("--no-builtins", action="store_true", help="only the --registry tools, no builtin tools")
    group.add_argument(
        "--no-record",
        action="store_true",
        help="do not record this run (default: recorded under the data directory; see tooldeck runs list)",
    )
    group.add_argument(
        "--stream",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="stream the model's answer as it is written (server-sent events; --base-url servers only)",
    )
    group.add_argument("-q", "--quiet", action="count", default=0, help="log only errors (-q) or nothing (-qq)")


def own_registries(specs: Sequence[str], app_dir: str | None) -> list[LocalToolRegistry]:
    """The registries the ``--registry`` flags name.

    Raises:
        RegistrySpecError: a spec cannot be resolved (the message names it and the fix).
    """
    from tools.registry_spec import load_registry

    directory = Path(app_dir) if app_dir else None
    return [load_registry(spec, directory) for spec in specs]


def test_model(settings: Settings, own: Sequence[LocalToolRegistry]) -> ChatModel | None:
    """``--model test`` with ``--registry``: a `TestModel` that calls your tools only (trying
    yours should not search the web or build modules); None: the settings' model."""
    from orchestrator.service import TEST_MODEL

    if settings.base_url is not None or settings.model != TEST_MODEL or not own:
        return None
    from orchestrator.testing import TestModel

    return TestModel(call_tools=[name for registry in own for name in registry.names() if not registry.is_hidden(name)])


def run_store(args: argparse.Namespace, env: Mapping[str, str], data_dir: Path) -> RunStore | None:
    """Where this invocation's runs are recorded (None with ``--no-record``)."""
    if args.no_record:
        return None
    from tools.runs import run_store_from_env

    return run_store_from_env(env, data_dir)


def resolve_resume(value: str, data_dir: Path) -> str:
    """What ``--resume`` names: a state file as given, or a run id (or its first characters) of
    a paused run whose state was saved under ``<data dir>/paused``.

    Raises:
        ValueError: an id that names no saved state, or several.
    """
    if value == "-" or not _RUN_ID.match(value) or Path(value).exists():
        return value
    paused = data_dir / "paused"
    exact = paused / f"{value}.json"
    if exact.is_file():
        return str(exact)
    matches = sorted(paused.glob(f"{value}*.json")) if paused.is_dir() else []
    if len(matches) == 1:
        return str(matches[0])
    if not matches:
        raise ValueError(
            f"--resume {value}: no paused run with that id has a saved state in {paused}; see the paused runs with: "
            "tooldeck runs list --status paused"
        )
    shown = ", ".join(m.stem for m in matches[:5])
    raise ValueError(f"--resume {value}: matches {len(matches)} paused runs ({shown}); give more of the id")


def progress_view(args: argparse.Namespace, stderr: TextIO, model: str) -> ProgressView | None:
    """The live progress display on stderr, when stderr is a terminal (else None: no hooks)."""
    if args.quiet or not _isatty(stderr):
        return None
    from orchestrator._progress import ProgressView
    from tools._terminal import SafeConsole

    return ProgressView(SafeConsole(file=stderr, stderr=True), model=model)


def data_dir_of(args: argparse.Namespace, env: Mapping[str, str]) -> Path:
    """The data directory this invocation uses (``--data-dir``, else the environment's)."""
    from tools.runs import data_dir_from_env

    return Path(args.data_dir).expanduser() if args.data_dir else data_dir_from_env(env)


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
