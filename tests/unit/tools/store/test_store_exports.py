"""Pins the public import paths of tools.store and tools.cli; tools.store imports lazily."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import tools.store

PUBLIC = [
    "ToolConfig",
    "ToolAuth",
    "ManualOverrides",
    "BinaryConfig",
    "Registry",
    "RegistryStore",
    "RegistryService",
    "CapabilityMatch",
    "ToolCatalog",
    "CatalogEntry",
    "ManualFileSource",
    "MCPServerSource",
    "BinaryDirSource",
    "ExecutionService",
    "ReadinessCheck",
    "ToolBuilder",
    "AdoptedTool",
    "RegistryFileError",
    "ToolNotAdoptedError",
    "StoreError",
    "TrustStore",
    "ProjectTrust",
    "TrustFileError",
]


@pytest.mark.parametrize("name", PUBLIC)
def test_public_names(name: str) -> None:
    assert name in tools.store.__all__
    assert getattr(importlib.import_module("tools.store"), name) is not None


def test_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        tools.store.Nope  # noqa: B018


def test_cli_main_is_public() -> None:
    from tools.cli import main

    assert callable(main)


def test_reading_registries_does_not_import_adapters() -> None:
    code = (
        "import sys; import tools.store.registry_store; "
        "heavy = [m for m in ('requests', 'mcp', 'tools.external.http_adapter', 'sqlite3') if m in sys.modules]; "
        "print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
