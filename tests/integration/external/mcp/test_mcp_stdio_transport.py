"""The stdio transport on its own: oversized lines, garbage, and process-group cleanup."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

pytest.importorskip("mcp")

from tools.external.mcp._stdio import LineTooLongError, stdio_transport

pytestmark = pytest.mark.mcp

FLOOD = """
import sys, time
sys.stdout.write("not json\\n")
sys.stdout.write("x" * 5000)
sys.stdout.flush()
time.sleep(600)
"""

POLITE_PARENT = """
import subprocess, sys
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
open(sys.argv[1], "w").write(str(child.pid))
sys.stdin.read()  # exit politely as soon as stdin closes, leaving the child behind
"""


def test_oversized_line_ends_the_connection(tmp_path: Path, gone: Callable[[int], bool]) -> None:
    script = tmp_path / "flood.py"
    script.write_text(FLOOD)
    pids: list[int] = []
    received: list[object] = []

    async def main() -> None:
        async with stdio_transport([sys.executable, str(script)], on_spawn=pids.append, max_line_bytes=1000) as (
            read,
            _write,
        ):
            with anyio.fail_after(30):
                async for item in read:
                    received.append(item)

    anyio.run(main)

    assert len(received) == 2
    assert isinstance(received[0], ValueError)  # "not json": handed over, not fatal
    assert isinstance(received[1], LineTooLongError)
    assert gone(pids[0])


def test_children_of_a_polite_server_are_killed_too(tmp_path: Path, gone: Callable[[int], bool]) -> None:
    script = tmp_path / "parent.py"
    script.write_text(POLITE_PARENT)
    pid_file = tmp_path / "child.pid"
    pids: list[int] = []

    async def main() -> None:
        async with stdio_transport([sys.executable, str(script), str(pid_file)], on_spawn=pids.append):
            with anyio.fail_after(30):
                while not pid_file.exists() or not pid_file.read_text():
                    await anyio.sleep(0.02)

    anyio.run(main)

    assert gone(pids[0])
    assert gone(int(pid_file.read_text()))


def test_a_missing_program_raises_oserror(tmp_path: Path) -> None:
    async def main() -> None:
        async with stdio_transport([str(tmp_path / "nothing-here")]):
            pass  # pragma: no cover - never entered

    with pytest.raises(OSError):
        anyio.run(main)
