"""``ModuleWorkers``: starts module workers, with the launcher, egress and limits they share.

The composition root builds one (in the tool layer: ``tools.builtin.modules.sandboxed_workers``)
and hands it to :class:`~shared.modules.loader.ModuleAdapters`, which starts a worker per
enabled module and stops it when the module is disabled or changes version.
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Sequence
from pathlib import Path

from shared.modules.egress import ModuleEgress
from shared.modules.worker import ModuleWorker, WorkerSpec
from shared.modules.worker_launch import WorkerLauncher, WorkerLimits, stage_worker_code, worker_site_dirs

__all__ = ["ModuleWorkers"]


class ModuleWorkers:
    """Starts module workers: the launcher, the egress and the limits they share.

    Args:
        launcher: Starts each worker somewhere isolated (the code sandbox).
        egress: Sends the workers' HTTP requests (the address policy).
        limits: Time limits and the restart budget.
        python_path: The worker's import path (default: a private copy of the parts of
            ``shared`` it needs, then the site folders of pydantic and requests).
    """

    def __init__(
        self,
        *,
        launcher: WorkerLauncher,
        egress: ModuleEgress,
        limits: WorkerLimits | None = None,
        python_path: Sequence[str] | None = None,
    ) -> None:
        self.launcher = launcher
        self.egress = egress
        self.limits = limits or WorkerLimits()
        self._python_path = list(python_path) if python_path is not None else None
        self._staged: Path | None = None
        self._lock = threading.Lock()
        self._workers: list[ModuleWorker] = []

    def __repr__(self) -> str:
        return f"ModuleWorkers(launcher={self.launcher!r}, egress={self.egress!r})"

    def python_path(self) -> list[str]:
        """The worker's import path (the private copy of ``shared`` is made on first use)."""
        with self._lock:
            if self._python_path is None:
                self._staged = stage_worker_code()
                self._python_path = [str(self._staged), *worker_site_dirs()]
            return list(self._python_path)

    def start(self, spec: WorkerSpec) -> ModuleWorker:
        """A running worker for ``spec``, its module loaded.

        Raises:
            WorkerStartError: No worker could be started here.
            ModuleLoadError: The module's code did not load.
        """
        worker = ModuleWorker(
            spec, launcher=self.launcher, egress=self.egress, limits=self.limits, python_path=self.python_path
        )
        worker.start()
        with self._lock:
            self._workers = [w for w in self._workers if not w.stopped]
            self._workers.append(worker)
        return worker

    def close(self) -> None:
        """Stop every worker started here, remove the private copy, close the launcher."""
        with self._lock:
            workers, self._workers = self._workers, []
            staged, self._staged = self._staged, None
        for worker in workers:
            worker.stop()
        if staged is not None:
            shutil.rmtree(staged, ignore_errors=True)
            self._python_path = None
        close = getattr(self.launcher, "close", None)
        if callable(close):
            close()
