"""Fixtures for the tool-store integration tests: a real weather API on 127.0.0.1, tool
binaries on disk, and a ``tooldeck`` runner that executes the real console command."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

#: The secret every test sets in the environment and looks for in every output.
SECRET = "s3cr3t-VALUE-4242"
WORKTREE = Path(__file__).resolve().parents[3]


@dataclass
class WeatherAPI:
    """A real HTTP API: GET /weather?city=X needs header X-Api-Key; echoes what it got."""

    url: str
    requests: list[dict[str, Any]]


def _handler(api: WeatherAPI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            query = {k: v[0] for k, v in parse_qs(parts.query).items()}
            api.requests.append({"path": parts.path, "query": query, "key": self.headers.get("X-Api-Key")})
            body: dict[str, Any]
            if parts.path != "/weather":
                status, body = 404, {"message": "no such endpoint"}
            elif self.headers.get("X-Api-Key") != SECRET:
                status, body = 401, {"message": "bad API key"}
            elif not query.get("city"):
                status, body = 400, {"message": "city is required"}
            else:
                status, body = 200, {"city": query["city"], "temp_c": 21.5, "sky": "clear"}
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


@pytest.fixture
def weather_api() -> Iterator[WeatherAPI]:
    api = WeatherAPI(url="", requests=[])
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(api))
    httpd.daemon_threads = True
    api.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.01})
    thread.start()
    try:
        yield api
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def weather_manual(api_url: str) -> dict[str, Any]:
    """A UTCP-style manual file describing the weather API (the key stays in $WEATHER_KEY)."""
    return {
        "tools": [
            {
                "name": "weather",
                "description": "Current weather for a city.",
                "tags": ["weather", "forecast"],
                "inputs": {
                    "type": "object",
                    "properties": {"city": {"type": "string", "description": "City name, e.g. 'Lisbon'"}},
                    "required": ["city"],
                },
                "tool_call_template": {
                    "call_template_type": "http",
                    "url": f"{api_url}/weather",
                    "http_method": "GET",
                    "auth": {"auth_type": "api_key", "api_key": "$WEATHER_KEY", "var_name": "X-Api-Key"},
                },
            }
        ]
    }


BINARY = """
import json, sys
SCHEMA = {"name": "word_count", "description": "Count the words of a text.", "version": "1.0.0",
          "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"],
                           "additionalProperties": False}}
if sys.argv[1:] == ["--schema"]:
    print(json.dumps(SCHEMA)); sys.exit(0)
args = json.load(sys.stdin)
if args.get("text") == "fail":
    print("cannot count 'fail'", file=sys.stderr); sys.exit(3)
print(json.dumps({"words": len(args["text"].split())}))
"""


@pytest.fixture
def binaries(tmp_path: Path) -> Path:
    """A directory with a ready binary, one without --schema, and a non-executable file."""
    folder = tmp_path / "bin"
    folder.mkdir()
    ready = folder / "word_count"
    ready.write_text(f"#!{sys.executable}\n{BINARY}")
    ready.chmod(0o755)
    plain = folder / "shout"
    plain.write_text(
        f"#!{sys.executable}\nimport json, sys\n"
        "if sys.argv[1:]: sys.exit(2)\nprint(json.dumps(json.load(sys.stdin)['text'].upper()))\n"
    )
    plain.chmod(0o755)
    (folder / "README").write_text("not a tool")
    return folder


@dataclass
class Outcome:
    """What one ``tooldeck`` run did."""

    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


Tooldeck = Callable[..., Outcome]


def base_env(home: Path, **extra: str) -> dict[str, str]:
    """A clean environment: our code first on the path, a private HOME and config dir."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "TOOLDECK_"))}
    env.update(PYTHONPATH=str(WORKTREE), HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), WEATHER_KEY=SECRET)
    env.update(extra)
    return env


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


@pytest.fixture
def tooldeck(project: Path, tmp_path: Path) -> Tooldeck:
    """Run the real ``tooldeck`` command in ``project``: ``tooldeck("list", "--json")``."""

    def run(*args: str, env: Mapping[str, str] | None = None, timeout: float = 120.0, stdin: str = "") -> Outcome:
        done = subprocess.run(
            [sys.executable, "-m", "tools.cli", *args],
            cwd=project,
            env=dict(env) if env is not None else base_env(tmp_path / "home"),
            input=stdin,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        return Outcome(done.returncode, done.stdout, done.stderr)

    return run
