"""Exactly once across hosts: 8 processes on each of 2 "hosts" (separate data directories,
so no file is shared between them) resume the same saved state at the same moment; with the
approvals in PostgreSQL, the graphs' default claim store is the same database, and the
approved call runs once. The file default does the same for the processes of one host."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.postgres.workers.host_resume import build_graph

from .backends import database_url_for

WORKER = Path(__file__).parent / "workers" / "host_resume.py"
REPO_ROOT = Path(__file__).resolve().parents[3]
PER_HOST = 8


@pytest.fixture
def spawned() -> Iterator[list[subprocess.Popen[str]]]:
    processes: list[subprocess.Popen[str]] = []
    yield processes
    for process in processes:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=60)
        if process.stdout is not None:
            process.stdout.close()


@pytest.mark.parametrize(("backend", "hosts"), [("postgres", 2), ("file", 1)])
def test_processes_on_several_hosts_resuming_one_state_run_the_call_once(
    backend: str, hosts: int, request: pytest.FixtureRequest, tmp_path: Path, spawned: list[subprocess.Popen[str]]
) -> None:
    url = database_url_for(request) if backend == "postgres" else None
    log, go, state_file = tmp_path / "log.txt", tmp_path / "go", tmp_path / "state.json"
    host_envs = []
    for host in range(hosts):
        home = tmp_path / f"host{host}"
        host_envs.append(
            {**os.environ, "PYTHONPATH": str(REPO_ROOT), "HOME": str(home), "XDG_CONFIG_HOME": str(home / "config")}
        )
    paused = build_graph(log, url, host_envs[0]).run("wipe the scratch directory")
    assert paused.status == "awaiting_approval" and not log.exists()
    state_file.write_text(json.dumps(paused.state))
    args = [str(state_file), str(log), str(go), *([url] if url else [])]
    for env in host_envs:
        for _ in range(PER_HOST):
            spawned.append(
                subprocess.Popen(
                    [sys.executable, str(WORKER), *args],
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
        out, _ = process.communicate(timeout=180)
        assert process.returncode == 0
        outputs.append(out.strip())
    verdicts = sorted(o.split(" ", 1)[0] for o in outputs)
    assert verdicts == ["refused"] * (hosts * PER_HOST - 1) + ["resumed"]
    assert "resumed completed" in outputs
    assert all("were resumed before" in o for o in outputs if o.startswith("refused"))
    assert len(log.read_text().splitlines()) == 1
