"""Fixtures for the module tool tests: a toolkit over a temporary store, a registry."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.tools.builtin.modules.support import PassingRunner, make_toolkit, registry_for
from tools import LocalToolRegistry
from tools.builtin.modules import ModuleToolkit


@pytest.fixture
def runner() -> PassingRunner:
    return PassingRunner()


@pytest.fixture
def kit(tmp_path: Path, runner: PassingRunner) -> ModuleToolkit:
    return make_toolkit(tmp_path, runner=runner)


@pytest.fixture
def registry(kit: ModuleToolkit) -> LocalToolRegistry:
    return registry_for(kit)
