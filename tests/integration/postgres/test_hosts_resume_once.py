"""Exactly once across hosts: 8 processes on each of 2 "hosts" (separate data and config
directories, so no file is shared between them) resume the same saved state at the same
moment; with the approvals in PostgreSQL, the graphs' default claim store is the same
database, and with one state key for both (``TOOLDECK_STATE_KEY_FILE``, a copy on each host)
each verifies the state the other's signer made: the approved call runs once. Processes of a
third host with another key are refused before they claim anything. The file default does
the same for the processes of one host (its user's own key)."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.postgres.workers.host_resume import build_graph
from tools.approvals import PostgresApprovalsStore, open_approvals_store

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
    key = secrets.token_hex(32)
    host_envs = [host_env(tmp_path, f"host{host}", key if url else None) for host in range(hosts)]
    intruders = [host_env(tmp_path, "intruder", secrets.token_hex(32))] if url else []
    store = open_approvals_store(host_envs[0], database_url=url)
    paused = build_graph(log, url, host_envs[0], store).run("wipe the scratch directory")
    assert paused.status == "awaiting_approval" and not log.exists()
    if isinstance(store, PostgresApprovalsStore):
        store.close()
    state_file.write_text(json.dumps(paused.state))
    args = [str(state_file), str(log), str(go), *([url] if url else [])]
    for env in host_envs + intruders:
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
    ours, theirs = outputs[: hosts * PER_HOST], outputs[hosts * PER_HOST :]
    assert sorted(o.split(" ", 1)[0] for o in ours) == ["refused"] * (hosts * PER_HOST - 1) + ["resumed"]
    assert "resumed completed" in ours
    assert all("were resumed before" in o for o in ours if o.startswith("refused"))
    assert all(o.startswith("refused") and "signed with another key" in o for o in theirs)
    assert len(theirs) == len(intruders) * PER_HOST
    assert len(log.read_text().splitlines()) == 1


def host_env(tmp_path: Path, name: str, key: str | None) -> dict[str, str]:
    """One host: its own home and config directory; with ``key``, a copy of it (mode 0600) named
    by ``TOOLDECK_STATE_KEY_FILE``, else the user's own key in the config directory."""
    home = tmp_path / name
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "HOME": str(home), "XDG_CONFIG_HOME": str(home / "config")}
    env.pop("TOOLDECK_STATE_KEY_FILE", None)
    if key is not None:
        copy = home / "etc" / "state.key"
        copy.parent.mkdir(parents=True)
        copy.write_text(key + "\n")
        copy.chmod(0o600)
        env["TOOLDECK_STATE_KEY_FILE"] = str(copy)
    return env
