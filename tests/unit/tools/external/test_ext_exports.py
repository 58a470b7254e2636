"""Pin the public import paths of tools.external (lazy re-exports included)."""

from __future__ import annotations

import importlib

import pytest

import tools.external as external

EXPECTED = {
    "ActionSpec": "tools.external.config",
    "AdoptionMetadata": "tools.external.config",
    "AuthConfig": "tools.external.config",
    "BinaryStatus": "tools.external.executor",
    "BinaryTool": "tools.external.binary_tool",
    "CLIAction": "tools.external.config",
    "CLIAdapter": "tools.external.cli_adapter",
    "CLIConfig": "tools.external.config",
    "ExternalTool": "tools.external.external_tool",
    "HTTPAdapter": "tools.external.http_adapter",
    "HTTPConfig": "tools.external.config",
    "HTTPEndpoint": "tools.external.config",
    "MCPConfig": "tools.external.config",
    "ProcessOutcome": "tools.external._process",
    "ProcessRunner": "tools.external._process",
    "ScanChanges": "tools.external.executor",
    "ToolAdapter": "tools.external.adapter",
    "ToolAdapterRegistry": "tools.external.adapter",
    "ToolConfig": "tools.external.config",
    "ToolExecutorService": "tools.external.executor",
    "UnknownAdapterError": "tools.external.adapter",
    "build_external_tools": "tools.external.external_tool",
}


@pytest.mark.parametrize(("name", "home"), sorted(EXPECTED.items()))
def test_public_name_resolves_to_its_home(name: str, home: str) -> None:
    assert name in external.__all__
    assert getattr(external, name) is getattr(importlib.import_module(home), name)


def test_all_is_sorted_and_covers_the_expected_names() -> None:
    mine = [n for n in external.__all__ if n in EXPECTED]
    assert mine == sorted(EXPECTED)


def test_unknown_attribute_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        _ = external.Nope


def test_serve_lives_in_the_binary_module() -> None:
    from tools.external.binary import serve

    assert callable(serve)
