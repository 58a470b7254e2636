"""``ModuleAdapters``: the enabled modules of a store, each running in its own worker.

The context service (and the orchestrator's context bridge, for ``normalize_for_tools``)
asks for the adapters on every request; the store's ``index.json`` is checked each time
(one ``stat``) and re-read only when it changed, so enabling, disabling, promoting or
rolling back a module takes effect without a restart, across processes.

Loading one module version checks, in order: its version record is signed with this
installation's signing key (only ``install``/``promote`` write such records, after a
passing validation), its files still hash to the recorded hash, and its manifest is valid
and names it. Then its ``adapter.py`` is handed to a new worker process
(:class:`~shared.modules.worker_pool.ModuleWorkers`: the code sandbox, no network, no host
secrets), which imports it and checks that it defines the manifest's adapter class, a
``BaseAdapter``. Module code never runs in this process. A module that fails any step, or
a store read without workers, is served as a stand-in adapter whose every fetch reports
the reason, so its category says what is wrong and nothing crashes.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shared.adapters.base import BaseAdapter
from shared.adapters.registry import AdapterRegistry
from shared.modules.files import UnsafePathError, files_hash, read_tree
from shared.modules.keys import ModuleKeys
from shared.modules.layout import ModuleIndex, ModuleLayout, StoreError
from shared.modules.manifest import ManifestError, ModuleManifest
from shared.modules.runtime import broken_module_class, module_adapter_class
from shared.modules.signing import Signer
from shared.modules.vault import CredentialError, CredentialVault
from shared.modules.worker import ModuleLoadError, ModuleWorker, WorkerSpec
from shared.modules.worker_launch import WorkerStartError
from shared.modules.worker_pool import ModuleWorkers

__all__ = ["ModuleAdapters", "ModuleAwareRegistry", "ModuleLoadStatus", "default_key_dir"]

logger = logging.getLogger(__name__)

AdapterClass = type[BaseAdapter[Any]]
#: Why modules are not run when the store is read without workers.
NO_WORKERS = (
    "modules run only in a sandboxed worker process, and this process was given none "
    "(ModuleAdapters(workers=...); see docs/modules.md, 'The boundary')"
)


def default_key_dir(store_root: Path) -> Path:
    """Where the module keys live by default: ``module-keys`` beside the store."""
    return Path(store_root).parent / "module-keys"


@dataclass(frozen=True)
class ModuleLoadStatus:
    """How loading one enabled module went.

    Attributes:
        module_id: The module.
        version_id: The version that was loaded (or tried).
        category: Its context category.
        loaded: True when its adapter is in use.
        reason: Why it was not loaded (None when it was).
    """

    module_id: str
    version_id: str
    category: str
    loaded: bool
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-compatible dict."""
        return {
            "module_id": self.module_id,
            "version_id": self.version_id,
            "category": self.category,
            "loaded": self.loaded,
            "reason": self.reason,
        }


@dataclass
class _Entry:
    status: ModuleLoadStatus
    cls: AdapterClass
    worker: ModuleWorker | None


class _LoadProblem(Exception):
    """A module version that must not run; the message is safe to show."""


class ModuleAdapters:
    """The enabled modules of one store as adapter classes, kept in step with the store.

    Args:
        layout: The module store.
        signer: Verifies version records (the store's signing key).
        vault: Decrypts credentials when a module runs (None: modules that need
            credentials report that they cannot read them).
        workers: Starts each module's worker process (None: no module runs; each is
            served as a stand-in that says so). Closing this object stops its workers;
            closing ``workers`` is the caller's business.
    """

    def __init__(
        self,
        layout: ModuleLayout,
        *,
        signer: Signer,
        vault: CredentialVault | None = None,
        workers: ModuleWorkers | None = None,
    ) -> None:
        self._layout = layout
        self._signer = signer
        self._vault = vault
        self._workers = workers
        self._lock = threading.RLock()
        self._stamp: tuple[int, int, int] | None = None
        self._checked = False
        self._entries: dict[str, _Entry] = {}

    @classmethod
    def from_store(
        cls,
        root: Path,
        *,
        key_dir: Path | None = None,
        credentials_key: str | None = None,
        signing_key: str | None = None,
        workers: ModuleWorkers | None = None,
    ) -> ModuleAdapters:
        """The enabled modules of the store in ``root``, with its keys (see :class:`ModuleKeys`),
        run by ``workers``.

        Raises:
            KeyFileError: A key is unusable.
        """
        keys = ModuleKeys.load(
            key_dir or default_key_dir(root), credentials_key=credentials_key, signing_key=signing_key
        )
        try:
            vault: CredentialVault | None = CredentialVault(keys.credentials)
        except ImportError:
            logger.warning("modules that need credentials cannot run: install the 'modules' extra")
            vault = None
        return cls(ModuleLayout(root), signer=Signer(keys.signing), vault=vault, workers=workers)

    def __repr__(self) -> str:
        return f"ModuleAdapters({self._layout!r})"

    # -- queries ------------------------------------------------------------------------

    def adapters(self) -> list[AdapterClass]:
        """The adapter class of every enabled module (stand-ins for those that failed)."""
        self.refresh()
        with self._lock:
            return [entry.cls for entry in self._entries.values()]

    def get(self, category: str, platform: str) -> AdapterClass | None:
        """The enabled module whose id is ``platform`` in ``category``, or None."""
        self.refresh()
        with self._lock:
            entry = self._entries.get(platform)
            return entry.cls if entry is not None and entry.status.category == category else None

    def statuses(self) -> list[ModuleLoadStatus]:
        """How each enabled module loaded."""
        self.refresh()
        with self._lock:
            return [entry.status for entry in self._entries.values()]

    def status(self, module_id: str) -> ModuleLoadStatus | None:
        """How ``module_id`` loaded, or None when it is not enabled."""
        self.refresh()
        with self._lock:
            entry = self._entries.get(module_id)
            return entry.status if entry is not None else None

    def registry_over(self, base: AdapterRegistry) -> AdapterRegistry:
        """A registry showing ``base``'s adapters and, live, the enabled modules."""
        return ModuleAwareRegistry(base, self)

    def worker(self, module_id: str) -> ModuleWorker | None:
        """The worker running ``module_id``, or None when it is not loaded."""
        self.refresh()
        with self._lock:
            entry = self._entries.get(module_id)
            return entry.worker if entry is not None else None

    def close(self) -> None:
        """Unload every module (their workers are stopped)."""
        with self._lock:
            for module_id in list(self._entries):
                self._unload(module_id)
            self._checked = False

    # -- loading ------------------------------------------------------------------------

    def refresh(self) -> None:
        """Load and unload modules to match ``index.json`` (a no-op when it is unchanged)."""
        stamp = self._index_stamp()
        with self._lock:
            if self._checked and stamp == self._stamp:
                return
            try:
                index = self._layout.read_index()
            except StoreError as exc:
                logger.error("module store %s: %s; no module is loaded", self._layout.root, exc)
                index = ModuleIndex()
            wanted = {mid: entry for mid, entry in index.modules.items() if entry.enabled}
            for module_id in list(self._entries):
                entry = self._entries[module_id]
                target = wanted.get(module_id)
                if target is None or target.active_version != entry.status.version_id:
                    self._unload(module_id)
            for module_id, target in wanted.items():
                if module_id not in self._entries:
                    self._entries[module_id] = self._load(module_id, target.active_version, target.category)
            self._stamp, self._checked = stamp, True

    def _index_stamp(self) -> tuple[int, int, int] | None:
        try:
            info = os.stat(self._layout.index_path)
        except OSError:
            return None
        return (info.st_ino, info.st_mtime_ns, info.st_size)

    def _unload(self, module_id: str) -> None:
        entry = self._entries.pop(module_id)
        if entry.worker is not None:
            entry.worker.stop()
        logger.info("module %s (%s) unloaded", module_id, entry.status.version_id)

    def _load(self, module_id: str, version_id: str, category: str) -> _Entry:
        try:
            manifest, source = self._verified(module_id, version_id)
            if self._workers is None:
                raise _LoadProblem(NO_WORKERS)
            spec = WorkerSpec(module_id, version_id, source, manifest.adapter_class, manifest.api_url)
            worker = self._workers.start(spec)
        except (_LoadProblem, StoreError, UnsafePathError, ManifestError, ModuleLoadError) as exc:
            reason = str(exc)
        except WorkerStartError as exc:
            reason = f"its worker could not start: {exc}"
        else:
            cls = module_adapter_class(manifest, version_id, worker, lambda: self._credentials(module_id))
            logger.info("module %s (%s) loaded for %s", module_id, version_id, manifest.category)
            return _Entry(ModuleLoadStatus(module_id, version_id, manifest.category, True), cls, worker)
        logger.warning("module %s (%s) not loaded: %s", module_id, version_id, reason)
        status = ModuleLoadStatus(module_id, version_id, category, False, reason)
        return _Entry(status, broken_module_class(module_id, category, reason), None)

    def _verified(self, module_id: str, version_id: str) -> tuple[ModuleManifest, str]:
        record = self._layout.read_version(module_id, version_id)
        if not self._signer.verify("version", record.signed_fields(), record.signature):
            raise _LoadProblem(
                f"version {version_id} is not signed by this installation (its record was changed by hand, "
                "or the signing key changed); install it again"
            )
        files = read_tree(self._layout.version_files(module_id, version_id))
        if files_hash(files) != record.files_hash:
            raise _LoadProblem(f"the files of version {version_id} changed after it was installed; install it again")
        if "manifest.json" not in files or "adapter.py" not in files:
            raise _LoadProblem(f"version {version_id} has no manifest.json or adapter.py")
        manifest = ModuleManifest.from_json(files["manifest.json"])
        if manifest.id != module_id:
            raise _LoadProblem(f"the manifest of version {version_id} names another module ({manifest.id})")
        try:
            source = files["adapter.py"].decode("utf-8")
        except UnicodeDecodeError:
            raise _LoadProblem("adapter.py is not UTF-8 text") from None
        return manifest, source

    def _credentials(self, module_id: str) -> dict[str, str]:
        path = self._layout.credential_path(module_id)
        try:
            token = path.read_text(encoding="ascii").strip()
        except FileNotFoundError:
            return {}
        except (OSError, UnicodeError):
            raise CredentialError("the stored credentials cannot be read; store them again") from None
        if self._vault is None:
            raise CredentialError(
                "the stored credentials cannot be decrypted here: install the 'modules' extra and give "
                "the context service the module keys"
            )
        return self._vault.open(token)


class ModuleAwareRegistry(AdapterRegistry):
    """An :class:`AdapterRegistry` that shows a base registry plus the enabled modules, live.

    Args:
        base: The built-in (or configured) adapters; they win on a name clash.
        modules: The enabled modules.
    """

    def __init__(self, base: AdapterRegistry, modules: ModuleAdapters) -> None:
        super().__init__()
        self._base = base
        self._modules = modules

    def add(self, cls: AdapterClass, *, replace: bool = False) -> AdapterClass:
        """Add to the base registry."""
        return self._base.add(cls, replace=replace)

    def get(self, category: str, platform: str) -> AdapterClass | None:
        """The base registry's class, else the enabled module's."""
        found = self._base.get(category, platform)
        return found if found is not None else self._modules.get(category, platform)

    def for_category(self, category: str) -> list[AdapterClass]:
        """The base registry's classes of ``category``, then the modules'."""
        return [*self._base.for_category(category), *(c for c in self._modules.adapters() if c.category == category)]

    def categories(self) -> list[str]:
        """Categories with at least one adapter or enabled module."""
        return list(dict.fromkeys([*self._base.categories(), *(c.category for c in self._modules.adapters())]))

    def __contains__(self, key: object) -> bool:
        if key in self._base:
            return True
        if isinstance(key, tuple) and len(key) == 2 and all(isinstance(k, str) for k in key):
            return self._modules.get(key[0], key[1]) is not None
        return False

    def __len__(self) -> int:
        return len(self._base) + len(self._modules.adapters())

    def __iter__(self) -> Iterator[AdapterClass]:
        return iter([*self._base, *self._modules.adapters()])
