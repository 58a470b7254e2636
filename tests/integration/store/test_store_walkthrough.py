"""The docs/store.md walkthrough, command by command: from an empty directory to an adopted
MCP tool and an adopted HTTP tool answering through ``tooldeck run`` and ``python -m
orchestrator`` (driven by a scripted OpenAI-compatible model on 127.0.0.1)."""

from __future__ import annotations

import json
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


def test_walkthrough_from_empty_directory(
    tooldeck: Tooldeck, project: Path, tmp_path: Path, weather_api: WeatherAPI, scripted_model: ScriptedModel
) -> None:
    assert list(project.iterdir()) == []

    # 1. an empty project: nothing adopted yet
    listed = tooldeck("list", "--json")
    assert (listed.code, listed.json()) == (0, [])

    # 2. fill the catalog from an MCP server and a manual file, then search it
    (project / "apis.json").write_text(json.dumps(weather_manual(weather_api.url), indent=2))
    synced = tooldeck("catalog", "sync", "--mcp", f"time={sys.executable} -m mcp_server_time", "--manuals", "apis.json")
    assert synced.code == 0, synced.err
    assert "time: 2 tools" in synced.out and "apis: 1 tools" in synced.out
    found = tooldeck("catalog", "search", "current time", "--json").json()
    assert found[0]["catalog_id"] == "time:get_current_time"
    assert found[0]["adopt_command"] == "tooldeck adopt time:get_current_time"

    # 3. capability lookup before adoption suggests what to adopt
    suggestion = tooldeck("list", "--capability", "current_time", "--json").json()
    assert suggestion["available"] == []
    assert [s["catalog_id"] for s in suggestion["suggested"]] == ["time:get_current_time"]

    # 4. adopt both
    assert tooldeck("adopt", "time:get_current_time").code == 0
    adopted = tooldeck("adopt", "apis:weather", "--capability", "local_weather", "--json")
    assert adopted.code == 0, adopted.err
    assert adopted.json()["capabilities"] == ["weather", "forecast", "local_weather"]
    ids = [row["id"] for row in tooldeck("list", "--json").json()]
    assert ids == ["get_current_time", "weather"]

    # 5. check readiness, then run each tool
    ready = tooldeck("check", "get_current_time", "--json")
    assert (ready.code, ready.json()["ready"]) == (0, True)
    assert tooldeck("check", "weather").code == 0
    now = tooldeck("run", "get_current_time", "--arg", "timezone=Europe/Lisbon", "--json")
    assert now.code == 0, now.err
    assert now.json()["data"]["timezone"] == "Europe/Lisbon"
    weather = tooldeck("run", "weather", "--params", '{"city": "Lisbon"}')
    assert weather.code == 0, weather.err
    assert json.loads(weather.out) == {"city": "Lisbon", "temp_c": 21.5, "sky": "clear"}

    # 6. the orchestrator registers both beside the builtins and routes the model's calls to them
    env = base_env(tmp_path / "home", TOOLDECK_DATA_DIR=str(tmp_path / "data"))
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
            "What time is it in Lisbon, and what is the weather there?",
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
