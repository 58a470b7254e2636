"""ProcessRunner: process groups die with their call; kill_all; output caps."""

from __future__ import annotations

import sys
import threading
import uuid
from typing import Any

import pytest

from tools.external import ProcessRunner
from tools.external._process import RunnerClosedError

SPAWN_SLEEPER = (
    "import subprocess, sys, time\n"
    "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)', sys.argv[1]])\n"
)


def test_grandchild_left_behind_by_a_finished_child_is_killed(live_pids: Any) -> None:
    marker = f"orphan-{uuid.uuid4().hex}"
    outcome = ProcessRunner().run([sys.executable, "-c", SPAWN_SLEEPER + "print('done')", marker], timeout=10)
    assert (outcome.returncode, outcome.stdout) == (0, b"done\n")
    assert live_pids(marker) == []


def test_timeout_kills_child_and_grandchildren(live_pids: Any) -> None:
    marker = f"sleeper-{uuid.uuid4().hex}"
    outcome = ProcessRunner().run([sys.executable, "-c", SPAWN_SLEEPER + "time.sleep(60)", marker], timeout=0.5)
    assert outcome.timed_out
    assert outcome.returncode < 0
    assert live_pids(marker) == []


def test_kill_all_stops_running_calls_and_closes(live_pids: Any, wait_for: Any) -> None:
    runner = ProcessRunner()
    marker = f"killall-{uuid.uuid4().hex}"
    outcomes: list[Any] = []
    threads = [
        threading.Thread(
            target=lambda: outcomes.append(
                runner.run([sys.executable, "-c", SPAWN_SLEEPER + "time.sleep(60)", marker], timeout=60)
            )
        )
        for _ in range(3)
    ]
    for t in threads:
        t.start()
    assert wait_for(lambda: len(live_pids(marker)) == 6)  # 3 children + 3 grandchildren
    assert runner.kill_all(close=True) == 3
    for t in threads:
        t.join(10)
    assert [o.killed for o in outcomes] == [True, True, True]
    assert live_pids(marker) == []
    with pytest.raises(RunnerClosedError):
        runner.run([sys.executable, "-c", "pass"], timeout=5)
    runner.reopen()
    assert runner.run([sys.executable, "-c", "pass"], timeout=5).returncode == 0


def test_stdin_stderr_and_caps() -> None:
    runner = ProcessRunner()
    echo = runner.run(
        [
            sys.executable,
            "-c",
            "import sys; d = sys.stdin.read(); print(d[::-1]); sys.stderr.write('e' * 10000)",
        ],
        input=b"abc" * 100_000,
        timeout=10,
        max_stderr_bytes=100,
    )
    assert echo.stdout == b"cba" * 100_000 + b"\n"
    assert echo.stderr == b"e" * 100
    flood = runner.run(
        [sys.executable, "-c", "import sys\nwhile True: sys.stdout.write('x' * 4096)"],
        timeout=10,
        max_output_bytes=10_000,
    )
    assert flood.output_overflow
    assert len(flood.stdout) == 10_000
    assert not flood.timed_out


def test_missing_program_raises_oserror() -> None:
    with pytest.raises(FileNotFoundError):
        ProcessRunner().run(["/nonexistent/program"], timeout=1)
    assert ProcessRunner().running == 0
