"""The docs/store.md walkthrough, command by command: from an empty directory to an adopted
MCP tool and an adopted HTTP tool answering through ``tooldeck run`` and ``python -m
orchestrator`` (driven by a scripted OpenAI-compatible model on 127.0.0.1)."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from .conftest import SECRET, Tooldeck, WeatherAPI, base_env, weather_manual

pytestmark = pytest.mark.mcp


class ScriptedModel:
    """An OpenAI-compatible endpoint: asks for both adopted tools, then answers from their results."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        model = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
                model.requests.append(body)
                tool_messages = [m for m in body["messages"] if m["role"] == "tool"]
                if not tool_messages:
                    message: dict[str, Any] = {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            _call("c1", "get_current_time", {"timezone": "Europe/Lisbon"}),
                            _call("c2", "weather", {"city": "Lisbon"}),
                        ],
                    }
                else:
                    message = {
                        "role": "assistant",
                        "content": "Results: " + " | ".join(m["content"] for m in tool_messages),
                    }
                reply = {
                    "id": "x",
                    "object": "chat.completion",
                    "model": "scripted",
                    "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                }
                data = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"


def _call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


@pytest.fixture
def scripted_model() -> Iterator[ScriptedModel]:
    model = ScriptedModel()
    thread = threading.Thread(target=model.httpd.serve_forever, kwargs={"poll_interval": 0.01})
    thread.start()
    try:
        yield model
    finally:
        model.httpd.shutdown()
        model.httpd.server_close()
        thread.join()


DOCS = Path(__file__).resolve().parents[3] / "docs" / "store.md"


def doc_commands() -> list[str]:
    """The ``tooldeck`` command lines of the walkthrough in docs/store.md, in order."""
    text = DOCS.read_text().split("## Walkthrough", 1)[1].split("\n## ", 1)[0]
    lines = []
    for block in text.split("```bash")[1:]:
        for line in block.split("```", 1)[0].splitlines():
            command = line.split("  #", 1)[0].strip()
            if command.startswith("tooldeck "):
                lines.append(command)
    return lines


def test_docs_walkthrough_is_what_this_test_runs() -> None:
    assert doc_commands() == [
        "tooldeck list --json",
        'tooldeck catalog sync --mcp "time=python -m mcp_server_time" --manuals apis.json',
        'tooldeck catalog search "current time"',
        "tooldeck list --capability current_time",
        "tooldeck adopt time:get_current_time --read-only --risk safe",
        "tooldeck adopt apis:weather --capability local_weather",
        "tooldeck list",
        "tooldeck check get_current_time",
        "tooldeck check weather",
        "tooldeck approve weather",
        "tooldeck run get_current_time --arg timezone=Europe/Lisbon",
        """tooldeck run weather --params '{"city": "Lisbon"}'""",
    ]


def test_walkthrough_from_empty_directory(
    tooldeck: Tooldeck, project: Path, tmp_path: Path, weather_api: WeatherAPI, scripted_model: ScriptedModel
) -> None:
    assert list(project.iterdir()) == []
    (project / "apis.json").write_text(json.dumps(weather_manual(weather_api.url), indent=2))
    outputs = {}
    for line in doc_commands():  # every command of the docs, in order, must succeed
        words = [w.replace("python -m", f"{sys.executable} -m") for w in shlex.split(line)[1:]]
        outcome = tooldeck(*words)
        assert outcome.code == 0, (line, outcome.err)
        assert SECRET not in outcome.out + outcome.err
        outputs[line] = outcome

    assert outputs["tooldeck list --json"].json() == []
    synced = outputs[doc_commands()[1]].out
    assert "time: 2 tools" in synced and "apis: 1 tools" in synced
    assert outputs['tooldeck catalog search "current time"'].out.startswith("time:get_current_time\tmcp")
    assert "tooldeck adopt time:get_current_time" in outputs["tooldeck list --capability current_time"].out
    assert [line.split("\t")[0] for line in outputs["tooldeck list"].out.splitlines()] == [
        "get_current_time",
        "weather",
    ]
    assert "Europe/Lisbon" in outputs["tooldeck run get_current_time --arg timezone=Europe/Lisbon"].out
    weather = outputs[doc_commands()[-1]]
    assert json.loads(weather.out) == {"city": "Lisbon", "temp_c": 21.5, "sky": "clear"}

    # the same data through --json, for scripts
    suggestion = tooldeck("list", "--capability", "current_time", "--json").json()
    assert [s["catalog_id"] for s in suggestion["suggested"]] == []  # adopted by now
    assert [c["id"] for c in suggestion["available"]] == ["get_current_time"]
    adopted = {row["id"]: row for row in tooldeck("list", "--json").json()}
    assert adopted["weather"]["capabilities"] == ["weather", "forecast", "local_weather"]
    assert adopted["weather"]["adopted_from"] == "apis:weather"

    # the orchestrator registers both beside the builtins and routes the model's calls to them
    env = base_env(tmp_path / "home", TOOLDECK_DATA_DIR=str(tmp_path / "data"))
    question = "What time is it in Lisbon, and what is the weather there?"
    asked = subprocess.run(
        [
            sys.executable,
            "-m",
            "orchestrator",
            "--base-url",
            scripted_model.url,
            "--model",
            "scripted",
            "--json",
            question,
        ],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert asked.returncode == 0, asked.stderr
    run = json.loads(asked.stdout)
    statuses = {r["name"]: r["status"] for r in run["tool_results"]}
    assert statuses == {"get_current_time": "success", "weather": "success"}
    assert '"temp_c":21.5' in run["answer"] and "Europe/Lisbon" in run["answer"]
    offered = {t["function"]["name"] for t in scripted_model.requests[0]["tools"]}
    assert {"get_current_time", "weather", "math_solver"} <= offered
    assert SECRET not in asked.stdout + asked.stderr


def test_capability_lookup_before_adoption_suggests_the_catalog(tooldeck: Tooldeck) -> None:
    synced = tooldeck("catalog", "sync", "--mcp", f"time={sys.executable} -m mcp_server_time")
    assert synced.code == 0, synced.err
    suggestion = tooldeck("list", "--capability", "current_time", "--json").json()
    assert suggestion["available"] == []
    assert [s["adopt_command"] for s in suggestion["suggested"]] == ["tooldeck adopt time:get_current_time"]
