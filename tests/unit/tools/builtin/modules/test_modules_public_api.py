"""Pins the public import paths of the module system (a rename is a breaking change)."""

from __future__ import annotations

import importlib
from typing import get_args

import pytest

from shared.adapters import KNOWN_CATEGORIES
from tools import LocalToolRegistry
from tools.builtin.modules import Category, ModuleToolkit

PUBLIC = {
    "tools.builtin.modules": [
        "ModulePipelineTool",
        "ModuleAdminTool",
        "ModuleStore",
        "DraftManager",
        "VersionManager",
        "CredentialStore",
        "ModuleValidator",
        "StaticScanner",
        "SandboxTestRunner",
        "ModuleTestRunner",
        "ModuleRepairer",
        "ChatGateway",
        "ModuleToolkit",
        "Attestation",
        "Finding",
        "ValidationReport",
        "MODULE_ALIASES",
        "register_module_aliases",
        "module_alias_tools",
        "workspace_supported",
        "PolicyEgress",
        "SandboxWorkerLauncher",
        "sandboxed_workers",
        "WORKER_SANDBOX_LIMITS",
    ],
    "tools.builtin.code_executor.persistent": ["start_process", "SandboxedProcess"],
    "shared.modules": [
        "ModuleManifest",
        "ModuleLayout",
        "ModuleAdapters",
        "ModuleAwareRegistry",
        "ModuleKeys",
        "CredentialVault",
        "Signer",
        "ConfinedSession",
        "UnsafePathError",
        "check_relative_path",
        "files_hash",
        "ModuleWorkers",
        "ModuleWorker",
        "WorkerSpec",
        "WorkerLimits",
        "WorkerLauncher",
        "WorkerProcess",
        "WorkerStartError",
        "ModuleLoadError",
        "WorkerCallError",
        "ModuleEgress",
        "NoEgress",
        "EgressRequest",
        "EgressResponse",
        "EgressError",
        "CallSecrets",
        "RequestForwarder",
    ],
}


@pytest.mark.parametrize(("module", "names"), PUBLIC.items())
def test_public_names_importable(module: str, names: list[str]) -> None:
    mod = importlib.import_module(module)
    assert [n for n in names if not hasattr(mod, n)] == []
    assert set(names) <= set(mod.__all__)


def test_shared_modules_imports_no_tools() -> None:
    import ast
    from pathlib import Path

    import shared.module_worker
    import shared.modules

    folders = [Path(shared.modules.__file__).parent, Path(shared.module_worker.__file__).parent]
    for path in [p for folder in folders for p in folder.glob("*.py")]:
        tree = ast.parse(path.read_text())
        imported = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
        imported += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
        assert not [m for m in imported if m.split(".")[0] in ("tools", "orchestrator")], path.name


def test_build_categories_are_the_context_categories() -> None:
    assert get_args(Category) == KNOWN_CATEGORIES


def test_both_tools_export_strict(kit: ModuleToolkit) -> None:
    registry = LocalToolRegistry()
    kit.register(registry, aliases=False)
    exported = registry.to_openai_tools(strict=True)
    assert [t["function"]["name"] for t in exported] == ["module_pipeline", "module_admin"]
    assert all(t["function"]["strict"] is True for t in exported)
