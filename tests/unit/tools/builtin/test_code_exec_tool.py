"""CodeExecutorTool with a fake sandbox; limits and interpreter discovery."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

from tools.builtin.code_executor import (
    CodeExecutorTool,
    LocalSandbox,
    SandboxClient,
    SandboxLimits,
    SandboxResult,
    default_interpreters,
)
from tools.builtin.code_executor._layout import sandbox_executable
from tools.builtin.code_executor.local import world_executable
from tools.errors import InvalidArgumentsError, ToolError


class FakeSandbox:
    """Records calls and returns a canned result (or raises)."""

    def __init__(self, result: SandboxResult | None = None, error: ToolError | None = None):
        self.calls: list[dict[str, Any]] = []
        self.result = result or SandboxResult("python", "42\n", "", 0, 12.5, network_isolated=True)
        self.error = error
        self.closed = False

    def languages(self) -> list[str]:
        return ["python"]

    def run(
        self,
        code: str,
        *,
        language: str = "python",
        stdin: str | None = None,
        timeout_seconds: float | None = None,
    ) -> SandboxResult:
        self.calls.append({"code": code, "language": language, "stdin": stdin, "timeout": timeout_seconds})
        if self.error is not None:
            raise self.error
        return self.result

    def close(self) -> None:
        self.closed = True


def test_fake_and_local_sandboxes_satisfy_the_protocol() -> None:
    assert isinstance(FakeSandbox(), SandboxClient)
    assert isinstance(LocalSandbox(), SandboxClient)


def test_request_goes_to_the_sandbox_and_the_report_comes_back() -> None:
    sandbox = FakeSandbox()
    result = CodeExecutorTool(sandbox=sandbox).execute(code="print(6*7)", stdin="in", timeout_seconds=2)
    assert sandbox.calls == [{"code": "print(6*7)", "language": "python", "stdin": "in", "timeout": 2.0}]
    assert result.data == {
        "language": "python",
        "stdout": "42\n",
        "stderr": "",
        "exit_code": 0,
        "duration_ms": 12.5,
        "timed_out": False,
        "killed": False,
        "truncated": False,
        "network_isolated": True,
        "signal": None,
        "note": None,
    }
    flags = {k: result.metadata[k] for k in ("network_isolated", "timed_out", "killed", "truncated")}
    assert flags == {"network_isolated": True, "timed_out": False, "killed": False, "truncated": False}
    assert result.metadata["tool_name"] == "execute_code"


def test_a_limit_hit_is_data_not_an_error() -> None:
    report = SandboxResult(
        "python", "", "", -9, 1000.0, timed_out=True, killed=True, signal="SIGKILL",
        note="Killed after the 1 s wall-clock limit.",
    )  # fmt: skip
    result = CodeExecutorTool(sandbox=FakeSandbox(report)).execute(code="while True: pass")
    assert result.ok
    assert result.data["timed_out"] is True
    assert result.data["note"] == "Killed after the 1 s wall-clock limit."


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({}, "code"),
        ({"code": "x", "language": "cobol"}, "language"),
        ({"code": "x", "timeout_seconds": 0}, "timeout_seconds"),
        ({"code": "x", "timeout_seconds": 10_000}, "timeout_seconds"),
        ({"code": 5}, "code"),
    ],
)
def test_bad_requests_never_reach_the_sandbox(arguments: dict[str, Any], message: str) -> None:
    sandbox = FakeSandbox()
    result = CodeExecutorTool(sandbox=sandbox).execute(**arguments)
    assert result.error is not None
    assert result.error.type == "validation_error"
    assert message in result.error.message
    assert sandbox.calls == []


def test_sandbox_errors_become_envelopes() -> None:
    bad = InvalidArgumentsError("Language 'node' is not available. Use one of: ['python'].")
    result = CodeExecutorTool(sandbox=FakeSandbox(error=bad)).execute(code="1", language="node")
    assert result.error is not None
    assert result.error.type == "validation_error"
    assert "Use one of" in result.error.message
    broken = CodeExecutorTool(sandbox=FakeSandbox(error=ToolError("could not start")))
    failed = broken.execute(code="1")
    assert failed.error is not None
    assert (failed.error.type, failed.error.message) == ("execution_error", "could not start")


def test_close_only_closes_an_owned_sandbox() -> None:
    injected = FakeSandbox()
    with CodeExecutorTool(sandbox=injected) as tool:
        assert tool.sandbox is injected
    assert injected.closed is False
    owned = CodeExecutorTool()
    assert isinstance(owned.sandbox, LocalSandbox)
    owned.close()
    assert owned.execute(code="print(1)").error is not None


def test_limits_must_be_positive_and_consistent() -> None:
    assert SandboxLimits().timeout_seconds == 10.0
    with pytest.raises(ValueError, match="cpu_seconds must be positive"):
        SandboxLimits(cpu_seconds=0)
    with pytest.raises(ValueError, match="max_drain_bytes must be >= max_output_bytes"):
        SandboxLimits(max_output_bytes=10, max_drain_bytes=5)


def test_default_interpreters_always_include_python() -> None:
    found = default_interpreters()
    assert found["python"][1:] == ["-I", "-S", "-B", "-u"]
    assert world_executable(found["python"][0]) or found["python"][0] == sandbox_executable(sys.executable)
    assert default_interpreters(python="/opt/py")["python"][0] == "/opt/py"
    assert LocalSandbox(interpreters={"python": ["/bin/py"]}).languages() == ["python"]


def test_world_executable_checks_every_directory(tmp_path: Path) -> None:
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    program = private / "prog"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    assert world_executable(str(program)) is False
    os.chmod(private, 0o711)
    expected = all(p.stat().st_mode & 0o001 for p in program.resolve().parents)
    assert world_executable(str(program)) is expected
    program.chmod(0o700)
    assert world_executable(str(program)) is False
    assert world_executable(str(tmp_path / "missing")) is False


def test_unusable_temp_root_is_a_tool_error() -> None:
    box = LocalSandbox(temp_root="/nonexistent/tooldeck-temp-root")
    with pytest.raises(ToolError, match="could not create a working directory"):
        box.run("print(1)")


def test_public_names_are_pinned() -> None:
    import tools.builtin.code_executor as package
    import tools.builtin.math as math_package

    assert sorted(package.__all__) == [
        "CodeExecutionRequest",
        "CodeExecutionResponse",
        "CodeExecutorTool",
        "LocalSandbox",
        "SandboxClient",
        "SandboxLimits",
        "SandboxResult",
        "default_interpreters",
    ]
    assert sorted(math_package.__all__) == [
        "MathEngine",
        "MathJob",
        "MathParser",
        "MathRequest",
        "MathResponse",
        "MathSolverTool",
        "ParseLimits",
        "SympyWorkerPool",
    ]
    for module in (package, math_package):
        for name in module.__all__:
            assert getattr(module, name).__module__.startswith(module.__name__)
