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


def test_the_offline_model_cannot_implement_so_the_run_is_rejected_honestly(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    env = {"TOOLDECK_DATA_DIR": str(tmp_path / "data")}
    code, out, _ = run(["--pipeline", "fix add", "--workspace", str(workspace), "--max-cycles", "1", "--json"], env)
    assert code == 6  # rejected: never an approval by default
    pipeline_run = json.loads(out)
    assert pipeline_run["status"] == "rejected"
    assert pipeline_run["verdicts"][0]["decision"] == "REJECT"
    assert (workspace / "calc.py").read_text() == "def add(a, b):\n    return a - b\n"  # nothing changed


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


def test_without_a_terminal_a_held_call_pauses_the_pipeline_and_resume_finishes_it(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    workspace = _workspace(tmp_path / "ws")
    env = {
        "TOOLDECK_DATA_DIR": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "HOME": str(tmp_path / "home"),
        "TOOLDECK_BASE_URL": model_server.base_url,
    }
    _say(model_server, _edit_call(), {"content": "Fixed add()."}, {"content": "The tests cover it."})
    _say(model_server, {"content": "VERDICT: APPROVE"})
    code, out, err = run(["--pipeline", "fix add", "--workspace", str(workspace)], env)  # default level: medium
    assert code == 5, err
    assert "Waiting for approval: the coder step (cycle 1) holds 1 tool call(s)" in out
    assert "e1: edit " in out and "risk moderate" in out
    saved = tmp_path / "data" / "paused"
    (state_file,) = saved.iterdir()
    assert f"--resume {state_file} --approve-call e1@" in out
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


def test_an_edited_pipeline_state_runs_nothing(tmp_path: Path, model_server: ScriptedServer) -> None:
    workspace = _workspace(tmp_path / "ws")
    env = {
        "TOOLDECK_DATA_DIR": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "HOME": str(tmp_path / "home"),
        "TOOLDECK_BASE_URL": model_server.base_url,
    }
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
