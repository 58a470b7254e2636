"""PolicyEgress against real loopback servers: what the host sends for a module worker is
held to the web tool's address policy (loopback only when the operator allows it, never a
metadata address), redirects are handed back rather than followed, bodies and time bounded."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from shared.modules import EgressError, EgressRequest
from tools.builtin.modules import PolicyEgress
from tools.builtin.web import AddressPolicy


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_GET(self) -> None:
        self.server.seen.append((self.path, dict(self.headers)))
        if self.path == "/redirect":
            self.send_response(302)
            self.send_header("Location", "http://169.254.169.254/latest/meta-data/")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if self.path == "/stall":
            self.server.release.wait(10)
        body = b"x" * 2_000_000 if self.path == "/big" else b'{"ok": true}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        self.server.seen.append((self.path, {"body": self.rfile.read(length).decode()}))
        self.send_response(204)
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    seen: list[tuple[str, dict[str, str]]]
    release: threading.Event


@pytest.fixture
def server() -> Iterator[_Server]:
    server = _Server(("127.0.0.1", 0), _Handler)
    server.seen, server.release = [], threading.Event()
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    yield server
    server.release.set()
    server.shutdown()
    server.server_close()
    thread.join(5)


def url(server: _Server, path: str) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}{path}"


def request(target: str, *, method: str = "GET", body: bytes | None = None, timeout: float = 30) -> EgressRequest:
    return EgressRequest(method, target, (("X-API-Key", "k-123"),), body, timeout)


ALLOWED = PolicyEgress(policy=AddressPolicy.build(allow_hosts=["127.0.0.1"]), max_body_bytes=1_000_000)


def test_loopback_is_refused_unless_the_operator_allows_it(server: _Server) -> None:
    with pytest.raises(EgressError) as caught:
        PolicyEgress().send(request(url(server, "/api")))
    assert caught.value.kind == "refused" and "loopback" in caught.value.message
    assert server.seen == []
    answer = ALLOWED.send(request(url(server, "/api")))
    assert (answer.status, answer.body) == (200, b'{"ok": true}')
    ((path, headers),) = server.seen
    port = server.server_address[1]
    assert (path, headers["X-API-Key"], headers["Host"]) == ("/api", "k-123", f"127.0.0.1:{port}")


@pytest.mark.parametrize(
    "target", ["http://169.254.169.254/latest/meta-data/", "http://[::ffff:169.254.169.254]/", "http://10.0.0.1/"]
)
def test_metadata_and_private_addresses_are_refused(target: str) -> None:
    with pytest.raises(EgressError) as caught:
        ALLOWED.send(request(target))
    assert caught.value.kind == "refused"


def test_a_redirect_is_handed_back_not_followed(server: _Server) -> None:
    answer = ALLOWED.send(request(url(server, "/redirect")))
    assert answer.status == 302
    assert dict(answer.headers)["Location"] == "http://169.254.169.254/latest/meta-data/"
    assert [path for path, _ in server.seen] == ["/redirect"]


def test_bodies_go_out_and_oversized_answers_are_refused(server: _Server) -> None:
    assert ALLOWED.send(request(url(server, "/items"), method="POST", body=b'{"a": 1}')).status == 204
    assert server.seen[-1] == ("/items", {"body": '{"a": 1}'})
    with pytest.raises(EgressError) as caught:
        ALLOWED.send(request(url(server, "/big")))
    assert caught.value.kind == "too_large"


def test_a_stalled_answer_times_out(server: _Server) -> None:
    # the server answers only when released (at teardown): a 200 here would mean no time limit
    with pytest.raises(EgressError) as caught:
        ALLOWED.send(request(url(server, "/stall"), timeout=0.3))
    assert caught.value.kind == "timeout"


def test_a_closed_port_is_a_connection_error(server: _Server) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    with pytest.raises(EgressError) as caught:
        ALLOWED.send(request(f"http://127.0.0.1:{closed}/api"))
    assert caught.value.kind == "connection"
