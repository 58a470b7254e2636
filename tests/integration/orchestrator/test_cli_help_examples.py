"""Every example of ``python -m orchestrator --help`` runs as written (issue 21 item 4).

The examples are read from the help text itself, joined across ``\\`` continuations, and run
in order with bash from a directory holding ``mytools.py`` and a README, with a private HOME
and data directory. ``http://127.0.0.1:8080/v1`` stands for an OpenAI-compatible server; it
is replaced by a real one on a free loopback port that streams (server-sent events) when
asked and plays the pipeline's coder, test writer and reviewer. An example ends with the exit
code its ``# exit N`` comment states (0 otherwise), and never with a traceback.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from tests.integration.orchestrator._loopback import serving, stream_text
from tests.integration.orchestrator.test_own_tools_e2e import MYTOOLS

ROOT = Path(__file__).resolve().parents[3]
PLACEHOLDER = "http://127.0.0.1:8080/v1"


def help_text() -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "orchestrator", "--help"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout


def examples(text: str) -> list[tuple[str, int]]:
    """(command, expected exit code) of each example, in order."""
    block = text.split("\nexamples:\n", 1)[1].split("\n\n", 1)[0]
    joined = re.sub(r"\\\n\s*", "", block)
    out = []
    for line in joined.splitlines():
        command, _, comment = line.strip().partition("#")
        match = re.search(r"exit (\d+)", comment)
        out.append((command.strip(), int(match.group(1)) if match else 0))
    return out


def test_the_examples_are_read_from_the_help() -> None:
    found = examples(help_text())
    assert len(found) >= 9
    assert all(command.startswith(("python -m orchestrator", "echo ")) for command, _ in found)
    assert ('python -m orchestrator --registry mytools:build --model test "try my tools"', 0) in found
    assert any(code == 5 for _, code in found)


class ModelServer:
    """An OpenAI-compatible endpoint: streams when asked, reviews with APPROVE."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.url = ""
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
                server.requests.append(body)
                text = server.answer(body)
                if body.get("stream"):
                    stream_text(self, [text[i : i + 4] for i in range(0, len(text), 4)])
                    return
                message = {"role": "assistant", "content": text}
                payload = json.dumps({"choices": [{"message": message, "finish_reason": "stop"}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.handler = Handler

    @staticmethod
    def answer(body: dict[str, Any]) -> str:
        system = next((m.get("content") or "" for m in body["messages"] if m.get("role") == "system"), "")
        if "You are the reviewer" in system:
            return "VERDICT: APPROVE"
        if "You are the coder" in system or "You are the test writer" in system:
            return "Nothing needed changing."
        return "2 + 3 = 5."


@pytest.fixture
def model_server() -> Iterator[ModelServer]:
    server = ModelServer()
    with serving(server.handler) as url:
        server.url = f"{url}/v1"
        yield server


def test_every_help_example_runs_as_written(tmp_path: Path, model_server: ModelServer) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "mytools.py").write_text(MYTOOLS)
    (project / "README.md").write_text("# My project\n\nIt adds numbers.\n")
    home = tmp_path / "home"
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("TOOLDECK_", "XDG_", "OPENAI_"))}
    env = {
        **keep,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(ROOT),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "TOOLDECK_CONTEXT_URL": "http://127.0.0.1:9",
        "NO_PROXY": "*",
    }
    ran = []
    for command, expected in examples(help_text()):
        runnable = command.replace(PLACEHOLDER, model_server.url)
        done = subprocess.run(
            ["bash", "-c", runnable], cwd=project, env=env, capture_output=True, text=True, timeout=300, check=False
        )
        assert done.returncode == expected, f"{command}\nexit {done.returncode}\n{done.stdout[-2000:]}{done.stderr}"
        assert "Traceback" not in done.stderr, done.stderr
        ran.append(command)
    streamed = [r for r in model_server.requests if r.get("stream")]
    assert streamed, "the --stream example did not stream"
    assert any("You are the reviewer" in str(r["messages"]) for r in model_server.requests), "no pipeline ran"
    assert len(ran) >= 9
