"""``python -m orchestrator --pipeline``: wired to the settings, the exit codes and the trace."""

from __future__ import annotations

import io
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from orchestrator.cli import main
from tests.integration.orchestrator.conftest import ScriptedServer


def _workspace(tmp_path: Path) -> Path:
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_calc.py").write_text(
        "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
    )
    return tmp_path


def run(argv: list[str], env: dict[str, str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(argv, env=env, stdin=io.StringIO(""), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("model", [[], ["--model", "test"], ["--model", "smollm2"]])
def test_without_a_real_model_the_pipeline_refuses_to_start(tmp_path: Path, model: list[str]) -> None:
    """Issue 21 item 4: it ran three empty cycles with the offline model and exited "rejected"."""
    workspace = _workspace(tmp_path)
    env = {"TOOLDECK_DATA_DIR": str(tmp_path / "data")}
    code, out, err = run(["--pipeline", "fix add", "--workspace", str(workspace), "--max-cycles", "1", *model], env)
    assert (code, out) == (2, "")
    assert err.startswith("error: configuration: --pipeline needs a real model")
    assert "pass --base-url URL and --model NAME" in err
    assert (workspace / "calc.py").read_text() == "def add(a, b):\n    return a - b\n"  # nothing ran
    assert not (tmp_path / "data" / "runs").exists()


def test_subagent_budget_is_a_setting_with_its_range_named(tmp_path: Path) -> None:
    workspace = str(_workspace(tmp_path))
    code, _, err = run(["--pipeline", "x", "--workspace", workspace, "--max-subagent-iterations", "11"], {})
    assert code == 2 and "--max-subagent-iterations" in err and "from 1 to 10" in err
    code, _, err = run(["--pipeline", "x", "--workspace", workspace], {"TOOLDECK_MAX_SUBAGENT_ITERATIONS": "zero"})
    assert code == 2 and "TOOLDECK_MAX_SUBAGENT_ITERATIONS" in err
    code, _, err = run(["--pipeline", "x", "a question too"], {})
    assert code == 2 and "pass no question" in err
    code, _, err = run(["--pipeline", "x", "--workspace", workspace, "--resume", "paused.json"], {})
    assert code == 2 and "pass no --pipeline with it" in err


@pytest.fixture
def model_server() -> Iterator[ScriptedServer]:
    server = ScriptedServer()
    thread = threading.Thread(target=server.httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.httpd.shutdown()
        server.httpd.server_close()
        thread.join(timeout=5)


def _say(server: ScriptedServer, *turns: dict[str, Any]) -> None:
    for turn in turns:
        server.add({"choices": [{"index": 0, "message": {"role": "assistant", **turn}, "finish_reason": "stop"}]})


def _edit_call() -> dict[str, Any]:
    arguments = json.dumps({"path": "calc.py", "old_string": "return a - b", "new_string": "return a + b"})
    return {
        "content": None,
        "tool_calls": [{"id": "e1", "type": "function", "function": {"name": "edit", "arguments": arguments}}],
    }


def _env(tmp_path: Path, server: ScriptedServer) -> dict[str, str]:
    """A private data and configuration directory; the scripted server as the model."""
    return {
        "TOOLDECK_DATA_DIR": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "HOME": str(tmp_path / "home"),
        "TOOLDECK_BASE_URL": server.base_url,
    }


def _fix_add_approved(server: ScriptedServer) -> None:
    """The coder edits calc.py (a held call at medium), then every step answers; the reviewer approves."""
    _say(server, _edit_call(), {"content": "Fixed add()."}, {"content": "The tests cover it."})
    _say(server, {"content": "VERDICT: APPROVE"})


def test_without_a_terminal_a_held_call_pauses_the_pipeline_and_resume_finishes_it(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    workspace = _workspace(tmp_path / "ws")
    env = _env(tmp_path, model_server)
    _fix_add_approved(model_server)
    code, out, err = run(["--pipeline", "fix add", "--workspace", str(workspace)], env)  # default level: medium
    assert code == 5, err
    assert "Waiting for approval: the coder step (cycle 1) holds 1 tool call(s)" in out
    assert "e1: edit " in out and "risk moderate" in out
    saved = tmp_path / "data" / "paused"
    (state_file,) = saved.iterdir()
    assert f"--resume {state_file.stem} --approve-call e1@" in out  # the run id; the file works too:
    assert (workspace / "calc.py").read_text() == "def add(a, b):\n    return a - b\n"  # nothing ran
    assert len(model_server.requests) == 1  # and no other step was asked

    code, out, err = run(["--resume", str(state_file), "--approve-call", "e1", "--json"], env)
    assert code == 0, err + out
    done = json.loads(out)
    assert done["status"] == "approved" and done["validation"]["summary"] == "passed"
    assert [s["agent"] for s in done["steps"]] == ["coder", "test-writer", "reviewer"]
    assert (workspace / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert not state_file.exists()  # the finished run's saved state is removed

    code, _, err = run(["--resume", str(state_file), "--approve-call", "e1"], env)
    assert code == 2 and "cannot be read" in err


def test_a_paused_pipeline_is_recorded_and_resumed_by_its_run_id(tmp_path: Path, model_server: ScriptedServer) -> None:
    """The pipeline's pause (approvals) and its run record (agentux) meet: the run is listed as
    paused with the held call, the printed run id resumes it, and the same record moves on."""
    from tools.runs import FileRunStore

    workspace = _workspace(tmp_path / "ws")
    env = _env(tmp_path, model_server)
    _fix_add_approved(model_server)
    code, out, err = run(["--pipeline", "fix add", "--workspace", str(workspace)], env)
    assert code == 5, err
    store = FileRunStore(tmp_path / "data" / "runs")
    (paused,) = store.list(status="paused")
    assert (paused.kind, paused.question, paused.workspace) == ("pipeline", "fix add", str(workspace.resolve()))
    assert [(a.call_id, a.tool, a.decision) for a in paused.approvals] == [("e1", "edit", "pending")]
    state_file = tmp_path / "data" / "paused" / f"{paused.id}.json"
    assert paused.state_file == str(state_file) and state_file.exists()
    assert f"run {paused.id} recorded: tooldeck runs show {paused.id}" in out
    assert f"python -m orchestrator --resume {paused.id} --approve-call e1@" in out
    assert f"(--resume {state_file} works as well as the run id)" in out

    code, out, err = run(["--resume", paused.id[:12], "--approve-call", "e1"], env)  # the id's first characters
    assert code == 0, err + out
    (record,) = store.list()
    assert (record.id, record.status, record.started_at) == (paused.id, "approved", paused.started_at)
    assert [(a.call_id, a.decision, a.decided_by) for a in record.approvals] == [("e1", "approved", "resume")]
    assert [(s.cycle, s.agent) for s in record.steps] == [(1, "coder"), (1, "test-writer"), (1, "reviewer")]
    assert record.state_file is None and not state_file.exists()
    assert (workspace / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"

    code, _, err = run(["--resume", paused.id, "--approve-call", "e1"], env)  # nothing is paused under it now
    assert code == 2 and f"--resume {paused.id}: no paused run with that id has a saved state" in err


def test_an_edited_pipeline_state_runs_nothing(tmp_path: Path, model_server: ScriptedServer) -> None:
    workspace = _workspace(tmp_path / "ws")
    env = _env(tmp_path, model_server)
    _say(model_server, _edit_call())
    code, out, _ = run(["--pipeline", "fix add", "--workspace", str(workspace), "--json"], env)
    assert code == 5
    state = json.loads(out)["state"]
    state["run"]["workspace"] = str(tmp_path)  # point the approval at another directory
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(state))
    code, _, err = run(["--resume", str(edited), "--approve-call", "e1"], env)
    assert code == 2 and "edited after it was saved" in err
    assert len(model_server.requests) == 1
