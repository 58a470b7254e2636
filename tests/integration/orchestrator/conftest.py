"""Loopback servers for the orchestrator tests: a scriptable OpenAI-compatible server, and
the real context service over the example data."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest


@dataclass
class Reply:
    """One scripted answer."""

    status: int = 200
    body: bytes | dict[str, Any] | str = b""
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Recorded:
    """One received request."""

    path: str
    headers: dict[str, str]
    body: Any


class ScriptedServer:
    """Answers each POST with the next scripted reply (the last one repeats)."""

    def __init__(self) -> None:
        self.replies: list[Reply] = []
        self.requests: list[Recorded] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length)
                try:
                    body: Any = json.loads(raw)
                except ValueError:
                    body = raw
                with server._lock:
                    server.requests.append(Recorded(self.path, dict(self.headers), body))
                    reply = server.replies.pop(0) if len(server.replies) > 1 else server.replies[0]
                payload = reply.body
                if isinstance(payload, dict):
                    payload = json.dumps(payload).encode()
                elif isinstance(payload, str):
                    payload = payload.encode()
                self.send_response(reply.status)
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        host, port = self.httpd.server_address[:2]
        self.base_url = f"http://{host!s}:{port}/v1"

    def add(
        self,
        body: bytes | dict[str, Any] | str,
        *,
        status: int = 200,
        headers: dict[str, str] | None = None,
    ) -> None:
        """Queue one reply (the last queued reply repeats)."""
        self.replies.append(Reply(status, body, headers or {}))


@pytest.fixture
def scripted_server() -> Iterator[ScriptedServer]:
    server = ScriptedServer()
    thread = threading.Thread(target=server.httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.httpd.shutdown()
        server.httpd.server_close()
        thread.join(timeout=5)


# ---------------------------------------------------------------------------- context service

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "context"
REPLAY = Path(__file__).resolve().parents[1] / "context" / "replay"
#: Thursday 26 November 2026, 09:00 in Lisbon: the example calendar's dentist day.
FIXED_NOW = datetime(2026, 11, 26, 9, 0, tzinfo=timezone.utc)


class _ReplayHandler(BaseHTTPRequestHandler):
    """Recorded Open-Meteo and OSRM answers (no network in tests)."""

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        if path == "/v1/forecast":
            status, body = 200, (REPLAY / "open_meteo_forecast.json").read_bytes()
        elif path.startswith("/route/v1/driving/"):
            status, body = 200, (REPLAY / "osrm_route.json").read_bytes()
        else:
            status, body = 404, b'{"error": "not found"}'
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        return


@pytest.fixture(scope="module")
def context_url() -> Iterator[str]:
    """The real context service over ``examples/context/context.toml`` on 127.0.0.1.

    The example calendar and bank statements as they ship; weather and commute from
    recorded API answers served locally; "now" fixed at `FIXED_NOW`.
    """
    uvicorn = pytest.importorskip("uvicorn")
    pytest.importorskip("fastapi")
    from shared.context_service import ContextAggregator, load_config
    from shared.context_service.app import create_app

    replay = ThreadingHTTPServer(("127.0.0.1", 0), _ReplayHandler)
    replay.daemon_threads = True
    threading.Thread(target=replay.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True).start()
    replay_url = f"http://127.0.0.1:{replay.server_address[1]}"
    config = load_config(EXAMPLES / "context.toml")
    users = {}
    for user_id, user in config.users.items():
        entries = [
            e.model_copy(update={"options": {**e.options, "base_url": replay_url}})
            if e.category in ("weather", "commute")
            else e
            for e in user.adapters
        ]
        users[user_id] = user.model_copy(update={"adapters": entries})
    aggregator = ContextAggregator(
        config.model_copy(update={"users": users}),
        clock=lambda: FIXED_NOW,
        adapter_kwargs={"sleep": lambda _: None, "http_timeout": 5.0},
    )
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(create_app(aggregator), log_level="warning", access_log=False))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the context service did not start"
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(10)
        aggregator.close()
        replay.shutdown()
        replay.server_close()
