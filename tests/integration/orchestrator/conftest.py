"""A scriptable OpenAI-compatible server on 127.0.0.1 for the client tests."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

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
