"""CodeExecutorTool with a fake sandbox; limits and interpreter discovery."""

from __future__ import annotations

import os
import pickle
import sys
from collections.abc import Sequence
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
from tools.builtin.code_executor._bwrap import parse_status
from tools.builtin.code_executor._capture import Capture
from tools.builtin.code_executor._layout import sandbox_executable
from tools.builtin.code_executor._outcome import from_bwrap, from_launcher
from tools.builtin.code_executor._seccomp import SeccompUnavailableError, compile_filter
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
        workspace: str | os.PathLike[str] | None = None,
        writable: bool = False,
        python_path: Sequence[str | os.PathLike[str]] = (),
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


def test_hidden_dirs_configure_the_tools_own_sandbox_and_travel_with_it(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="hidden_dirs"):
        CodeExecutorTool(sandbox=FakeSandbox(), hidden_dirs=[tmp_path])
    data = tmp_path / "data"
    data.mkdir()
    tool = CodeExecutorTool(hidden_dirs=[data])
    copy = pickle.loads(pickle.dumps(tool))  # as a Ray actor gets it: a sandbox of its own
    try:
        assert tool.manual.risk == copy.manual.risk == "safe"
        assert isinstance(copy.sandbox, LocalSandbox) and copy.sandbox is not tool.sandbox
        assert copy._hidden_dirs == tool._hidden_dirs == (str(data),)  # the copy's sandbox hides them too
    finally:
        tool.close()
        copy.close()


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
        "WorkspaceChanges",
        "default_interpreters",
    ]
    assert sorted(math_package.__all__) == [
        "ArithmeticLimits",
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


def test_metadata_says_what_isolation_held() -> None:
    isolation = {"launcher": "bwrap", "seccomp": True, "process_cap": 64, "filesystem": True, "network": True}
    report = SandboxResult("python", "", "", 0, 1.0, network_isolated=True, isolation=isolation)
    metadata = CodeExecutorTool(sandbox=FakeSandbox(report)).execute(code="pass").metadata
    flags = {k: metadata[k] for k in ("launcher", "seccomp", "process_cap", "filesystem_isolated", "network_isolated")}
    assert flags == {
        "launcher": "bwrap",
        "seccomp": True,
        "process_cap": 64,
        "filesystem_isolated": True,
        "network_isolated": True,
    }
    bare = CodeExecutorTool(sandbox=FakeSandbox()).execute(code="pass").metadata
    assert [bare[k] for k in ("launcher", "seccomp", "process_cap", "filesystem_isolated")] == [None] * 4


def test_sandbox_failures_trip_the_breaker_and_program_failures_are_data() -> None:
    broken = CodeExecutorTool(sandbox=FakeSandbox(error=ToolError("no launcher", trips_breaker=True)))
    error = broken.execute(code="1").error
    assert error is not None
    assert error.counts_as_failure is True


def test_constructor_rejects_unknown_launchers_and_root_without_a_uid_drop() -> None:
    with pytest.raises(ValueError, match="use 'auto', 'bwrap' or 'namespaces'"):
        LocalSandbox(launcher="docker")  # type: ignore[arg-type]
    if os.geteuid() == 0:
        with pytest.raises(ValueError, match="allow_weaker_isolation=True"):
            LocalSandbox(sandbox_uid=None)
        assert LocalSandbox(sandbox_uid=None, allow_weaker_isolation=True).languages()


# -- the parts: launcher reports, seccomp (layout and command lines: test_code_exec_layout.py) -----


@pytest.mark.parametrize(
    ("status", "returncode", "exit_code", "start_error"),
    [
        (b'{ "child-pid": 9 }\n{ "exit-code": 0 }\n', 0, 0, None),
        (b'{ "child-pid": 9 }\n{ "exit-code": 3 }\n', 3, 3, None),
        (b'{ "child-pid": 9 }\n{ "exit-code": 153 }\n', 153, -25, None),  # SIGXFSZ
        (b'{ "child-pid": 9 }\n', -9, -9, None),  # bwrap killed by us
        (b"", 1, None, "bwrap: Creating new namespace failed: No space left on device"),
    ],
)
def test_bwrap_reports_are_read(status: bytes, returncode: int, exit_code: int | None, start_error: str | None) -> None:
    capture = Capture(stderr=bytearray(b"bwrap: Creating new namespace failed: No space left on device\n"))
    capture.status_raw = status
    outcome = from_bwrap(capture, returncode, network=True, filesystem=True, seccomp=False)
    assert (outcome.launcher, outcome.exit_code, outcome.start_error) == ("bwrap", exit_code, start_error)
    assert parse_status(b'{"a": 1}\nnot json\n{"b": 2}\n') == {"a": 1, "b": 2}


def test_launcher_reports_are_read() -> None:
    capture = Capture()
    capture.status = [{"net": 1}, {"pid": 1}, {"fs": 1}, {"userns": 0}, {"userns": 1}, {"nnp": 1}, {"wait_status": 0}]
    outcome = from_launcher(capture, 0, isolate_fs=True)
    assert (outcome.launcher, outcome.per_run_userns, outcome.filesystem, outcome.exit_code) == (
        "namespaces",
        True,
        True,
        0,
    )
    capture.status = [{"net": 0}, {"pid": 0}, {"fs": 0}, {"userns": 0}, {"ns_error": "Operation not permitted"}]
    capture.status += [{"refused": 1}, {"missing": "net,pid,userns,fs"}]
    refused = from_launcher(capture, 126, isolate_fs=True)
    assert (refused.launcher, refused.refused, refused.detail) == (
        "none",
        "net,pid,userns,fs",
        "Operation not permitted",
    )


def test_the_seccomp_program_is_compiled_when_libseccomp_is_installed() -> None:
    try:
        strict, open_net = compile_filter(), compile_filter(allow_network=True)
    except SeccompUnavailableError as exc:
        pytest.skip(f"no libseccomp here: {exc}")
    assert len(strict) % 8 == 0
    assert len(open_net) % 8 == 0
    assert len(open_net) < len(strict)  # no socket-family rule
