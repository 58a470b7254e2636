"""Several processes write the approvals file at once (real processes, real file locks):
no approval is lost and the file stays valid JSON."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tools.approvals import ApprovalsStore

from .conftest import WORKTREE, base_env

WRITER = """
import sys
from tools.approvals import ApprovalsStore
store = ApprovalsStore(sys.argv[1])
worker, count = int(sys.argv[2]), int(sys.argv[3])
for j in range(count):
    store.approve(f"p{worker}_tool_{j}", f"{worker:x}{j:x}".rjust(64, "0"), risk="moderate")
    if j % 5 == 0:
        store.set_freedom(["low", "medium", "high"][j % 3])
"""


def test_eight_processes_approving_different_tools_lose_none(tmp_path: Path) -> None:
    path = tmp_path / "cfg" / "tooldeck" / "approvals.json"
    env = base_env(tmp_path / "home")
    count = 15
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(worker), str(count)], env=env, cwd=WORKTREE)
        for worker in range(8)
    ]
    for proc in procs:
        assert proc.wait(timeout=120) == 0
    approvals = ApprovalsStore(path).approvals()
    assert len(approvals) == 8 * count
    assert approvals["p7_tool_14"].version_hash == "7e".rjust(64, "0")
    json.loads(path.read_text())  # valid JSON, never torn
    assert not list(path.parent.glob(".approvals.json.*.tmp"))  # no temp files left behind


def test_eight_cli_processes_approving_at_once_lose_none(tmp_path: Path, project: Path) -> None:
    env = base_env(tmp_path / "home")
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "tools.cli", "approve", f"cli_tool_{i}", "--version-hash", f"{i:x}" * 64],
            env=env,
            cwd=project,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for i in range(8)
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    approvals = ApprovalsStore.from_env(env).approvals()
    assert sorted(approvals) == [f"cli_tool_{i}" for i in range(8)]
