"""Modules: data-source adapters the model builds, stored, signed and loaded at run time.

This package is the side the context service needs (it imports no ``tools``): the
manifest, the store's layout and records, the path rules, the keys, the credential vault,
signatures, and :class:`ModuleAdapters`, which loads the enabled modules as adapter
classes. Building, validating and installing modules is ``tools.builtin.modules``.
"""

from shared.modules.confined_http import ConfinedSession, OutsideBaseUrlError, within_base_url
from shared.modules.files import UnsafePathError, check_relative_path, confined, files_hash, read_tree
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

__all__ = [
    "CREDENTIALS_BY_AUTH",
    "MODULE_ID_RULE",
    "AuthType",
    "BrokenModuleAdapter",
    "ConfinedSession",
    "CredentialError",
    "CredentialVault",
    "IndexEntry",
    "KeyFileError",
    "ManifestError",
    "ModuleAdapter",
    "ModuleAdapters",
    "ModuleAwareRegistry",
    "ModuleIndex",
    "ModuleKeys",
    "ModuleLayout",
    "ModuleLoadStatus",
    "ModuleManifest",
    "OutsideBaseUrlError",
    "Signer",
    "StoreError",
    "UnsafePathError",
    "VersionRecord",
    "check_relative_path",
    "confined",
    "default_key_dir",
    "files_hash",
    "load_or_create_key",
    "module_id_for",
    "read_tree",
    "within_base_url",
]
