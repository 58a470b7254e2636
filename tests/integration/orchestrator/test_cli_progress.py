"""Progress on a terminal (issue 21 items 6 and 7): with stderr on a pseudo-terminal, ``python -m
orchestrator`` shows each model turn ("turn 1: waiting for test (0 s)"), each tool call as it
starts, the progress a tool reports, and a line as each call ends; the answer on stdout stays
clean. Without a terminal nothing is shown (see test_own_tools_e2e)."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.integration.orchestrator.test_own_tools_e2e import private_env

SLOWTOOLS = textwrap.dedent(
    '''
    from tools import LocalToolRegistry, ToolCategory, ToolManual, report_progress

    SAFE = {"risk": "safe", "mutating": False, "category": ToolCategory.COMPUTE}

    def build() -> LocalToolRegistry:
        registry = LocalToolRegistry()

        @registry.tool(manual=ToolManual(name="index_files", **SAFE))
        def index_files(count: int) -> str:
            """Index files, saying how far it is.

            Args:
                count: How many files.
            """
            report_progress(0.5, "half of the files indexed")
            report_progress(1.0, "all files indexed")
            return "indexed"

        @registry.tool(manual=ToolManual(name="fail", **SAFE))
        def fail() -> str:
            """Always fails."""
            raise ValueError("boom")

        return registry
    '''
)


def run_on_a_terminal(cwd: Path, env: dict[str, str], *args: str) -> tuple[int, str, str]:
    """Run ``python -m orchestrator`` with stderr on a pty; (exit code, stdout, everything on the pty)."""
    master, slave = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "orchestrator", *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=slave,
    )
    os.close(slave)
    seen = bytearray()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 1.0)
        if not ready:
            if process.poll() is not None:
                break
            continue
        try:
            data = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        seen += data
    os.close(master)
    out = process.stdout.read().decode() if process.stdout is not None else ""
    code = process.wait(timeout=60)
    return code, out, seen.decode("utf-8", errors="replace")


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {**private_env(tmp_path), "TERM": "xterm-256color", "COLUMNS": "160"}


def test_turns_tool_calls_and_tool_progress_show_on_a_terminal(tmp_path: Path, env: dict[str, str]) -> None:
    (tmp_path / "slowtools.py").write_text(SLOWTOOLS)
    code, out, terminal = run_on_a_terminal(
        tmp_path, env, "--registry", "slowtools:build", "--model", "test", "--no-trace", "index my files"
    )
    assert code == 0, terminal
    assert "turn 1: waiting for test (0 s)" in terminal
    assert "running index_files" in terminal
    assert "50% half of the files indexed" in terminal
    assert "✓ index_files" in terminal
    assert "✗ fail execution_error" in terminal
    assert "turn 2: waiting for test" in terminal
    assert out.startswith("I called 2 tool(s):\n- index_files(")  # stdout: only the answer
    assert "\x1b" not in out


def test_quiet_shows_no_progress(tmp_path: Path, env: dict[str, str]) -> None:
    (tmp_path / "slowtools.py").write_text(SLOWTOOLS)
    code, _, terminal = run_on_a_terminal(
        tmp_path, env, "-q", "--registry", "slowtools:build", "--model", "test", "index my files"
    )
    assert code == 0
    assert "waiting for" not in terminal and "running" not in terminal
