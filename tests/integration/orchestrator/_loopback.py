"""Loopback HTTP pieces shared by the orchestrator tests: serving a handler on a free port, and
writing server-sent events the way OpenAI does (HTTP/1.1 chunked, one event per chunk)."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up mid-answer (a test of a broken stream does) is not an error here."""
        import sys

        if not isinstance(sys.exc_info()[1], (ConnectionError, BrokenPipeError)):
            super().handle_error(request, client_address)


@contextlib.contextmanager
def serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """Serve ``handler`` on 127.0.0.1 (a free port) while the block runs; yields ``http://host:port``."""
    httpd = _Server(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def write_chunk(handler: BaseHTTPRequestHandler, data: bytes) -> None:
    """One HTTP/1.1 chunk, flushed (an empty one ends the body)."""
    handler.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
    handler.wfile.flush()


def start_event_stream(handler: BaseHTTPRequestHandler, status: int = 200) -> None:
    """The headers of a ``text/event-stream`` answer sent in chunks."""
    handler.send_response(status)
    handler.send_header("Content-Type", "text/event-stream")
    handler.send_header("Transfer-Encoding", "chunked")
    handler.end_headers()


def send_event(handler: BaseHTTPRequestHandler, event: Any) -> None:
    """One ``data:`` event (a JSON value, or raw text)."""
    data = event if isinstance(event, str) else json.dumps(event)
    write_chunk(handler, f"data: {data}\n\n".encode())


def end_event_stream(handler: BaseHTTPRequestHandler) -> None:
    """``data: [DONE]`` and the end of the body."""
    write_chunk(handler, b"data: [DONE]\n\n")
    write_chunk(handler, b"")


def stream_text(handler: BaseHTTPRequestHandler, pieces: Iterable[str]) -> None:
    """A whole streamed text answer, one chunk per piece."""
    start_event_stream(handler)
    for piece in pieces:
        send_event(handler, {"choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]})
    end_event_stream(handler)
