"""LocalSandbox and CodeExecutorTool doing ordinary work with real processes."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tools import LocalToolRegistry
from tools.builtin.code_executor import CodeExecutorTool, LocalSandbox, SandboxResult
from tools.errors import InvalidArgumentsError, ToolError


def test_python_round_trip(sandbox: LocalSandbox) -> None:
    result = sandbox.run("print(6 * 7)")
    assert isinstance(result, SandboxResult)
    assert (result.stdout, result.stderr, result.exit_code) == ("42\n", "", 0)
    assert (result.timed_out, result.killed, result.truncated) == (False, False, False)
    assert result.language == "python"
    assert result.duration_ms > 0
    assert result.isolation["pid_namespace"] in (True, False)


def test_exit_code_and_traceback_are_reported(sandbox: LocalSandbox) -> None:
    result = sandbox.run("import sys\nprint('a')\nraise SystemExit(3)\n")
    assert (result.stdout, result.exit_code, result.killed) == ("a\n", 3, False)
    failing = sandbox.run("1/0")
    assert failing.exit_code == 1
    assert "ZeroDivisionError" in failing.stderr


def test_stdin_is_fed_to_the_program(sandbox: LocalSandbox) -> None:
    result = sandbox.run("import sys\nprint(sys.stdin.read().upper())", stdin="hello\nworld")
    assert result.stdout == "HELLO\nWORLD\n"
    assert sandbox.run("import sys\nprint(repr(sys.stdin.read()))").stdout == "''\n"


def test_unicode_and_invalid_utf8_output(sandbox: LocalSandbox) -> None:
    result = sandbox.run("import sys\nprint('π ≈ 3.14')\nsys.stdout.buffer.write(b'\\xff\\n')")
    assert result.stdout == "π ≈ 3.14\n\ufffd\n"


@pytest.mark.parametrize(
    ("language", "code"),
    [("bash", "echo $((6*7))"), ("sh", "echo 42"), ("node", "console.log(6*7)")],
)
def test_other_languages_when_installed(sandbox: LocalSandbox, language: str, code: str) -> None:
    if language not in sandbox.languages():
        pytest.skip(f"{language} not installed")
    result = sandbox.run(code, language=language)
    assert (result.stdout, result.exit_code) == ("42\n", 0)


def test_bad_requests_are_invalid_arguments(sandbox: LocalSandbox) -> None:
    with pytest.raises(InvalidArgumentsError, match="Use one of"):
        sandbox.run("print(1)", language="cobol")
    with pytest.raises(InvalidArgumentsError, match="NUL"):
        sandbox.run("print(1)\x00")
    with pytest.raises(InvalidArgumentsError, match="longer than"):
        sandbox.run("#" * 300_000)
    with pytest.raises(InvalidArgumentsError, match="stdin"):
        sandbox.run("pass", stdin="x" * 2_000_000)


def test_requested_timeout_is_capped_at_the_limit(sandbox: LocalSandbox) -> None:
    result = sandbox.run("import time\ntime.sleep(30)", timeout_seconds=0.5)
    assert result.timed_out is True
    assert result.note == "Killed after the 0.5 s wall-clock limit."


def test_required_network_isolation_refuses_when_unavailable(sandbox_root: Path) -> None:
    box = LocalSandbox(isolate_network=False, require_network_isolation=True, temp_root=str(sandbox_root))
    with pytest.raises(ToolError, match="requires network isolation"):
        box.run("print('ran')")


def test_missing_interpreter_is_a_tool_error(sandbox_root: Path) -> None:
    box = LocalSandbox(interpreters={"python": ["/nonexistent/python3"]}, temp_root=str(sandbox_root))
    with pytest.raises(ToolError, match="could not start the python interpreter"):
        box.run("print(1)")


def test_closed_sandbox_refuses_and_kills_running_work(sandbox: LocalSandbox) -> None:
    with ThreadPoolExecutor(1) as pool:
        running = pool.submit(sandbox.run, "import time\nprint('start', flush=True)\ntime.sleep(30)")
        for _ in range(200):  # wait until the run is registered
            if sandbox._running:
                break
            time.sleep(0.01)
        sandbox.close()
        result = running.result(timeout=10)
    assert result.killed is True
    assert result.timed_out is False
    with pytest.raises(ToolError, match="shut down"):
        sandbox.run("print(1)")


def test_parallel_runs_are_independent(sandbox: LocalSandbox) -> None:
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda n: sandbox.run(f"print({n} * 2)"), range(8)))
    assert [r.stdout for r in results] == [f"{n * 2}\n" for n in range(8)]


def test_tool_through_the_registry(sandbox: LocalSandbox) -> None:
    registry = LocalToolRegistry()
    registry.register(CodeExecutorTool(sandbox=sandbox))
    ok = registry("execute_code", code="print('hi')")
    assert ok["status"] == "success"
    assert ok["data"] == {
        "language": "python",
        "stdout": "hi\n",
        "stderr": "",
        "exit_code": 0,
        "duration_ms": ok["data"]["duration_ms"],
        "timed_out": False,
        "killed": False,
        "truncated": False,
        "network_isolated": ok["data"]["network_isolated"],
        "signal": None,
        "note": None,
    }
    looping = registry("execute_code", code="while True: pass", timeout_seconds=0.5)
    assert looping["status"] == "success"
    assert looping["data"]["timed_out"] is True


def test_default_tool_uses_a_local_sandbox() -> None:
    tool = CodeExecutorTool()
    try:
        assert isinstance(tool.sandbox, LocalSandbox)
        assert tool.execute(code="print(1 + 1)").data["stdout"] == "2\n"
    finally:
        tool.close()
    assert tool.execute(code="print(1)").error is not None


def test_leftover_scan_can_see_a_live_process(
    sandbox_root: Path, scan_processes: Callable[..., list[tuple[int, str]]]
) -> None:
    marker = sandbox_root / "scan-check"
    marker.mkdir()
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"], cwd=marker)
    # One that moved away and names no test directory: found by its uid and start time.
    moved = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"], cwd="/", env={})
    try:
        assert [pid for pid, _ in scan_processes(str(marker))] == [proc.pid]
        anywhere = scan_processes("no-such-prefix", uid=os.geteuid(), since=0)
        assert moved.pid in [pid for pid, _ in anywhere]
    finally:
        for child in (proc, moved):
            child.kill()
            child.wait()
    assert scan_processes(str(marker)) == []


def test_background_process_that_moves_away_is_still_killed(sandbox: LocalSandbox) -> None:
    if "bash" not in sandbox.languages():
        pytest.skip("bash not installed")
    result = sandbox.run("cd / && (exec -a innocent sleep 60 &) ; echo started", language="bash")
    assert result.stdout == "started\n"
    # the sandbox_root fixture's scan (sandbox uid + start time) fails the test otherwise


def test_without_filesystem_isolation_the_program_runs_in_the_host_workdir(
    sandbox_root: Path, launcher_kind: str
) -> None:
    box = LocalSandbox(isolate_filesystem=False, temp_root=str(sandbox_root), launcher=launcher_kind)  # type: ignore[arg-type]
    code = "import os\nprint(os.getcwd().startswith(os.environ['HOME']), open('main.py').read()[:6])"
    result = box.run(code)
    assert (result.stdout, result.exit_code) == ("True import\n", 0)
    assert result.isolation["filesystem"] is False
    assert result.isolation["launcher"] == launcher_kind
