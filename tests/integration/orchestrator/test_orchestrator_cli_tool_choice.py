"""``python -m orchestrator --tool-choice``: what each choice sends, turn by turn."""

from __future__ import annotations

import io
import os
import socket
from pathlib import Path
from typing import Any

import pytest

from orchestrator.cli import main

CALL = {"id": "c1", "type": "function", "function": {"name": "math_solver", "arguments": '{"expression": "2+3"}'}}


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path / "home"),
        "TOOLDECK_DATA_DIR": str(tmp_path / "data"),
        "TOOLDECK_CONTEXT_URL": f"http://127.0.0.1:{closed_port()}",
    }


def run_main(env: dict[str, str], *args: str) -> tuple[int, str, str]:
    stdout, stderr = io.StringIO(), io.StringIO()
    code = main(list(args), env=env, stdin=io.StringIO(""), stdout=stdout, stderr=stderr)
    return code, stdout.getvalue(), stderr.getvalue()


def completion(message: dict[str, Any]) -> dict[str, Any]:
    return {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}


def script_one_call(server: Any) -> None:
    server.add(completion({"role": "assistant", "content": None, "tool_calls": [CALL]}))
    server.add(completion({"role": "assistant", "content": "5"}))


@pytest.mark.parametrize(
    ("choice", "first", "second"),
    [
        ("required", "required", None),
        ("math_solver", {"type": "function", "function": {"name": "math_solver"}}, None),
        ("auto", "auto", "auto"),
        (None, None, None),
    ],
)
def test_tool_choice_per_turn(
    env: dict[str, str], scripted_server: Any, choice: str | None, first: object, second: object
) -> None:
    script_one_call(scripted_server)
    flags = ["--tool-choice", choice] if choice else []
    code, out, err = run_main(env, "--base-url", scripted_server.base_url, *flags, "What is 2+3?")
    assert code == 0, err
    assert "1. math_solver" in out
    sent = [r.body.get("tool_choice") for r in scripted_server.requests]
    assert sent == [first, second]


def test_tool_choice_from_the_environment(env: dict[str, str], scripted_server: Any) -> None:
    script_one_call(scripted_server)
    code, _, err = run_main({**env, "TOOLDECK_TOOL_CHOICE": "auto"}, "--base-url", scripted_server.base_url, "hi")
    assert code == 0, err
    assert scripted_server.requests[0].body["tool_choice"] == "auto"


@pytest.mark.parametrize(
    ("choice", "message"),
    [
        ("calculator", "no tool named 'calculator'; use auto, required, none or one of: math_solver"),
        ("two words", "--tool-choice='two words'"),
    ],
)
def test_bad_tool_choice_is_a_configuration_error(env: dict[str, str], choice: str, message: str) -> None:
    code, out, err = run_main(env, "--tool-choice", choice, "What is 2+3?")
    assert code == 2
    assert out == ""
    assert message in err


def test_offline_model_keeps_to_a_named_tool(env: dict[str, str]) -> None:
    code, out, err = run_main(env, "--tool-choice", "search_knowledge", "--no-trace", "What is 2+3?")
    assert code == 0, err
    assert "needs a math tool, which is not available" in out


def test_hostile_arguments_from_the_model_print_safely(env: dict[str, str], scripted_server: Any) -> None:
    hostile = {"id": "h", "type": "function", "function": {"name": "math_solver", "arguments": '{"x": "\\ud800"}'}}
    scripted_server.add(completion({"role": "assistant", "content": None, "tool_calls": [hostile]}))
    scripted_server.add(completion({"role": "assistant", "content": "done"}))
    for flags in ([], ["--json"]):
        stdout = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")  # a real terminal: UTF-8, strict
        code = main(
            ["--base-url", scripted_server.base_url, *flags, "hi"],
            env=env,
            stdin=io.StringIO(""),
            stdout=stdout,
            stderr=io.StringIO(),
        )
        stdout.flush()
        assert code == 0
