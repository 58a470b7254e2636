"""Module tools: the model builds, validates and installs new data sources (``modules``).

A module is a data-source adapter (``shared.adapters``) with a manifest and tests. The
model creates one with :class:`ModulePipelineTool` (``module_pipeline``: ``build``,
``write_code``, ``repair``, ``validate``, ``install``, ``uninstall``) and manages it with
:class:`ModuleAdminTool` (``module_admin``: ``list``, ``enable``, ``disable``,
``store_credentials``, drafts and versions). The context service serves enabled modules
(``shared.modules.ModuleAdapters``) and ``user_context`` shows their data; each module runs
in its own sandboxed worker process (:func:`sandboxed_workers`), its HTTP sent by the host
through the web tool's address policy (:class:`PolicyEgress`). See ``docs/modules.md``.
"""

from tools.builtin.modules.admin import ModuleAdminTool, StoreCredentialsRequest
from tools.builtin.modules.aliases import (
    MODULE_ALIASES,
    ModuleAlias,
    ModuleAliasTool,
    module_alias_tools,
    register_module_aliases,
)
from tools.builtin.modules.credentials import CredentialStore
from tools.builtin.modules.drafts import DraftInfo, DraftManager
from tools.builtin.modules.egress import PolicyEgress
from tools.builtin.modules.pipeline import (
    BuildRequest,
    Category,
    InstallRequest,
    ModulePipelineTool,
    WriteCodeRequest,
)
from tools.builtin.modules.repair import ChatGateway, ModuleRepairer
from tools.builtin.modules.report import Attestation, Finding, ValidationReport
from tools.builtin.modules.sandbox_runner import (
    SANDBOX_NEEDS_WORKSPACE,
    ModuleTestRunner,
    SandboxTestRunner,
    TestRun,
    default_python_path,
    workspace_supported,
)
from tools.builtin.modules.scan import ALLOWED_IMPORTS, StaticScanner
from tools.builtin.modules.store import ModuleStore
from tools.builtin.modules.toolkit import ModuleToolkit
from tools.builtin.modules.validation import ModuleValidator
from tools.builtin.modules.versions import VersionManager
from tools.builtin.modules.workers import WORKER_SANDBOX_LIMITS, SandboxWorkerLauncher, sandboxed_workers

__all__ = [
    "ALLOWED_IMPORTS",
    "MODULE_ALIASES",
    "SANDBOX_NEEDS_WORKSPACE",
    "WORKER_SANDBOX_LIMITS",
    "Attestation",
    "BuildRequest",
    "Category",
    "ChatGateway",
    "CredentialStore",
    "DraftInfo",
    "DraftManager",
    "Finding",
    "InstallRequest",
    "ModuleAdminTool",
    "ModuleAlias",
    "ModuleAliasTool",
    "ModulePipelineTool",
    "ModuleRepairer",
    "ModuleStore",
    "ModuleTestRunner",
    "ModuleToolkit",
    "ModuleValidator",
    "PolicyEgress",
    "SandboxTestRunner",
    "SandboxWorkerLauncher",
    "StaticScanner",
    "StoreCredentialsRequest",
    "TestRun",
    "ValidationReport",
    "VersionManager",
    "WriteCodeRequest",
    "default_python_path",
    "module_alias_tools",
    "register_module_aliases",
    "sandboxed_workers",
    "workspace_supported",
]
