"""Real loopback servers for the context tests: API replay, scripted faults, the service."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

pytest.importorskip("uvicorn")
pytest.importorskip("fastapi")

import contextlib

import uvicorn

from shared.context_service import ContextAggregator, ServiceConfig
from shared.context_service.app import create_app

REPLAY = Path(__file__).resolve().parent / "replay"
EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "context"
#: Thursday 26 November 2026, 09:00 in Lisbon.
FIXED_NOW = datetime(2026, 11, 26, 9, 0, tzinfo=timezone.utc)


@dataclass
class Reply:
    """What a scripted server answers: status, body, and an optional stall first."""

    status: int = 200
    body: bytes = b"{}"
    content_type: str = "application/json"
    stall: float = 0.0


@dataclass
class ScriptedServer:
    """A loopback HTTP server: replays recorded API answers unless ``script`` is set.

    ``faults`` are answered first, one per request (to test retries); ``requests`` records
    every path with its query and headers.
    """

    url: str = ""
    script: Callable[[str], Reply] | None = None
    faults: list[Reply] = field(default_factory=list)
    requests: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)

    def queue(
        self,
        status: int = 200,
        body: bytes = b"{}",
        *,
        content_type: str = "application/json",
        stall: float = 0.0,
        times: int = 1,
    ) -> None:
        """Answer the next ``times`` requests with this reply before replaying."""
        self.faults.extend([Reply(status, body, content_type, stall)] * times)

    def answer(self, path: str) -> Reply:
        if self.faults:
            return self.faults.pop(0)
        if self.script is not None:
            return self.script(path)
        return replay(path)


def replay(path: str) -> Reply:
    """Recorded Open-Meteo / OSRM answers, and the sample calendar as an .ics feed."""
    parts = urlsplit(path)
    query = parse_qs(parts.query)
    if parts.path == "/v1/forecast":
        if abs(float(query.get("latitude", ["0"])[0])) > 90:
            return Reply(400, (REPLAY / "open_meteo_error.json").read_bytes())
        return Reply(200, (REPLAY / "open_meteo_forecast.json").read_bytes())
    if parts.path.startswith("/route/v1/driving/"):
        if "0.000000,0.000000" in parts.path:
            return Reply(400, (REPLAY / "osrm_no_route.json").read_bytes())
        return Reply(200, (REPLAY / "osrm_route.json").read_bytes())
    if parts.path == "/feeds/calendar.ics":
        return Reply(200, (EXAMPLES / "calendar.ics").read_bytes(), "text/calendar")
    return Reply(404, b'{"error": "not found"}')


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_GET(self) -> None:
        scripted = self.server.scripted
        scripted.requests.append((self.path, dict(self.headers.items())))
        reply = scripted.answer(self.path)
        if reply.stall:
            scripted.release.wait(reply.stall)
        self.send_response(reply.status)
        self.send_header("Content-Type", reply.content_type)
        self.send_header("Content-Length", str(len(reply.body)))
        self.end_headers()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.wfile.write(reply.body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    scripted: ScriptedServer


@pytest.fixture
def scripted() -> Iterator[ScriptedServer]:
    """A started :class:`ScriptedServer` on 127.0.0.1."""
    server = _Server(("127.0.0.1", 0), _Handler)
    server.scripted = ScriptedServer(url=f"http://127.0.0.1:{server.server_address[1]}")
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    yield server.scripted
    server.scripted.release.set()
    server.shutdown()
    server.server_close()
    thread.join(5)


def service_config(api_url: str, *, extra_adapters: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The sample files plus weather and commute pointed at the replay server."""
    return {
        "cache_ttl_seconds": 60,
        "places": {
            "home": {"lat": 38.7223, "lon": -9.1393, "label": "Home"},
            "office": {"lat": 38.7369, "lon": -9.1427, "label": "Office"},
            "nowhere": {"lat": 0.0, "lon": 0.0},
        },
        "users": {
            "default": {
                "timezone": "Europe/Lisbon",
                "default_destination": "office",
                "large_expense": 600,
                "adapters": [
                    {
                        "category": "calendar",
                        "platform": "ics",
                        "path": str(EXAMPLES / "calendar.ics"),
                    },
                    {
                        "category": "finance",
                        "platform": "csv",
                        "path": str(EXAMPLES / "statement.csv"),
                        "account": "Checking",
                        "columns": {
                            "date": "Date",
                            "description": "Description",
                            "amount": "Amount",
                            "category": "Category",
                            "memo": "Memo",
                        },
                    },
                    {
                        "category": "finance",
                        "platform": "ofx",
                        "path": str(EXAMPLES / "statement.ofx"),
                        "account": "Joint",
                    },
                    {
                        "category": "weather",
                        "platform": "open-meteo",
                        "base_url": api_url,
                        "location": "home",
                    },
                    {
                        "category": "commute",
                        "platform": "osrm",
                        "base_url": api_url,
                        "origin": "home",
                    },
                    *(extra_adapters or []),
                ],
            }
        },
    }


@dataclass
class RunningService:
    """A context service running in this process on a loopback port."""

    url: str
    aggregator: ContextAggregator


def _free_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


@pytest.fixture
def start_service() -> Iterator[Callable[..., RunningService]]:
    """Start the real ASGI app under uvicorn in a thread; every one is stopped at teardown."""
    running: list[tuple[uvicorn.Server, threading.Thread, ContextAggregator]] = []

    def start(config: dict[str, Any], *, api_key: str | None = None, **aggregator_kwargs: Any) -> RunningService:
        aggregator_kwargs.setdefault("clock", lambda: FIXED_NOW)
        aggregator_kwargs.setdefault("adapter_kwargs", {"sleep": lambda _: None, "http_timeout": 2.0})
        aggregator = ContextAggregator(ServiceConfig.model_validate(config), **aggregator_kwargs)
        app = create_app(aggregator, api_key=api_key)
        sock = _free_socket()
        server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on"))
        thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        thread.start()
        deadline = time.monotonic() + 10
        while not server.started:
            if time.monotonic() > deadline or not thread.is_alive():
                raise RuntimeError("the context service did not start")
            time.sleep(0.01)
        running.append((server, thread, aggregator))
        return RunningService(f"http://127.0.0.1:{sock.getsockname()[1]}", aggregator)

    yield start
    for server, thread, aggregator in running:
        server.should_exit = True
        thread.join(10)
        aggregator.close()


@pytest.fixture
def closed_url() -> str:
    """A loopback URL nothing listens on."""
    sock = _free_socket()
    port = sock.getsockname()[1]
    sock.close()
    return f"http://127.0.0.1:{port}"


@pytest.fixture
def make_config() -> Callable[..., dict[str, Any]]:
    """:func:`service_config`, as a fixture."""
    return service_config
