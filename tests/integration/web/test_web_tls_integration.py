"""HTTPS through the pinned connection: SNI and certificate checks use the host name."""

from __future__ import annotations

import ssl
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tools.builtin.web import AddressPolicy, PageFetcher
from tools.errors import UpstreamError

trustme = pytest.importorskip("trustme")


@dataclass
class TlsServer:
    port: int
    ca_file: str
    server_names: list[str | None] = field(default_factory=list)
    hosts: list[str] = field(default_factory=list)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    seen_hosts: list[str]

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        self.seen_hosts.append(self.headers.get("Host", ""))
        body = b"secure hello"
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        return  # failed handshakes are what some tests provoke


@pytest.fixture
def tls_server(tmp_path: Path) -> Iterator[TlsServer]:
    ca = trustme.CA()
    cert = ca.issue_cert("pinned.test")
    ca_file = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    names: list[str | None] = []
    hosts: list[str] = []
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    cert.configure_cert(context)

    def remember_sni(_sock: Any, server_name: str | None, _ctx: Any) -> None:
        names.append(server_name)

    context.sni_callback = remember_sni
    handler = type("Handler", (_Handler,), {"seen_hosts": hosts})
    server = _QuietServer(("127.0.0.1", 0), handler)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    try:
        yield TlsServer(server.server_address[1], str(ca_file), names, hosts)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def _fetcher(ca_file: str | None) -> PageFetcher:
    policy = AddressPolicy.build(allow_networks=["127.0.0.1/32"], resolver=lambda _host, _port: ["127.0.0.1"])
    return PageFetcher(policy=policy, ca_bundle=ca_file)


def test_https_connects_to_the_pinned_address_with_sni_and_verification(tls_server: TlsServer) -> None:
    page = _fetcher(tls_server.ca_file).fetch(f"https://pinned.test:{tls_server.port}/doc")
    assert page.text() == "secure hello"
    assert tls_server.server_names == ["pinned.test"]
    assert tls_server.hosts == [f"pinned.test:{tls_server.port}"]


def test_certificate_for_another_name_is_refused(tls_server: TlsServer) -> None:
    with pytest.raises(UpstreamError, match="TLS/certificate problem") as info:
        _fetcher(tls_server.ca_file).fetch(f"https://other.test:{tls_server.port}/doc")
    assert info.value.retryable is False
    assert tls_server.hosts == []


def test_untrusted_certificate_is_refused(tls_server: TlsServer) -> None:
    with pytest.raises(UpstreamError, match="TLS/certificate problem"):
        _fetcher(None).fetch(f"https://pinned.test:{tls_server.port}/doc")
    assert tls_server.hosts == []
