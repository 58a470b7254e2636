"""Modules: data-source adapters the model builds, stored, signed and run at run time.

This package is the side the context service needs (it imports no ``tools``): the
manifest, the store's layout and records, the path rules, the keys, the credential vault,
signatures, and :class:`ModuleAdapters`, which serves the enabled modules as adapters,
each running in its own sandboxed worker process (:class:`ModuleWorkers`; the worker's
own program is ``shared.module_worker``). Building, validating and installing modules, and
the sandboxed launcher and address-policy egress the workers need, are
``tools.builtin.modules``.
"""

from shared.modules.confined_http import ConfinedSession, OutsideBaseUrlError, within_base_url
from shared.modules.egress import EgressError, EgressRequest, EgressResponse, ModuleEgress, NoEgress
from shared.modules.files import UnsafePathError, check_relative_path, confined, files_hash, read_tree
from shared.modules.forwarding import CallSecrets, RequestForwarder
from shared.modules.keys import KeyFileError, ModuleKeys, load_or_create_key
from shared.modules.layout import IndexEntry, ModuleIndex, ModuleLayout, StoreError, VersionRecord
from shared.modules.loader import ModuleAdapters, ModuleAwareRegistry, ModuleLoadStatus, default_key_dir
from shared.modules.manifest import (
    CREDENTIALS_BY_AUTH,
    MODULE_ID_RULE,
    AuthType,
    ManifestError,
    ModuleManifest,
    module_id_for,
)
from shared.modules.runtime import BrokenModuleAdapter, ModuleAdapter
from shared.modules.signing import Signer
from shared.modules.vault import CredentialError, CredentialVault
from shared.modules.worker import ModuleLoadError, ModuleWorker, WorkerCallError, WorkerSpec
from shared.modules.worker_launch import (
    WorkerLauncher,
    WorkerLimits,
    WorkerProcess,
    WorkerStartError,
    stage_worker_code,
    worker_site_dirs,
)
from shared.modules.worker_pool import ModuleWorkers

__all__ = [
    "CREDENTIALS_BY_AUTH",
    "MODULE_ID_RULE",
    "AuthType",
    "BrokenModuleAdapter",
    "CallSecrets",
    "ConfinedSession",
    "CredentialError",
    "CredentialVault",
    "EgressError",
    "EgressRequest",
    "EgressResponse",
    "IndexEntry",
    "KeyFileError",
    "ManifestError",
    "ModuleAdapter",
    "ModuleAdapters",
    "ModuleAwareRegistry",
    "ModuleEgress",
    "ModuleIndex",
    "ModuleKeys",
    "ModuleLayout",
    "ModuleLoadError",
    "ModuleLoadStatus",
    "ModuleManifest",
    "ModuleWorker",
    "ModuleWorkers",
    "NoEgress",
    "OutsideBaseUrlError",
    "RequestForwarder",
    "Signer",
    "StoreError",
    "UnsafePathError",
    "VersionRecord",
    "WorkerCallError",
    "WorkerLauncher",
    "WorkerLimits",
    "WorkerProcess",
    "WorkerSpec",
    "WorkerStartError",
    "check_relative_path",
    "confined",
    "default_key_dir",
    "files_hash",
    "load_or_create_key",
    "module_id_for",
    "read_tree",
    "stage_worker_code",
    "within_base_url",
    "worker_site_dirs",
]
