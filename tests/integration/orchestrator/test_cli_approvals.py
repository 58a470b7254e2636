"""``python -m orchestrator`` with approvals, as real processes: without a level nothing is
gated; with one, a run without a terminal pauses (exit 5, the state saved and printed with
--json), and ``--resume FILE --approve-call ID`` / ``--deny-call ID`` finish it from a shell,
once. The operator declared ``store_knowledge`` moderate (see ``_held_notes``), so that it is
the call held at freedom medium."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.integration.orchestrator._held_notes import held_notes_env
from tools.approvals import arguments_hash

QUESTION = "What is 12*(3+4)? Remember that my dentist is Dr. Lee."
REPO_ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """A fresh install: no keys, no network, private data and config directories."""
    return {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path / "home"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "TOOLDECK_DATA_DIR": str(tmp_path / "data"),
        "TOOLDECK_CONTEXT_URL": "http://127.0.0.1:9",
        "PYTHONPATH": str(REPO_ROOT),
        **held_notes_env(tmp_path / "operator"),
    }


def cli(env: dict[str, str], *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "orchestrator", *args],
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def pause(env: dict[str, str], tmp_path: Path, *flags: str) -> tuple[Path, dict[str, Any]]:
    """Ask the quickstart question at freedom medium without a terminal; the --json output."""
    result = cli(env, "--freedom", "medium", "--json", *flags, QUESTION)
    assert result.returncode == 5, result.stderr
    out: dict[str, Any] = json.loads(result.stdout)
    path = tmp_path / "paused.json"
    path.write_text(result.stdout)
    return path, out


def recall(env: dict[str, str]) -> str:
    result = cli(env, "--no-trace", "Who is my dentist?")
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_without_a_level_the_quickstart_runs_unattended(env: dict[str, str]) -> None:
    result = cli(env, QUESTION)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("12 * (3 + 4) = 84.\nNoted: your dentist is Dr. Lee.\n")


def test_a_paused_run_prints_the_held_call_and_how_to_continue(env: dict[str, str], tmp_path: Path) -> None:
    result = cli(env, "--freedom", "medium", QUESTION)
    assert result.returncode == 5, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("Waiting for approval: 1 tool call(s) need a person's decision (run run_")
    assert lines[1].endswith(': store_knowledge {"text": "my dentist is Dr. Lee"}')
    assert lines[2].strip().startswith("risk moderate: moderate tools need a person's approval at freedom level medium")
    assert lines[3].strip().startswith("arguments hash ")
    saved = Path(lines[4].removeprefix("State saved to ").removesuffix(". Continue with:"))
    assert saved.parent == tmp_path / "data" / "paused"
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600
    assert lines[5].strip().startswith(f"python -m orchestrator --resume {saved} --approve-call ")
    assert "math_solver" in result.stdout and "-> success" in result.stdout  # the safe call ran
    assert "store_knowledge" not in result.stdout.split("trace:")[1]  # the held one did not


def test_the_round_trip_from_a_shell(env: dict[str, str], tmp_path: Path) -> None:
    path, out = pause(env, tmp_path)
    assert out["status"] == "awaiting_approval"
    (pending,) = out["pending_approvals"]
    assert pending["tool"] == "store_knowledge" and pending["arguments"] == {"text": "my dentist is Dr. Lee"}
    assert out["state"]["pending_approvals"] == [pending]
    assert Path(out["state_file"]).exists()
    call_id = pending["call_id"]

    done = cli(env, "--resume", str(path), "--approve-call", f"{call_id}@{pending['arguments_hash'][:12]}")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("12 * (3 + 4) = 84.\nNoted: your dentist is Dr. Lee.\n")
    assert not Path(out["state_file"]).exists()  # the finished run's saved state is removed
    assert recall(env) == "From your saved notes: your dentist is Dr. Lee.\n"

    again = cli(env, "--resume", str(path), "--approve-call", call_id)  # the same state, once more
    assert again.returncode == 2
    assert f"error: resume: call(s) '{call_id}' of run {out['run_id']} were resumed before" in again.stderr
    assert recall(env).count("Dr. Lee") == 1


def test_a_denied_call_is_not_run_and_the_model_says_so(env: dict[str, str], tmp_path: Path) -> None:
    path, out = pause(env, tmp_path)
    call_id = out["pending_approvals"][0]["call_id"]
    done = cli(env, "--resume", str(path), "--deny-call", call_id, "--deny-message", "not today", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    record = result["tool_results"][-1]
    assert (record["name"], record["error_type"]) == ("store_knowledge", "permission_denied")
    assert "not today" in json.dumps(result["messages"])
    assert "Dr. Lee" not in recall(env)


def test_arguments_changed_after_they_were_shown_are_refused(env: dict[str, str], tmp_path: Path) -> None:
    path, out = pause(env, tmp_path)
    pending = out["pending_approvals"][0]
    shown = f"{pending['call_id']}@{pending['arguments_hash'][:12]}"
    wrong = cli(env, "--resume", str(path), "--approve-call", f"{pending['call_id']}@{'0' * 12}")
    assert wrong.returncode == 2
    assert "they changed after you looked, so nothing was run" in wrong.stderr

    state = out["state"]  # edited by hand after the person looked
    (held,) = [c for c in state["messages"][-1]["tool_calls"] if c["id"] == pending["call_id"]]
    held["function"]["arguments"] = json.dumps({"text": "my dentist is Dr. Evil"})
    path.write_text(json.dumps(state))
    tampered = cli(env, "--resume", str(path), "--approve-call", shown)
    assert tampered.returncode == 2
    assert "do not hash to the arguments_hash shown" in tampered.stderr

    state["pending_approvals"][0]["arguments"] = {"text": "my dentist is Dr. Evil"}  # every hash made to match
    state["pending_approvals"][0]["arguments_hash"] = arguments_hash({"text": "my dentist is Dr. Evil"})
    path.write_text(json.dumps(state))
    consistent = cli(env, "--resume", str(path), "--approve-call", shown)
    assert consistent.returncode == 2
    assert "they changed after you looked" in consistent.stderr
    assert "Dr." not in recall(env)


def test_the_stored_level_applies_and_the_environment_overrides_it(env: dict[str, str], tmp_path: Path) -> None:
    config = tmp_path / "config" / "tooldeck"
    config.mkdir(parents=True)
    (config / "approvals.json").write_text(json.dumps({"version": 1, "freedom": "medium", "approvals": {}}))
    assert cli(env, QUESTION).returncode == 5
    assert cli({**env, "TOOLDECK_FREEDOM": "high"}, QUESTION).returncode == 0


def test_approve_deny_refuses_instead_of_pausing(env: dict[str, str]) -> None:
    result = cli(env, "--freedom", "medium", "--approve", "deny", QUESTION)
    assert result.returncode == 0, result.stderr
    assert "store_knowledge" in result.stdout and "permission_denied" in result.stdout


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["--resume", "missing.json", "--approve-call", "x"], "error: resume: --resume missing.json: cannot be read"),
        (["--approve-call", "x", "question"], "error: usage: --approve-call and --deny-call need --resume FILE"),
        (["--resume", "state.json", "question"], "error: usage: --resume continues a paused run"),
        (["--freedom", "max", "question"], "invalid choice: 'max'"),
    ],
)
def test_usage_errors(env: dict[str, str], args: list[str], error: str) -> None:
    result = cli(env, *args)
    assert result.returncode == 2
    assert error in result.stderr


def test_resume_errors_name_the_problem(env: dict[str, str], tmp_path: Path) -> None:
    path, out = pause(env, tmp_path)
    call_id = out["pending_approvals"][0]["call_id"]
    no_decision = cli(env, "--resume", str(path))
    assert no_decision.returncode == 2
    assert f"no decisions given: decide each held call ('{call_id}')" in no_decision.stderr
    both = cli(env, "--resume", str(path), "--approve-call", call_id, "--deny-call", call_id)
    assert both.returncode == 2 and "is both approved and denied" in both.stderr
    unknown = cli(env, "--resume", str(path), "--approve-call", "call_nope")
    assert unknown.returncode == 2 and "has no held call 'call_nope'" in unknown.stderr
    (tmp_path / "junk.json").write_text("[" * 50_000)
    junk = cli(env, "--resume", str(tmp_path / "junk.json"), "--approve-call", call_id)
    assert junk.returncode == 2 and "the paused run's state is not JSON" in junk.stderr
    from_stdin = cli(env, "--resume", "-", "--approve-call", call_id, stdin=path.read_text())
    assert from_stdin.returncode == 0, from_stdin.stderr  # none of the refused resumes claimed it


def test_two_processes_resuming_the_same_file_run_the_call_once(env: dict[str, str], tmp_path: Path) -> None:
    path, out = pause(env, tmp_path)
    call_id = out["pending_approvals"][0]["call_id"]
    command = [sys.executable, "-m", "orchestrator", "--resume", str(path), "--approve-call", call_id, "--json"]
    processes = [
        subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for _ in range(2)
    ]
    codes = []
    for process in processes:
        process.communicate(timeout=120)
        codes.append(process.returncode)
    assert sorted(codes) == [0, 2]
    assert recall(env).count("Dr. Lee") == 1


def test_a_state_that_cannot_be_saved_is_printed(env: dict[str, str], tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "paused").write_text("a file where the directory should be")
    result = cli(env, "--freedom", "medium", "--no-trace", QUESTION)
    assert result.returncode == 5
    assert "cannot write" in result.stderr
    state = result.stdout.splitlines()[-1]
    resumed = cli(
        env, "--resume", "-", "--approve-call", json.loads(state)["pending_approvals"][0]["call_id"], stdin=state
    )
    assert resumed.returncode == 0, resumed.stderr
