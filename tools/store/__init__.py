"""Tools as data: registry files, a catalog, adoption and execution (DESIGN section 10).

::

    store = RegistryStore.from_env(os.environ)                 # user + project registry files
    catalog = ToolCatalog(".tooldeck/catalog.sqlite3", env=os.environ)
    catalog.add_source(MCPServerSource(name="time", command=["python", "-m", "mcp_server_time"]))
    catalog.sync()
    service = RegistryService(store, catalog=catalog, env=os.environ)
    service.adopt("time:get_current_time")
    ExecutionService(service).execute("get_current_time", params={"timezone": "UTC"})
    for tool in service.build_tools():                        # each with its ToolManual
        registry.register(tool)

A project's ``.tooldeck/registry.json`` is used only once the user trusts it (``tooldeck
trust``, :class:`TrustStore`); :meth:`RegistryStore.project_trust` says whether it is.

Names are imported on first use (PEP 562), so ``tooldeck list`` reads registry files
without importing the adapters, the catalog or the schema machinery.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from shared.lazy import lazy_exports

if TYPE_CHECKING:
    from tools.store.adopted_tool import AdoptedTool
    from tools.store.builder import ToolBuilder, manual_for
    from tools.store.catalog import SourceSync, SyncReport, ToolCatalog
    from tools.store.config import (
        REGISTRY_VERSION,
        BinaryConfig,
        ManualOverrides,
        Registry,
        ToolAuth,
        ToolConfig,
        ToolHints,
    )
    from tools.store.errors import (
        AlreadyAdoptedError,
        CatalogError,
        RegistryFileError,
        StoreError,
        ToolNotAdoptedError,
        UnknownCatalogEntryError,
    )
    from tools.store.execution import ExecutionService, ReadinessCheck
    from tools.store.registry_store import RegistryStore, user_config_dir
    from tools.store.service import CapabilityMatch, RegistryService, adopt_command
    from tools.store.sources import (
        BinaryDirSource,
        CatalogEntry,
        CatalogSource,
        ManualFileSource,
        MCPServerSource,
        derive_capabilities,
        normalize_capability,
    )
    from tools.store.trust import ProjectTrust, TrustFileError, TrustStore

_HOMES = {
    "AdoptedTool": "tools.store.adopted_tool",
    "ToolBuilder": "tools.store.builder",
    "manual_for": "tools.store.builder",
    "SourceSync": "tools.store.catalog",
    "SyncReport": "tools.store.catalog",
    "ToolCatalog": "tools.store.catalog",
    "REGISTRY_VERSION": "tools.store.config",
    "BinaryConfig": "tools.store.config",
    "ManualOverrides": "tools.store.config",
    "Registry": "tools.store.config",
    "ToolAuth": "tools.store.config",
    "ToolConfig": "tools.store.config",
    "ToolHints": "tools.store.config",
    "AlreadyAdoptedError": "tools.store.errors",
    "CatalogError": "tools.store.errors",
    "RegistryFileError": "tools.store.errors",
    "StoreError": "tools.store.errors",
    "ToolNotAdoptedError": "tools.store.errors",
    "UnknownCatalogEntryError": "tools.store.errors",
    "ExecutionService": "tools.store.execution",
    "ReadinessCheck": "tools.store.execution",
    "RegistryStore": "tools.store.registry_store",
    "user_config_dir": "tools.store.registry_store",
    "CapabilityMatch": "tools.store.service",
    "RegistryService": "tools.store.service",
    "adopt_command": "tools.store.service",
    "BinaryDirSource": "tools.store.sources",
    "CatalogEntry": "tools.store.sources",
    "CatalogSource": "tools.store.sources",
    "ManualFileSource": "tools.store.sources",
    "MCPServerSource": "tools.store.sources",
    "derive_capabilities": "tools.store.sources",
    "normalize_capability": "tools.store.sources",
    "ProjectTrust": "tools.store.trust",
    "TrustFileError": "tools.store.trust",
    "TrustStore": "tools.store.trust",
}

__all__ = [
    "REGISTRY_VERSION",
    "AdoptedTool",
    "AlreadyAdoptedError",
    "BinaryConfig",
    "BinaryDirSource",
    "CapabilityMatch",
    "CatalogEntry",
    "CatalogError",
    "CatalogSource",
    "ExecutionService",
    "MCPServerSource",
    "ManualFileSource",
    "ManualOverrides",
    "ProjectTrust",
    "ReadinessCheck",
    "Registry",
    "RegistryFileError",
    "RegistryService",
    "RegistryStore",
    "SourceSync",
    "StoreError",
    "SyncReport",
    "ToolAuth",
    "ToolBuilder",
    "ToolCatalog",
    "ToolConfig",
    "ToolHints",
    "ToolNotAdoptedError",
    "TrustFileError",
    "TrustStore",
    "UnknownCatalogEntryError",
    "adopt_command",
    "derive_capabilities",
    "manual_for",
    "normalize_capability",
    "user_config_dir",
]


__getattr__, __dir__ = lazy_exports(__name__, _HOMES, __all__)
