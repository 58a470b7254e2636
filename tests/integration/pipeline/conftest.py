"""Fixtures: a real workspace with a failing test, a real sandbox, the host's site-packages."""

from __future__ import annotations

import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from orchestrator.agents import host_python_path
from tools.builtin.code_executor import LocalSandbox, SandboxLimits

CALC = "def add(a, b):\n    return a - b\n\n\ndef divide(a, b):\n    return a / b\n"
TEST_CALC = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "project"
    ws.mkdir()
    (ws / "calc.py").write_text(CALC)
    (ws / "tests").mkdir()
    (ws / "tests" / "test_calc.py").write_text(TEST_CALC)
    return ws


@pytest.fixture(scope="module")
def site_packages() -> tuple[str, ...]:
    return tuple(host_python_path(sysconfig.get_paths()))


@pytest.fixture(scope="module")
def sandbox() -> Iterator[LocalSandbox]:
    root = Path(tempfile.mkdtemp(prefix="tooldeck-pipeline-"))
    root.chmod(0o711)
    with LocalSandbox(
        limits=SandboxLimits(timeout_seconds=120, cpu_seconds=120, memory_mb=4096), temp_root=str(root)
    ) as box:
        yield box
