"""Fixtures for the external-tool integration tests: scripts on disk, a loopback HTTP server,
and a /proc scan for leftover processes."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

Reply = tuple[int, dict[str, str], bytes]
Handler = Callable[["Seen"], Reply]


@dataclass
class Seen:
    """One request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class LoopbackServer:
    """A real HTTP server on 127.0.0.1; ``routes`` maps 'METHOD /path' to a handler."""

    url: str
    routes: dict[str, Handler] = field(default_factory=dict)
    seen: list[Seen] = field(default_factory=list)

    def script(self, key: str, *replies: Reply) -> None:
        """Answer ``key`` with ``replies`` in order, repeating the last one."""
        queue = list(replies)

        def handler(_: Seen) -> Reply:
            return queue.pop(0) if len(queue) > 1 else queue[0]

        self.routes[key] = handler


def _make_handler(server: LoopbackServer) -> type[BaseHTTPRequestHandler]:
    class _Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            seen = Seen(self.command, self.path, dict(self.headers), self.rfile.read(length))
            server.seen.append(seen)
            handler = server.routes.get(f"{self.command} {self.path.split('?')[0]}")
            status, headers, body = handler(seen) if handler else (404, {}, b'{"message": "no route"}')
            self.send_response(status)
            for key, value in {"Content-Type": "application/json", **headers}.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.wfile.write(body)

        do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _serve

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return _Handler


@pytest.fixture
def ext_http_server() -> Iterator[LoopbackServer]:
    box = LoopbackServer(url="")
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(box))
    httpd.daemon_threads = True
    box.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.01})
    thread.start()
    try:
        yield box
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


ScriptMaker = Callable[..., Path]


@pytest.fixture
def make_script(tmp_path: Path) -> ScriptMaker:
    """Write an executable Python script: ``make_script("name", body, directory=None)``."""

    def make(name: str, body: str, directory: Path | None = None, mode: int = 0o755, flags: str = "") -> Path:
        folder = directory or tmp_path
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / name
        tmp = folder / f".{name}.tmp"
        tmp.write_text(f"#!{sys.executable}{' ' + flags if flags else ''}\n{body}")
        tmp.chmod(mode)
        os.replace(tmp, path)  # appear atomically, as an install would
        return path

    return make


def live_pids_with(marker: str) -> list[int]:
    """PIDs of live (non-zombie) processes whose command line contains ``marker``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in cmdline and state not in ("Z", "X"):
            found.append(int(entry))
    return found


def wait_until(condition: Callable[[], bool], deadline_s: float = 10.0) -> bool:
    """Poll ``condition`` until true or the deadline passes (a bound, not a timing assertion)."""
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


@pytest.fixture
def live_pids() -> Callable[[str], list[int]]:
    """The :func:`live_pids_with` helper."""
    return live_pids_with


@pytest.fixture
def wait_for() -> Callable[..., bool]:
    """The :func:`wait_until` helper."""
    return wait_until
