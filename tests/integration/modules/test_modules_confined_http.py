"""ConfinedSession against real loopback servers: only URLs under the base URL are reached,
redirects included; the transport checks even when the session is bypassed."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
import requests

from shared.modules import ConfinedSession, OutsideBaseUrlError, within_base_url


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_GET(self) -> None:
        self.server.hits.append(self.path)
        target = self.server.redirects.get(self.path)
        if target:
            self.send_response(302)
            self.send_header("Location", target)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = b'{"ok": true}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    hits: list[str]
    redirects: dict[str, str]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


def _start() -> tuple[_Server, threading.Thread]:
    server = _Server(("127.0.0.1", 0), _Handler)
    server.hits, server.redirects = [], {}
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    return server, thread


@pytest.fixture
def servers() -> Iterator[tuple[_Server, _Server]]:
    api, api_thread = _start()
    other, other_thread = _start()
    yield api, other
    for server, thread in ((api, api_thread), (other, other_thread)):
        server.shutdown()
        server.server_close()
        thread.join(5)


@pytest.mark.parametrize(
    ("url", "inside"),
    [
        ("https://api.example.com/v1", True),
        ("https://api.example.com/v1/", True),
        ("https://api.example.com/v1/items?x=1", True),
        ("https://API.example.com:443/v1/items", True),
        ("https://api.example.com/v10", False),
        ("https://api.example.com/v2", False),
        ("https://api.example.com/v1/../admin", False),
        ("https://api.example.com/v1/%2e%2e/admin", False),
        ("http://api.example.com/v1", False),
        ("https://api.example.com:8443/v1", False),
        ("https://evil.com/v1", False),
        ("https://api.example.com.evil.com/v1", False),
        ("https://user:pw@api.example.com/v1", False),
        ("file:///etc/passwd", False),
        ("not a url", False),
        ("https://api.example.com:99999/v1", False),
        # dot segments a server may find after decoding or normalising the path
        ("https://api.example.com/v1/..%2fadmin", False),
        ("https://api.example.com/v1/..%2Fadmin", False),
        ("https://api.example.com/v1/%252e%252e/admin", False),
        ("https://api.example.com/v1/..\\admin", False),
        ("https://api.example.com/v1/..%5cadmin", False),
        ("https://api.example.com/v1/..;/admin", False),
        ("https://api.example.com/v1/.;x/..;y/admin", False),
        # what APIs really send stays inside
        ("https://api.example.com/v1/projects/group%2Fproject", True),
        ("https://api.example.com/v1/files/report..final.csv", True),
        ("https://api.example.com/v1/items;version=2", True),
        ("https://api.example.com/v1/search?q=../..", True),
    ],
)
def test_within_base_url(url: str, inside: bool) -> None:
    assert within_base_url(url, "https://api.example.com/v1") is inside


def test_requests_under_the_base_url_go_through(servers: tuple[_Server, _Server]) -> None:
    api, _ = servers
    session = ConfinedSession(api.url + "/api/runs", timeout=5)
    assert session.get(api.url + "/api/runs").json() == {"ok": True}
    assert session.get(api.url + "/api/runs/today", params={"x": "1"}).status_code == 200
    assert api.hits == ["/api/runs", "/api/runs/today?x=1"]


def test_other_paths_hosts_and_redirects_out_are_refused_before_sending(servers: tuple[_Server, _Server]) -> None:
    api, other = servers
    api.redirects["/api/runs/out"] = other.url + "/api/runs"
    api.redirects["/api/runs/in"] = "/api/runs/today"
    session = ConfinedSession(api.url + "/api/runs", timeout=5)
    for url in (api.url + "/admin", other.url + "/api/runs"):
        with pytest.raises(OutsideBaseUrlError):
            session.get(url)
    with pytest.raises(OutsideBaseUrlError):
        session.get(api.url + "/api/runs/out")
    assert session.get(api.url + "/api/runs/in").status_code == 200
    assert other.hits == []
    assert api.hits == ["/api/runs/out", "/api/runs/in", "/api/runs/today"]


def test_the_transport_checks_even_when_the_session_is_bypassed(servers: tuple[_Server, _Server]) -> None:
    api, other = servers
    session = ConfinedSession(api.url + "/api/runs", timeout=5)
    prepared = requests.Request("GET", other.url + "/x").prepare()
    with pytest.raises(OutsideBaseUrlError):
        session.get_adapter(other.url).send(prepared)
    with pytest.raises(OutsideBaseUrlError):
        session.get_adapter("file:///etc/passwd")
    assert other.hits == []


def test_proxies_from_the_environment_are_not_used(
    servers: tuple[_Server, _Server], monkeypatch: pytest.MonkeyPatch
) -> None:
    api, other = servers
    monkeypatch.setenv("HTTP_PROXY", other.url)
    monkeypatch.setenv("NO_PROXY", "")
    session = ConfinedSession(api.url + "/api/runs", timeout=5)
    assert session.get(api.url + "/api/runs").status_code == 200
    assert other.hits == [] and api.hits == ["/api/runs"]
