"""``ModuleStore``: the writing side of the module store (layout in ``shared.modules.layout``).

It owns the build areas (``work/<module_id>/``), the validation reports, and
``index.json``. Every change takes the store's lock (a file lock, so two processes
writing the same store take turns) and every file is written atomically. Errors that the
model can fix are ``InvalidArgumentsError``/``PermissionDeniedError`` with messages written
for it.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import threading
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from shared.modules import (
    IndexEntry,
    ManifestError,
    ModuleIndex,
    ModuleLayout,
    ModuleManifest,
    StoreError,
    UnsafePathError,
    confined,
    read_tree,
)
from shared.modules.layout import read_json
from tools._files import atomic_write_text
from tools.errors import InvalidArgumentsError, PermissionDeniedError, ToolError

__all__ = ["ModuleStore", "utc_iso"]

LOCK_TIMEOUT_SECONDS = 30.0


def utc_iso() -> str:
    """Now, as ISO 8601 UTC to the second (the default clock of the module managers)."""
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()


def unsafe_path(exc: UnsafePathError) -> PermissionDeniedError:
    """The model-facing error for a path that breaks the rules."""
    return PermissionDeniedError(f"Refused: {exc}")


class ModuleStore:
    """Build areas, reports and the index of the modules under one folder.

    Args:
        layout: The store's layout (or its root folder).
        clock: Returns the current time as ISO 8601 text.
        lock_timeout: Seconds to wait for another writer before giving up.
    """

    def __init__(
        self,
        layout: ModuleLayout | Path,
        *,
        clock: Callable[[], str] = utc_iso,
        lock_timeout: float = LOCK_TIMEOUT_SECONDS,
    ) -> None:
        self.layout = layout if isinstance(layout, ModuleLayout) else ModuleLayout(Path(layout))
        self.clock = clock
        self._thread_lock = threading.RLock()
        self._file_lock = FileLock(str(self.layout.lock_path), timeout=lock_timeout)

    def __repr__(self) -> str:
        return f"ModuleStore({str(self.layout.root)!r})"

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the store's lock (re-entrant in this process, exclusive across processes).

        Raises:
            ToolError: Another process held it for longer than the lock timeout.
        """
        with self._thread_lock:
            self.layout.root.mkdir(parents=True, exist_ok=True)
            try:
                with self._file_lock:
                    yield
            except Timeout:
                raise ToolError(
                    "The module store is busy (another change is in progress); try again in a moment.",
                    retryable=True,
                ) from None

    # -- ids ----------------------------------------------------------------------------

    def check_id(self, module_id: str) -> str:
        """``module_id`` if well formed.

        Raises:
            InvalidArgumentsError: It is not a module id.
        """
        if not self.layout.is_module_id(module_id):
            raise InvalidArgumentsError(
                f"{module_id[:60]!r} is not a module id (lower-case letters, digits and '_', 2-40 characters). "
                "Call module_admin(action='list') to see the modules."
            )
        return module_id

    def require(self, module_id: str) -> str:
        """``module_id`` if a module by that id exists (built or installed).

        Raises:
            InvalidArgumentsError: No such module; the message lists the known ones.
        """
        self.check_id(module_id)
        if self.layout.work_dir(module_id).is_dir() or module_id in self.index().modules:
            return module_id
        known = ", ".join(self.ids()) or "none yet"
        raise InvalidArgumentsError(
            f"There is no module {module_id!r}. Known modules: {known}. Build one with "
            "module_pipeline(action='build', name=..., category=..., api_url=...)."
        )

    def ids(self) -> list[str]:
        """Every module id with a build area or an installation, sorted."""
        work = self.layout.root / "work"
        built = [p.name for p in work.iterdir() if self.layout.is_module_id(p.name)] if work.is_dir() else []
        return sorted({*built, *self.index().modules})

    # -- build areas --------------------------------------------------------------------

    def has_work(self, module_id: str) -> bool:
        """Whether the module has a build area."""
        return self.layout.work_dir(module_id).is_dir()

    def create(self, manifest: ModuleManifest, files: Mapping[str, str]) -> None:
        """Create the build area of a new module with ``files`` (``manifest.json`` included).

        Raises:
            InvalidArgumentsError: A module with this id exists already.
        """
        with self.locked():
            target = self.layout.work_dir(manifest.id)
            if target.exists() or manifest.id in self.index().modules:
                raise InvalidArgumentsError(
                    f"A module {manifest.id!r} exists already. Pick another name, or change it with "
                    f"module_pipeline(action='write_code', module_id='{manifest.id}', adapter_code=...)."
                )
            for path, text in files.items():
                self.write_file(manifest.id, path, text)

    def files(self, module_id: str) -> dict[str, bytes]:
        """The files of the module's build area.

        Raises:
            InvalidArgumentsError: The module has no build area.
            PermissionDeniedError: The build area holds a link or breaks the file rules.
        """
        folder = self.layout.work_dir(self.check_id(module_id))
        if not folder.is_dir():
            raise InvalidArgumentsError(
                f"Module {module_id!r} has no build area (it was installed from elsewhere or removed). "
                f"Use module_admin(action='create_draft', module_id='{module_id}') to change an installed module."
            )
        try:
            return read_tree(folder)
        except UnsafePathError as exc:
            raise unsafe_path(exc) from None

    def manifest(self, module_id: str) -> ModuleManifest:
        """The manifest of the module's build area.

        Raises:
            InvalidArgumentsError: Missing or invalid (the message says what to fix).
        """
        data = self.files(module_id).get("manifest.json")
        if data is None:
            raise InvalidArgumentsError(f"Module {module_id!r} has no manifest.json; build it again.")
        try:
            return ModuleManifest.from_json(data)
        except ManifestError as exc:
            raise InvalidArgumentsError(f"Module {module_id!r}: {exc}") from None

    def write_file(self, module_id: str, path: str, text: str) -> Path:
        """Write one file of the build area (atomically); returns its path.

        Raises:
            PermissionDeniedError: The path leaves the module's folder or breaks the rules.
        """
        folder = self.layout.work_dir(self.check_id(module_id))
        try:
            target = confined(folder, path)
        except UnsafePathError as exc:
            raise unsafe_path(exc) from None
        with self.locked():
            atomic_write_text(target, text)
        return target

    def remove_work(self, module_id: str) -> bool:
        """Delete the build area and its report; returns whether there was one."""
        with self.locked():
            folder = self.layout.work_dir(self.check_id(module_id))
            existed = folder.is_dir()
            shutil.rmtree(folder, ignore_errors=True)
            self.layout.report_path(module_id).unlink(missing_ok=True)
            return existed

    # -- reports ------------------------------------------------------------------------

    def save_report(self, module_id: str, report: Mapping[str, Any]) -> None:
        """Keep the last validation report of the build area."""
        with self.locked():
            atomic_write_text(self.layout.report_path(self.check_id(module_id)), json.dumps(report, indent=1))

    def load_report(self, module_id: str) -> dict[str, Any] | None:
        """The last validation report of the build area, or None."""
        try:
            loaded = read_json(self.layout.report_path(self.check_id(module_id)), "the report", missing=None)
        except StoreError:
            return None
        return loaded if isinstance(loaded, dict) else None

    # -- the index ----------------------------------------------------------------------

    def index(self) -> ModuleIndex:
        """``index.json``.

        Raises:
            ToolError: It is damaged (the message says how to recover).
        """
        try:
            return self.layout.read_index()
        except StoreError as exc:
            raise ToolError(f"{exc}; restore it from a backup or remove it to start over.") from None

    def entry(self, module_id: str) -> IndexEntry | None:
        """The module's index entry, or None when it is not installed."""
        return self.index().modules.get(module_id)

    def update_index(self, change: Callable[[dict[str, IndexEntry]], object]) -> ModuleIndex:
        """Apply ``change`` to a copy of the installed modules and replace ``index.json`` with
        the result in one atomic write (the generation goes up by one)."""
        with self.locked():
            current = self.index()
            modules = dict(current.modules)
            change(modules)
            updated = ModuleIndex(generation=current.generation + 1, modules=modules)
            atomic_write_text(self.layout.index_path, updated.model_dump_json(indent=1))
            return updated
