"""Two replicas of ``python -m orchestrator`` on one PostgreSQL, as real processes with their
own data and config directories ("hosts") and one state key (``TOOLDECK_STATE_KEY_FILE``, a
copy on each): what one remembers the other recalls, a paused run saved by one is resumed
once whichever replica continues it (a replica with another key is refused), the runs one
records the other lists and shows, and the approvals and the level stored through ``tooldeck``
reach both."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

QUESTION = "What is 12*(3+4)? Remember that my dentist is Dr. Lee."
KEY = secrets.token_hex(32)
REPO_ROOT = Path(__file__).resolve().parents[3]


def replica(tmp_path: Path, name: str, database_url: str, key: str = KEY) -> dict[str, str]:
    """The environment of one replica: its own directories, the shared database, its copy of
    the state key (mode 0600, as the operator puts it on each host)."""
    home = tmp_path / name
    key_file = home / "etc" / "state.key"
    key_file.parent.mkdir(parents=True)
    key_file.write_text(key + "\n")
    key_file.chmod(0o600)
    return {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / "config"),
        "TOOLDECK_DATA_DIR": str(home / "data"),
        "TOOLDECK_CONTEXT_URL": "http://127.0.0.1:9",
        "TOOLDECK_DATABASE_URL": database_url,
        "TOOLDECK_STATE_KEY_FILE": str(key_file),
        "PYTHONPATH": str(REPO_ROOT),
    }


def run(env: dict[str, str], *args: str, module: str = "orchestrator") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", module, *args], env=env, capture_output=True, text=True, timeout=180, check=False
    )


@pytest.fixture
def replicas(tmp_path: Path, database_url: str) -> tuple[dict[str, str], dict[str, str]]:
    return replica(tmp_path, "a", database_url), replica(tmp_path, "b", database_url)


def test_what_one_replica_remembers_the_other_recalls(replicas: tuple[dict[str, str], dict[str, str]]) -> None:
    first, second = replicas
    told = run(first, QUESTION)
    assert told.returncode == 0, told.stderr
    recalled = run(second, "--no-trace", "Who is my dentist?")
    assert recalled.returncode == 0, recalled.stderr
    assert "Dr. Lee" in recalled.stdout
    assert not (Path(second["TOOLDECK_DATA_DIR"]) / "knowledge.sqlite3").exists()


def test_a_paused_run_is_resumed_once_across_replicas(
    replicas: tuple[dict[str, str], dict[str, str]], tmp_path: Path, database_url: str
) -> None:
    first, second = replicas
    paused = run(first, "--freedom", "low", "--json", QUESTION)  # low: both calls wait for a person
    assert paused.returncode == 5, paused.stderr
    state = tmp_path / "paused.json"
    state.write_text(paused.stdout)
    calls = [held["call_id"] for held in json.loads(paused.stdout)["pending_approvals"]]
    approvals = [arg for call_id in calls for arg in ("--approve-call", call_id)]
    other = replica(tmp_path, "c", database_url, key=secrets.token_hex(32))  # a host with another key
    refused = run(other, "--freedom", "low", "--resume", str(state), *approvals)
    assert refused.returncode == 2 and "signed with another key" in refused.stderr
    resumed = run(second, "--freedom", "low", "--resume", str(state), *approvals)
    assert resumed.returncode == 0, resumed.stderr
    again = run(first, "--freedom", "low", "--resume", str(state), *approvals)
    assert again.returncode == 2
    assert "were resumed before" in again.stderr
    assert "Dr. Lee" in run(first, "--no-trace", "Who is my dentist?").stdout
    assert not (Path(first["XDG_CONFIG_HOME"]) / "tooldeck" / "state.key").exists()  # the shared key, not one's own


def test_the_level_and_approvals_set_with_tooldeck_reach_every_replica(
    replicas: tuple[dict[str, str], dict[str, str]],
) -> None:
    first, second = replicas
    configured = run(first, "configure", "freedom", "low", module="tools.cli")
    assert configured.returncode == 0, configured.stderr
    shown = run(second, "configure", "show", "--json", module="tools.cli")
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["freedom"] == "low"
    assert "postgresql://tooldeck_app@" in shown.stdout and "tooldeck_approvals" in shown.stdout
    held = run(second, "--json", "What is 2+3?")  # level low: even math waits for a person
    assert held.returncode == 5, held.stderr
    unset = run(second, "configure", "freedom", "unset", module="tools.cli")
    assert unset.returncode == 0, unset.stderr
    shown = run(first, "configure", "show", "--json", module="tools.cli")
    assert (json.loads(shown.stdout)["freedom"], json.loads(shown.stdout)["source"]) == ("medium", "default")
    assert json.loads(shown.stdout)["stored_freedom"] is None


def test_runs_recorded_by_one_replica_are_listed_and_shown_by_the_other(
    replicas: tuple[dict[str, str], dict[str, str]],
) -> None:
    first, second = replicas
    answered = run(first, "--json", "What is 2+3?")
    assert answered.returncode == 0, answered.stderr
    paused = run(first, "--freedom", "low", "--json", "What is 12*(3+4)?")
    assert paused.returncode == 5, paused.stderr
    listed = run(second, "runs", "list", "--json", module="tools.cli")
    assert listed.returncode == 0, listed.stderr
    runs = json.loads(listed.stdout)
    newest_first = [("What is 12*(3+4)?", "paused"), ("What is 2+3?", "answered")]
    assert [(r["question"], r["status"]) for r in runs] == newest_first
    only_paused = json.loads(run(second, "runs", "list", "--status", "paused", "--json", module="tools.cli").stdout)
    assert [r["id"] for r in only_paused] == [runs[0]["id"]]
    shown = run(second, "runs", "show", runs[1]["id"], "--json", module="tools.cli")
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["answer"] == "2 + 3 = 5."
    for name in ("a", "b"):  # nothing in either data directory: the records are in the database
        assert not (Path(first["HOME"]).parent / name / "data" / "runs").exists()
