"""``ModuleToolkit``: every collaborator of the module tools, wired in one place.

Composition roots (``OrchestratorService``, scripts, tests) build the toolkit from a store
folder, the module keys, a sandbox (or another test runner), the module workers and an LLM
gateway, then register its two tools and, if they want, the 17 old names. The modules'
tests and workers run model-written code: both sandboxes hide the data directory (the
store and its keys)::

    keys = ModuleKeys.load(data_dir / "module-keys")
    workers = sandboxed_workers(hidden_dirs=[data_dir], egress=NoEgress())
    kit = ModuleToolkit.create(
        data_dir / "modules", keys=keys, sandbox=LocalSandbox(hidden_dirs=[data_dir]), workers=workers,
        llm_gateway=model,
    )
    kit.register(registry)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from shared.adapters.registry import AdapterRegistry
from shared.modules import CredentialVault, ModuleAdapters, ModuleKeys, ModuleLayout, ModuleWorkers, Signer
from tools.builtin.modules.admin import ModuleAdminTool
from tools.builtin.modules.aliases import register_module_aliases
from tools.builtin.modules.credentials import CredentialStore
from tools.builtin.modules.drafts import DraftManager
from tools.builtin.modules.pipeline import ModulePipelineTool
from tools.builtin.modules.repair import ChatGateway
from tools.builtin.modules.sandbox_runner import ModuleTestRunner, SandboxTestRunner
from tools.builtin.modules.scan import StaticScanner
from tools.builtin.modules.store import ModuleStore
from tools.builtin.modules.validation import ModuleValidator
from tools.builtin.modules.versions import VersionManager

if TYPE_CHECKING:
    from tools.registry import LocalToolRegistry

__all__ = ["ModuleToolkit"]


@dataclass(frozen=True)
class ModuleToolkit:
    """The module system's collaborators and its two tools.

    Attributes:
        store: Build areas, reports, the index.
        versions: Installed versions.
        drafts: Drafts.
        credentials: Encrypted credentials.
        validator: Static scan + tests + attestations.
        adapters: The enabled modules, each in its worker (for load status, and for the
            context bridge's ``normalize_for_tools``).
        pipeline: ``module_pipeline``.
        admin: ``module_admin``.
    """

    store: ModuleStore
    versions: VersionManager
    drafts: DraftManager
    credentials: CredentialStore
    validator: ModuleValidator
    adapters: ModuleAdapters
    pipeline: ModulePipelineTool
    admin: ModuleAdminTool

    @classmethod
    def create(
        cls,
        root: Path,
        *,
        keys: ModuleKeys,
        sandbox: Any = None,
        test_runner: ModuleTestRunner | None = None,
        llm_gateway: ChatGateway | None = None,
        python_path: tuple[str, ...] | None = None,
        workers: ModuleWorkers | None = None,
    ) -> ModuleToolkit:
        """Wire a toolkit over the store in ``root``.

        Args:
            root: The store's folder.
            keys: The credentials and signing keys.
            sandbox: Runs the modules' tests (a ``LocalSandbox`` with workspace support, hiding
                the data directory that holds ``root`` and the keys).
            test_runner: Runs the tests instead of a ``SandboxTestRunner`` over ``sandbox``.
            llm_gateway: The model ``repair`` asks (None: repair is off).
            python_path: What the tests may import (default: the project and pydantic).
            workers: Run the enabled modules (see :func:`~.workers.sandboxed_workers`);
                None: no module runs here, and each enabled one reports why.

        Raises:
            ValueError: Neither ``sandbox`` nor ``test_runner`` was given.
            ImportError: ``cryptography`` is missing (the ``modules`` extra).
        """
        if test_runner is None:
            if sandbox is None:
                raise ValueError("ModuleToolkit.create needs a sandbox (or a test_runner) to run the modules' tests")
            test_runner = SandboxTestRunner(sandbox=sandbox, python_path=python_path)
        layout = ModuleLayout(Path(root))
        signer = Signer(keys.signing)
        vault = CredentialVault(keys.credentials)
        store = ModuleStore(layout)
        versions = VersionManager(store=store, signer=signer)
        drafts = DraftManager(store=store, versions=versions)
        credentials = CredentialStore(store=store, vault=vault)
        scanner = StaticScanner()
        validator = ModuleValidator(scanner=scanner, runner=test_runner, signer=signer)
        adapters = ModuleAdapters(layout, signer=signer, vault=vault, workers=workers)
        reserved = frozenset(c.platform for c in AdapterRegistry.with_builtin_adapters())
        pipeline = ModulePipelineTool(
            store=store,
            versions=versions,
            drafts=drafts,
            credentials=credentials,
            validator=validator,
            llm_gateway=llm_gateway,
            scanner=scanner,
            reserved_ids=reserved,
        )
        admin = ModuleAdminTool(
            store=store,
            versions=versions,
            drafts=drafts,
            credentials=credentials,
            validator=validator,
            adapters=adapters,
        )
        return cls(store, versions, drafts, credentials, validator, adapters, pipeline, admin)

    def register(self, registry: LocalToolRegistry, *, aliases: bool = True) -> list[str]:
        """Register ``module_pipeline``, ``module_admin`` and (by default) the 17 old names."""
        registry.register(self.pipeline)
        registry.register(self.admin)
        names = [self.pipeline.name, self.admin.name]
        if aliases:
            names += register_module_aliases(registry, pipeline=self.pipeline, admin=self.admin)
        return names
