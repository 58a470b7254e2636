"""A module's tests in the real LocalSandbox (workspace support), with the network off and
the application's data (the module keys, the credentials) out of sight.

Skipped until ``LocalSandbox.run`` takes ``workspace`` (the pipeline branch adds it).
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from shared.modules import ModuleKeys
from tests.unit.tools.builtin.modules.support import RUNS_ADAPTER, runs_test
from tools.builtin.code_executor import LocalSandbox
from tools.builtin.modules import SANDBOX_NEEDS_WORKSPACE, SandboxTestRunner, workspace_supported

BASE = "http://127.0.0.1:8000/api/runs"
MANIFEST = json.dumps({"id": "runs", "name": "Runs", "category": "fitness", "api_url": BASE}).encode()

pytestmark = pytest.mark.skipif(not workspace_supported(LocalSandbox), reason=SANDBOX_NEEDS_WORKSPACE)


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "data"
    ModuleKeys.load(folder / "module-keys")
    return folder


@pytest.fixture
def runner(data_dir: Path) -> Iterator[SandboxTestRunner]:
    sandbox = LocalSandbox(hidden_dirs=[data_dir])
    yield SandboxTestRunner(sandbox=sandbox, timeout_seconds=30)
    sandbox.close()


def files(test: str) -> dict[str, bytes]:
    return {"manifest.json": MANIFEST, "adapter.py": RUNS_ADAPTER.encode(), "test_adapter.py": test.encode()}


def test_the_module_tests_pass_in_the_sandbox(runner: SandboxTestRunner) -> None:
    run = runner.run_tests(files(runs_test(BASE)))
    assert (run.ran, run.passed, run.findings) == (2, True, [])


def test_a_failure_points_at_the_file_and_line(runner: SandboxTestRunner) -> None:
    test = runs_test(BASE).replace('"total_km": 7.5', '"total_km": 8.5')
    run = runner.run_tests(files(test))
    (finding,) = run.findings
    assert (finding.file, finding.rule) == ("test_adapter.py", "test-failure")
    assert finding.line is not None


def test_the_network_is_off(runner: SandboxTestRunner) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    test = (
        "import socket, unittest\n\n\nclass T(unittest.TestCase):\n    def test_connect(self):\n"
        f"        socket.create_connection(('127.0.0.1', {port}), timeout=2).close()\n"
    )
    try:
        run = runner.run_tests(files(test))
    finally:
        listener.close()
    assert run.passed is False
    assert run.findings[0].rule == "test-error"


def test_the_module_keys_are_out_of_sight(runner: SandboxTestRunner, data_dir: Path) -> None:
    key = data_dir / "module-keys" / "module-credentials.key"
    test = (
        "import unittest\n\n\nclass T(unittest.TestCase):\n    def test_steal(self):\n"
        f"        open({str(key)!r}).read()\n"
    )
    run = runner.run_tests(files(test))
    assert run.passed is False
    assert "Error" in run.findings[0].message
