"""The dynamic stage's runner: the harness, its report, and sandboxes without workspace support.

The harness runs for real here, in ``SubprocessSandbox`` (the workspace contract as a plain
subprocess); the same harness in the real sandbox is tested in
``tests/integration/sandbox/test_module_tests_in_sandbox.py``.
"""

from __future__ import annotations

import json
from typing import Any

from tests.unit.tools.builtin.modules.support import RUNS_ADAPTER, SubprocessSandbox, runs_test
from tools.builtin.code_executor import LocalSandbox, SandboxResult
from tools.builtin.modules import SANDBOX_NEEDS_WORKSPACE, SandboxTestRunner, workspace_supported
from tools.errors import ToolError

BASE = "http://127.0.0.1:8000/api/runs"
MANIFEST = json.dumps({"id": "runs", "name": "Runs", "category": "fitness", "api_url": BASE}).encode()


def files(adapter: str = RUNS_ADAPTER, test: str | None = None) -> dict[str, bytes]:
    return {
        "manifest.json": MANIFEST,
        "adapter.py": adapter.encode(),
        "test_adapter.py": (runs_test(BASE) if test is None else test).encode(),
    }


def runner(**kwargs: Any) -> SandboxTestRunner:
    return SandboxTestRunner(sandbox=SubprocessSandbox(), **kwargs)


def test_passing_tests() -> None:
    run = runner().run_tests(files())
    assert (run.ran, run.passed, run.findings, run.note) == (2, True, [], "2 test(s) ran, 0 failed")


def test_a_failing_test_is_a_finding_with_file_and_line() -> None:
    broken = RUNS_ADAPTER.replace('"total_km": total', '"total_km": total + 1')
    run = runner().run_tests(files(broken))
    assert (run.ran, run.passed) == (2, False)
    (finding,) = run.findings
    assert (finding.stage, finding.file, finding.rule) == ("dynamic", "test_adapter.py", "test-failure")
    assert (
        finding.line
        == runs_test(BASE)
        .splitlines()
        .index('        self.assertEqual(shaped, {"runs": 1, "total_km": 7.5, "latest": "2026-11-25"})')
        + 1
    )
    assert finding.message.startswith("test_adapter.AdapterTest.test_normalize: AssertionError:")


def test_an_exception_in_the_adapter_points_at_the_adapter() -> None:
    broken = RUNS_ADAPTER.replace("total = round(", "total = 1 / 0 + round(")
    run = runner().run_tests(files(broken))
    (finding,) = run.findings
    assert (finding.file, finding.rule) == ("adapter.py", "test-error")
    assert (
        finding.line
        == broken.splitlines().index('        total = 1 / 0 + round(sum(float(r["km"]) for r in runs), 1)') + 1
    )
    assert finding.message.endswith("ZeroDivisionError: division by zero")


def test_an_adapter_that_does_not_import_is_reported() -> None:
    run = runner().run_tests(files("raise RuntimeError('boom')\n"))
    assert run.passed is False
    assert "RuntimeError: boom" in run.findings[0].message


def test_no_tests_is_a_finding() -> None:
    run = runner().run_tests(files(test="# nothing here\n"))
    assert run.passed is False
    assert [f.rule for f in run.findings] == ["no-tests"]


def test_a_test_that_never_ends_is_stopped() -> None:
    loop = "import unittest\n\n\nclass T(unittest.TestCase):\n    def test_loop(self):\n"
    loop += "        while True:\n            pass\n"
    run = runner(timeout_seconds=2).run_tests(files(test=loop))
    assert run.passed is False
    assert run.findings[0].message == "the tests did not finish within 2 s (an endless loop, or a network wait?)."


def test_output_flooding_or_a_crash_is_reported() -> None:
    crash = "import os\nos._exit(3)\n"
    run = runner().run_tests(files(test=crash))
    assert run.passed is False
    assert run.findings[0].message.startswith("the test run crashed before reporting")


class NoWorkspaceSandbox:
    """A sandbox with the pre-workspace contract."""

    def run(
        self, code: str, *, language: str = "python", stdin: str | None = None, timeout_seconds: float | None = None
    ) -> SandboxResult:
        raise AssertionError("must not be called")


class FailingSandbox(SubprocessSandbox):
    def run(self, code: str, *, workspace: str | None = None, python_path: Any = (), **kwargs: Any) -> SandboxResult:
        raise ToolError("The sandbox could not create a working directory (OSError).", trips_breaker=True)


def test_a_sandbox_without_workspace_support_is_detected_and_reported() -> None:
    assert workspace_supported(SubprocessSandbox())
    assert not workspace_supported(NoWorkspaceSandbox())
    assert not workspace_supported(object())
    run = SandboxTestRunner(sandbox=NoWorkspaceSandbox()).run_tests(files())
    assert run.passed is False
    assert run.findings[0].message == f"the tests could not run: running them {SANDBOX_NEEDS_WORKSPACE}."


def test_the_local_sandbox_support_is_read_from_its_signature() -> None:
    import inspect

    expected = "workspace" in inspect.signature(LocalSandbox.run).parameters
    assert workspace_supported(LocalSandbox()) is expected


def test_a_sandbox_error_is_a_finding_not_an_exception() -> None:
    run = SandboxTestRunner(sandbox=FailingSandbox()).run_tests(files())
    assert run.passed is False
    assert "could not create a working directory" in run.findings[0].message
