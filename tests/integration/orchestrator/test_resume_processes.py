"""Exactly once across processes: several processes resume the same saved state at the same
moment; with a FileClaimStore on one ledger, the approved call runs once and every other
resume is refused before it runs anything."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.orchestrator.workers.resume_worker import build_graph

WORKER = Path(__file__).parent / "workers" / "resume_worker.py"
REPO_ROOT = Path(__file__).resolve().parents[3]
PROCESSES = 4


@pytest.fixture
def spawned() -> Iterator[list[subprocess.Popen[str]]]:
    processes: list[subprocess.Popen[str]] = []
    yield processes
    for process in processes:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=30)
        if process.stdout is not None:
            process.stdout.close()


def test_processes_resuming_the_same_state_at_once_run_the_call_once(
    tmp_path: Path, spawned: list[subprocess.Popen[str]]
) -> None:
    log, claims, go, state_file, key = (
        tmp_path / name for name in ("log.txt", "claims.json", "go", "state.json", "state.key")
    )
    paused = build_graph(log, key).run("wipe the scratch directory")
    assert paused.status == "awaiting_approval" and not log.exists()
    state_file.write_text(json.dumps(paused.state))
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    for _ in range(PROCESSES):
        spawned.append(
            subprocess.Popen(
                [sys.executable, str(WORKER), str(state_file), str(claims), str(log), str(go), str(key)],
                env=env,
                stdout=subprocess.PIPE,
                text=True,
                start_new_session=True,
            )
        )
    for process in spawned:  # every process has read the state and waits at the barrier
        assert process.stdout is not None and process.stdout.readline() == "ready\n"
    go.touch()
    outputs = []
    for process in spawned:
        out, _ = process.communicate(timeout=120)
        assert process.returncode == 0
        outputs.append(out.strip())
    assert sorted(o.split(" ", 1)[0] for o in outputs) == ["refused"] * (PROCESSES - 1) + ["resumed"]
    assert "resumed completed" in outputs
    assert all("were resumed before" in o for o in outputs if o.startswith("refused"))
    assert log.read_text() == "wiped scratch\n"
