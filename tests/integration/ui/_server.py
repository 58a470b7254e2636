"""The console served for real: uvicorn in a thread, on a loopback port the OS picks."""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass
from typing import Any

from orchestrator.ui import ConsoleSecurity, ConsoleSources, create_app, new_token


@dataclass
class RunningConsole:
    """A console being served.

    Attributes:
        url: ``http://127.0.0.1:PORT``.
        sources: What it shows.
        security: Its token and CSRF token.
    """

    url: str
    sources: ConsoleSources
    security: ConsoleSecurity
    server: Any
    thread: threading.Thread

    @property
    def login_url(self) -> str:
        """The URL ``tooldeck ui`` prints: the address with the token."""
        return f"{self.url}/?token={self.security.token}"

    def stop(self) -> None:
        """Stop serving (open event streams are cut after a second)."""
        self.server.should_exit = True
        self.thread.join(15)


def serve(sources: ConsoleSources, *, token: str | None = None) -> RunningConsole:
    """Serve ``sources`` on 127.0.0.1 (a free port) until ``stop()``."""
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    security = ConsoleSecurity(token=token or new_token(), port=port)
    app = create_app(sources, security)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off", timeout_graceful_shutdown=1)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the console did not start")
        time.sleep(0.01)
    return RunningConsole(f"http://127.0.0.1:{port}", sources, security, server, thread)
