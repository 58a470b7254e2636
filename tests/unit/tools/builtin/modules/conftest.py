"""Fixtures for the module tool tests: a toolkit over a temporary store, a registry."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.unit.shared.modules.worker_support import subprocess_workers
from tests.unit.tools.builtin.modules.support import PassingRunner, make_toolkit, registry_for
from tools import LocalToolRegistry
from tools.builtin.modules import ModuleToolkit


@pytest.fixture
def runner() -> PassingRunner:
    return PassingRunner()


@pytest.fixture
def kit(tmp_path: Path, runner: PassingRunner) -> Iterator[ModuleToolkit]:
    """A toolkit whose enabled modules run in plain subprocess workers (the sandboxed ones are
    tested in ``tests/integration/modules``)."""
    workers = subprocess_workers()
    toolkit = make_toolkit(tmp_path, runner=runner, workers=workers)
    yield toolkit
    toolkit.adapters.close()
    workers.close()


@pytest.fixture
def registry(kit: ModuleToolkit) -> LocalToolRegistry:
    return registry_for(kit)
