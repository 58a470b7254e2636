"""The tooldeck CLI: schema export, listing, calls, and clear errors."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from tools.cli import main

FACTORY = textwrap.dedent(
    '''
    from tools import LocalToolRegistry

    def add(a: int, b: int = 0) -> int:
        """Add two integers."""
        return a + b

    def build():
        registry = LocalToolRegistry()
        registry.register(add)
        return registry

    def not_a_registry():
        return 42
    '''
)


@pytest.fixture
def factory_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    (tmp_path / "cli_factory_mod.py").write_text(FACTORY)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "cli_factory_mod"
    sys.modules.pop("cli_factory_mod", None)


def test_schema_formats(factory_module: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", f"{factory_module}:build", "--strict"]) == 0
    tools = json.loads(capsys.readouterr().out)
    assert tools[0]["function"]["strict"] is True
    assert tools[0]["function"]["parameters"]["required"] == ["a", "b"]
    assert main(["schema", f"{factory_module}:build", "--format", "mcp"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["inputSchema"]["required"] == ["a"]


def test_list_and_call(factory_module: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", f"{factory_module}:build"]) == 0
    assert capsys.readouterr().out == "add\tAdd two integers.\n"
    assert main(["call", f"{factory_module}:build", "add", '{"a": 2, "b": 3}']) == 0
    assert json.loads(capsys.readouterr().out)["data"] == 5
    assert main(["call", f"{factory_module}:build", "add", "{not json"]) == 1
    assert json.loads(capsys.readouterr().out)["error_type"] == "validation_error"


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("no_colon", "expected 'module:factory'"),
        ("missing_mod_xyz:build", "cannot import"),
        ("cli_factory_mod:nothing", "no callable 'nothing'"),
        ("cli_factory_mod:not_a_registry", "returned int"),
    ],
)
def test_bad_registry_specs(factory_module: str, capsys: pytest.CaptureFixture[str], spec: str, expected: str) -> None:
    assert main(["list", spec]) == 2
    assert expected in capsys.readouterr().err


def test_help_has_examples() -> None:
    out = subprocess.run([sys.executable, "-m", "tools.cli", "--help"], capture_output=True, text=True, check=True)
    assert "examples:" in out.stdout and "tooldeck call" in out.stdout
