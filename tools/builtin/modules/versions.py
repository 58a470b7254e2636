"""``VersionManager``: installed versions of a module, immutable and signed.

A version is a snapshot of a module's files in ``versions/<module_id>/<vN>/files`` with a
``version.json`` whose signature (the store's signing key) covers the files' hash. A new
version is written in a temporary folder and renamed into place in one step; it becomes
active only when ``index.json`` is replaced, also in one step. A crash (or a kill) at any
moment therefore leaves either the previous version active or the new one, never a mix;
a half-written snapshot is an ignored temporary folder, removed by the next write.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from shared.modules import (
    IndexEntry,
    ModuleLayout,
    Signer,
    StoreError,
    UnsafePathError,
    VersionRecord,
    confined,
    files_hash,
    read_tree,
)
from tools._files import atomic_write_text
from tools.builtin.modules.store import ModuleStore, unsafe_path
from tools.errors import InvalidArgumentsError, ToolError

__all__ = ["VersionManager"]

_TMP_PREFIX = ".tmp-"


class VersionManager:
    """Creates, lists, verifies and activates the installed versions of modules.

    Args:
        store: The module store (its lock and index).
        signer: Signs version records with the store's signing key.
    """

    def __init__(self, *, store: ModuleStore, signer: Signer) -> None:
        self._store = store
        self._signer = signer

    @property
    def layout(self) -> ModuleLayout:
        """The store's layout."""
        return self._store.layout

    def create(self, module_id: str, files: Mapping[str, bytes], *, category: str, source: str) -> VersionRecord:
        """Snapshot ``files`` as the module's next version and make it the active one.

        A module installed for the first time starts disabled; a new version of an enabled
        module stays enabled.
        """
        with self._store.locked():
            folder = self.layout.versions_dir(module_id)
            folder.mkdir(parents=True, exist_ok=True)
            self._sweep(folder)
            existing = self.layout.version_ids(module_id)
            version_id = f"v{int(existing[-1][1:]) + 1 if existing else 1}"
            record = self._sign(
                VersionRecord(
                    module_id=module_id,
                    version_id=version_id,
                    files_hash=files_hash(files),
                    created_at=self._store.clock(),
                    source=source,
                )
            )
            staging = folder / f"{_TMP_PREFIX}{version_id}-{os.urandom(4).hex()}"
            try:
                for path, data in files.items():
                    atomic_write_text(confined(staging / "files", path), data.decode("utf-8"))
                atomic_write_text(staging / "version.json", record.model_dump_json(indent=1))
                os.rename(staging, folder / version_id)  # the snapshot appears whole
                _fsync_dir(folder)
            except UnsafePathError as exc:
                raise unsafe_path(exc) from None
            finally:
                if staging.exists():
                    shutil.rmtree(staging, ignore_errors=True)
            self._activate(module_id, version_id, category)
            return record

    def _sign(self, record: VersionRecord) -> VersionRecord:
        signature = self._signer.sign("version", record.signed_fields())
        return record.model_copy(update={"signature": signature})

    def _sweep(self, folder: Path) -> None:
        """Remove snapshots a crash left half-written."""
        for child in folder.iterdir():
            if child.name.startswith(_TMP_PREFIX):
                shutil.rmtree(child, ignore_errors=True)

    def _activate(self, module_id: str, version_id: str, category: str) -> None:
        clock = self._store.clock

        def change(modules: dict[str, IndexEntry]) -> None:
            old = modules.get(module_id)
            modules[module_id] = IndexEntry(
                active_version=version_id,
                category=category,
                enabled=old.enabled if old is not None else False,
                installed_at=old.installed_at if old is not None else clock(),
            )

        self._store.update_index(change)

    def record(self, module_id: str, version_id: str) -> VersionRecord:
        """The verified record of one version.

        Raises:
            InvalidArgumentsError: No such version (the message lists the versions).
            ToolError: The record's signature or the files' hash does not match.
        """
        if not self.layout.is_version_id(version_id):
            raise InvalidArgumentsError(
                f"{version_id[:40]!r} is not a version id; versions are named v1, v2, ... Call "
                f"module_admin(action='list_versions', module_id='{module_id}') to see them."
            )
        try:
            record = self.layout.read_version(module_id, version_id)
        except StoreError:
            known = ", ".join(self.layout.version_ids(module_id)) or "none"
            raise InvalidArgumentsError(
                f"Module {module_id!r} has no version {version_id!r}; its versions: {known}."
            ) from None
        if not self._signer.verify("version", record.signed_fields(), record.signature):
            raise ToolError(
                f"Version {version_id} of {module_id} is not signed by this installation (changed by hand?); "
                "it cannot be used."
            )
        return record

    def files(self, module_id: str, version_id: str) -> dict[str, bytes]:
        """The files of one version, verified against its signed record.

        Raises:
            InvalidArgumentsError: No such version.
            ToolError: The files changed since the version was made.
        """
        record = self.record(module_id, version_id)
        try:
            files = read_tree(self.layout.version_files(module_id, version_id))
        except UnsafePathError as exc:
            raise ToolError(f"Version {version_id} of {module_id} is damaged: {exc}") from None
        if files_hash(files) != record.files_hash:
            raise ToolError(f"The files of version {version_id} of {module_id} changed after it was made.")
        return files

    def active(self, module_id: str) -> str | None:
        """The active version of an installed module, or None."""
        entry = self._store.entry(module_id)
        return entry.active_version if entry is not None else None

    def list_versions(self, module_id: str) -> list[dict[str, Any]]:
        """Every version, oldest first, with which one is active."""
        active = self.active(module_id)
        out = []
        for version_id in self.layout.version_ids(module_id):
            try:
                record = self.layout.read_version(module_id, version_id)
            except StoreError:
                continue
            out.append(
                {
                    "version_id": version_id,
                    "created_at": record.created_at,
                    "source": record.source,
                    "files_hash": record.files_hash,
                    "active": version_id == active,
                }
            )
        return out

    def rollback(self, module_id: str, version_id: str) -> str:
        """Make an existing, verified version active again; returns the previous one.

        Raises:
            InvalidArgumentsError: The module is not installed or has no such version.
            ToolError: The version's record or files do not verify.
        """
        with self._store.locked():
            entry = self._store.entry(module_id)
            if entry is None:
                raise InvalidArgumentsError(f"Module {module_id!r} is not installed; there is nothing to roll back.")
            self.files(module_id, version_id)  # verifies the record and the files
            self._activate(module_id, version_id, entry.category)
            return entry.active_version

    def remove_all(self, module_id: str) -> int:
        """Delete every version of a module (after it left the index); returns how many."""
        with self._store.locked():
            count = len(self.layout.version_ids(module_id))
            with contextlib.suppress(FileNotFoundError):
                shutil.rmtree(self.layout.versions_dir(module_id))
            return count


def _fsync_dir(folder: Path) -> None:
    """Make a rename in ``folder`` durable before the index points at it."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
