"""What the host needs to run module workers: a launcher, limits, the worker's import path.

:class:`WorkerLauncher` starts one worker process somewhere isolated; the tool layer's
``tools.builtin.modules.SandboxWorkerLauncher`` uses the code sandbox (bubblewrap or its
namespaces launcher, as root and as an ordinary user). ``shared`` cannot import the tool
layer, so the launcher is handed in by the composition root (the orchestrator, or
``python -m tools.builtin.modules.context_service``).

The worker imports only ``shared.adapters`` (the ``BaseAdapter`` a module subclasses),
``shared.module_worker`` and their third-party packages. :func:`stage_worker_code` copies
those two packages to a private folder readable by the sandbox's uid, so the worker's view
holds them and not the rest of the project (where an application's data may live).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

__all__ = [
    "WORKER_PROGRAM",
    "WorkerLauncher",
    "WorkerLimits",
    "WorkerProcess",
    "WorkerStartError",
    "stage_worker_code",
    "worker_site_dirs",
]

#: What the launcher runs (with the staged code and the site folders on ``sys.path``).
WORKER_PROGRAM = "from shared.module_worker.main import main\nmain()\n"
#: Third-party packages the worker imports (pydantic for BaseAdapter, requests for HTTP).
_THIRD_PARTY = (
    "pydantic",
    "pydantic_core",
    "typing_extensions",
    "annotated_types",
    "typing_inspection",
    "requests",
    "urllib3",
    "idna",
    "certifi",
    "charset_normalizer",
    "tenacity",
)
_STAGED = ("__init__.py", "adapters", "module_worker")


class WorkerStartError(Exception):
    """A worker could not be started here (no usable sandbox, ...); the message says why."""


class WorkerProcess(Protocol):
    """A started worker: its pipes and its lifetime."""

    @property
    def pid(self) -> int:
        """The host process id of the worker's launcher, leader of its process group."""
        ...

    @property
    def stdin(self) -> int:
        """Descriptor the host writes frames to."""
        ...

    @property
    def stdout(self) -> int:
        """Descriptor the host reads frames from."""
        ...

    @property
    def stderr(self) -> int:
        """Descriptor of the worker's diagnostics (the host drains it)."""
        ...

    def poll(self) -> int | None:
        """The exit status once the process has ended, else None."""
        ...

    def stop(self) -> None:
        """Kill the whole process group, wait for it, close the pipes. Idempotent."""
        ...

    def exit_reason(self) -> str:
        """Why the process ended (exit status, signal, a launcher's refusal), for messages."""
        ...


class WorkerLauncher(Protocol):
    """Starts worker processes somewhere isolated."""

    def launch(self, *, program: str, python_path: Sequence[str]) -> WorkerProcess:
        """Start ``program`` (Python source) with ``python_path`` first on ``sys.path``.

        Raises:
            WorkerStartError: Nothing could be started (the message names the cause and fix).
        """
        ...


@dataclass(frozen=True, slots=True)
class WorkerLimits:
    """Bounds of the module workers. All values are positive.

    Attributes:
        call_timeout: Seconds one call may take, forwarded HTTP included; past it the
            worker is killed and restarted on the next call.
        start_timeout: Seconds a worker may take to start and load its module.
        http_timeout: Most seconds one forwarded HTTP request may take.
        max_restarts: Restarts allowed within ``restart_window``; past that the module
            is reported as failing until the window has passed.
        restart_window: Seconds over which restarts are counted.
    """

    call_timeout: float = 30.0
    start_timeout: float = 60.0
    http_timeout: float = 15.0
    max_restarts: int = 5
    restart_window: float = 60.0

    def __post_init__(self) -> None:
        for name in self.__dataclass_fields__:
            if not getattr(self, name) > 0:
                raise ValueError(f"WorkerLimits.{name} must be positive, got {getattr(self, name)!r}")


def worker_site_dirs() -> list[str]:
    """The folders holding the worker's third-party packages (usually one site-packages)."""
    folders: list[str] = []
    for name in _THIRD_PARTY:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            continue
        origin = Path(spec.origin).resolve()
        folder = origin.parent.parent if spec.submodule_search_locations is not None else origin.parent
        if str(folder) not in folders:
            folders.append(str(folder))
    return folders


def stage_worker_code(parent: str | None = None) -> Path:
    """A fresh folder holding a copy of ``shared`` with only what the worker imports.

    The copy is readable by every user (as root the sandbox runs the worker as another
    uid); the caller removes it when done.
    """
    import shared

    source = Path(shared.__file__).resolve().parent
    root = Path(tempfile.mkdtemp(prefix="tooldeck-module-worker-", dir=parent))
    try:
        target = root / "shared"
        target.mkdir()
        for name in _STAGED:
            if (source / name).is_dir():
                shutil.copytree(source / name, target / name, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                shutil.copy2(source / name, target / name)
        for path in [root, *root.rglob("*")]:
            os.chmod(path, 0o755 if path.is_dir() else 0o644)
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise
    return root
