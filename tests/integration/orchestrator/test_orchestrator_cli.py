"""`python -m orchestrator`: real subprocesses, real tools, a real local HTTP model server."""

from __future__ import annotations

import io
import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from orchestrator.cli import main

QUESTION = "What is 12*(3+4)? Remember that my dentist is Dr. Lee."
SECRET = "sk-cli-SECRET-42"


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """A fresh-install environment: no keys, no network, a private data directory."""
    return {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path / "home"),
        "TOOLDECK_DATA_DIR": str(tmp_path / "data"),
        "TOOLDECK_CONTEXT_URL": f"http://127.0.0.1:{closed_port()}",
        "PYTHONPATH": str(Path(__file__).resolve().parents[3]),
    }


def run_cli(env: dict[str, str], *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "orchestrator", *args],
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def run_main(env: dict[str, str], *args: str) -> tuple[int, str, str]:
    stdout, stderr = io.StringIO(), io.StringIO()
    code = main(list(args), env=env, stdin=io.StringIO(""), stdout=stdout, stderr=stderr)
    return code, stdout.getvalue(), stderr.getvalue()


def completion(message: dict[str, Any]) -> dict[str, Any]:
    return {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}


def test_example_question_offline_prints_answer_and_trace(env: dict[str, str], tmp_path: Path) -> None:
    result = run_cli(env, QUESTION)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[:2] == ["12 * (3 + 4) = 84.", "Noted: your dentist is Dr. Lee."]
    assert lines[3].startswith("trace: offline model (embedded, deterministic); 2 model turn(s)")
    assert lines[4].startswith('  1. math_solver {"expression": "12*(3+4)", "operation": "evaluate"} -> success ')
    assert lines[5].startswith('  2. store_knowledge {"text": "my dentist is Dr. Lee"} -> success ')
    assert all(line.endswith(" ms") for line in lines[4:6])

    recall = run_cli(env, "--no-trace", "Who", "is", "my", "dentist?")  # a new process
    assert recall.returncode == 0, recall.stderr
    assert recall.stdout == "From your saved notes: your dentist is Dr. Lee.\n"


def test_json_prints_the_whole_run(env: dict[str, str]) -> None:
    result = run_cli({**env, "OPENAI_API_KEY": SECRET}, "--json", "-", stdin="What is 2^10?")
    assert result.returncode == 0, result.stderr
    run = json.loads(result.stdout)
    assert run["answer"] == "2^10 = 1024."
    assert run["stop_reason"] == "final_answer"
    assert run["iterations"] == 2
    assert [r["name"] for r in run["tool_results"]] == ["math_solver"]
    assert set(run["timings"]) == {"total_ms", "model_ms", "tools_ms"}
    assert [m["role"] for m in run["messages"]] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
    ]
    assert run["settings"]["api_key_set"] is True
    assert SECRET not in result.stdout


def test_help_has_examples_and_exit_codes(env: dict[str, str]) -> None:
    result = run_cli(env, "--help")
    assert result.returncode == 0
    assert "examples:" in result.stdout
    assert "exit codes:\n  0    the model gave a final answer" in result.stdout
    assert "--api-key-env NAME" in result.stdout


def test_configuration_errors_name_the_setting_and_fix(env: dict[str, str], tmp_path: Path) -> None:
    code, _, err = run_main({**env, "TOOLDECK_MAX_ITERATIONS": "ten"}, "hi")
    assert code == 2
    assert "environment variable TOOLDECK_MAX_ITERATIONS='ten': Input should be a valid integer" in err
    assert "a whole number from 1 to 100 (default 10), or unset it" in err
    assert "Traceback" not in err
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    code, _, err = run_main(env, "--data-dir", str(blocker / "sub"), "hi")
    assert code == 2
    assert "cannot use the data directory" in err
    assert "--data-dir" in err
    code, _, err = run_main(env, "--base-url", "localhost:1", "hi")
    assert code == 2
    assert "--base-url" in err
    code, _, err = run_main(env, "   ")
    assert code == 2


def test_model_endpoint_error_exit_3_without_leaking_the_key(env: dict[str, str], scripted_server: Any) -> None:
    scripted_server.add({"error": {"message": "Incorrect API key provided"}}, status=401)
    code, out, err = run_main({**env, "OPENAI_API_KEY": SECRET}, "--base-url", scripted_server.base_url, "hi")
    assert code == 3
    assert out == ""
    assert f"{scripted_server.base_url}/chat/completions answered HTTP 401" in err
    assert "Incorrect API key provided" in err
    assert SECRET not in err
    assert scripted_server.requests[0].headers["Authorization"] == f"Bearer {SECRET}"


def test_openai_compatible_endpoint_drives_real_tools(env: dict[str, str], scripted_server: Any) -> None:
    call = {
        "id": "call_x",
        "type": "function",
        "function": {"name": "math_solver", "arguments": '{"expression": "2+3"}'},
    }
    scripted_server.add(completion({"role": "assistant", "content": None, "tool_calls": [call]}))
    scripted_server.add(completion({"role": "assistant", "content": "2+3 is 5."}))
    code, out, err = run_main(
        {**env, "MY_KEY": SECRET},
        "--base-url",
        scripted_server.base_url,
        "--model",
        "local-model",
        "--api-key-env",
        "MY_KEY",
        "What is 2+3?",
    )
    assert code == 0, err
    assert out.splitlines()[0] == "2+3 is 5."
    assert '1. math_solver {"expression": "2+3"} -> success' in out
    first, second = scripted_server.requests
    assert first.headers["Authorization"] == f"Bearer {SECRET}"
    assert first.body["model"] == "local-model"
    names = [t["function"]["name"] for t in first.body["tools"]]
    assert {"math_solver", "store_knowledge", "user_context", "module_pipeline"} <= set(names)
    # Old names stay callable for stored conversations but cost the prompt nothing.
    assert not {"get_daily_briefing", "web_search", "build_module"} & set(names)
    tool_message = second.body["messages"][-1]
    assert tool_message["role"] == "tool"
    assert tool_message["tool_call_id"] == "call_x"
    assert json.loads(tool_message["content"])["data"]["result"] == "5"


def test_budget_exhaustion_exit_4_with_a_clear_message(env: dict[str, str], scripted_server: Any) -> None:
    call = {"id": "c", "type": "function", "function": {"name": "nope", "arguments": "{}"}}
    scripted_server.add(completion({"role": "assistant", "content": None, "tool_calls": [call]}))
    code, out, _ = run_main(env, "--base-url", scripted_server.base_url, "--max-iterations", "2", "loop")
    assert code == 4
    assert out.startswith("I stopped before reaching a final answer")
    assert "nope -> unknown_tool" in out
    assert len(scripted_server.requests) == 2
