"""RequestForwarder and CallSecrets: a worker's request is sent only under its api_url, with
the credentials put in by the host, and the answer comes back with them taken out."""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

import pytest

from shared.modules import CallSecrets, EgressError, EgressRequest, EgressResponse, RequestForwarder

API = "https://api.example.test:8443/v1"
KEY = "sk-live-0123456789"


@dataclass
class FakeEgress:
    """Records what the host would send; answers with ``body`` or raises ``error``."""

    sent: list[EgressRequest] = field(default_factory=list)
    body: bytes = b"{}"
    error: EgressError | None = None

    def send(self, request: EgressRequest) -> EgressResponse:
        self.sent.append(request)
        if self.error is not None:
            raise self.error
        return EgressResponse(200, "OK", (("X-Echo", KEY),), self.body, request.url)


def frame(url: str, *, method: str = "GET", headers: list[list[str]] | None = None, **extra: Any) -> dict[str, Any]:
    return {"op": "http", "id": 7, "method": method, "url": url, "headers": headers or [], "body": None, **extra}


@pytest.fixture
def egress() -> FakeEgress:
    return FakeEgress()


@pytest.fixture
def secrets() -> CallSecrets:
    return CallSecrets({"api_key": KEY})


@pytest.fixture
def forward(egress: FakeEgress, secrets: CallSecrets) -> Callable[..., dict[str, Any]]:
    """Handle a frame; ``{key}`` in it stands for the credential's placeholder."""
    forwarder = RequestForwarder(base_url=API, egress=egress, max_timeout=20.0)

    def send(message: dict[str, Any], deadline: float | None = None) -> dict[str, Any]:
        text = json.dumps(message).replace("{key}", secrets.placeholders["api_key"])
        return forwarder.handle(json.loads(text), secrets, deadline=deadline or time.monotonic() + 30)

    return send


@pytest.mark.parametrize(
    "url",
    [
        f"{API}",
        f"{API}/",
        f"{API}/items?page=2",
        f"{API}/items/7",
        "HTTPS://API.example.test:8443/v1/items",
    ],
)
def test_urls_under_the_api_url_are_sent(forward: Callable[..., dict[str, Any]], egress: FakeEgress, url: str) -> None:
    reply = forward(frame(url))
    assert (reply["op"], reply["id"], reply["status"]) == ("http_reply", 7, 200)
    assert [r.url for r in egress.sent] == [url]


@pytest.mark.parametrize(
    "url",
    [
        "https://evil.example.test:8443/v1/items",  # another host
        "https://api.example.test:8444/v1/items",  # another port
        "https://api.example.test/v1/items",  # the default port is another port
        "http://api.example.test:8443/v1/items",  # another scheme
        "https://api.example.test:8443/v10/items",  # another path prefix
        "https://api.example.test:8443/v2/items",
        "https://api.example.test:8443/v1/../admin",
        "https://api.example.test:8443/v1/%2e%2e/admin",
        "https://api.example.test:8443/v1/..%2fadmin",  # a server that decodes before it resolves
        "https://api.example.test:8443/v1/..;/admin",  # one that drops ;parameters
        "https://api.example.test:8443/v1/..\\admin",  # one that takes \ for /
        "https://user:pass@api.example.test:8443/v1/items",
        "file:///etc/passwd",
        "not a url",
    ],
)
def test_any_other_url_is_refused_before_anything_is_sent(
    forward: Callable[..., dict[str, Any]], egress: FakeEgress, url: str
) -> None:
    reply = forward(frame(url))
    assert reply["error"]["kind"] == "refused"
    assert reply["error"]["message"].startswith(f"the module may only reach URLs under its api_url ({API})")
    assert egress.sent == []


def test_credentials_go_into_the_url_headers_basic_auth_and_body(
    forward: Callable[..., dict[str, Any]], egress: FakeEgress, secrets: CallSecrets
) -> None:
    token = secrets.placeholders["api_key"]
    basic = base64.b64encode(f"me:{token}".encode()).decode()
    body = base64.b64encode(json.dumps({"key": token}).encode()).decode()
    forward(
        frame(
            f"{API}/items?key={{key}}",
            method="post",
            headers=[["X-API-Key", "{key}"], ["Authorization", f"Basic {basic}"], ["Content-Type", "application/json"]],
            body=body,
        )
    )
    (sent,) = egress.sent
    assert (sent.method, sent.url) == ("POST", f"{API}/items?key={KEY}")
    headers = dict(sent.headers)
    assert headers["X-API-Key"] == KEY
    assert base64.b64decode(headers["Authorization"][6:]) == f"me:{KEY}".encode()
    assert json.loads(sent.body or b"") == {"key": KEY}


def test_form_and_url_encodings_of_a_credential_are_escaped(egress: FakeEgress) -> None:
    secrets = CallSecrets({"token": "a b&c/d"})
    token = secrets.placeholders["token"]
    forwarder = RequestForwarder(base_url=API, egress=egress)
    form = base64.b64encode(f"token={token}".encode()).decode()
    message = frame(
        f"{API}/q?t={token}", method="POST", headers=[["Content-Type", "application/x-www-form-urlencoded"]], body=form
    )
    forwarder.handle(message, secrets, deadline=time.monotonic() + 30)
    (sent,) = egress.sent
    assert sent.url == f"{API}/q?t=a%20b%26c%2Fd"
    assert sent.body == b"token=a+b%26c%2Fd"


def test_the_answer_comes_back_without_the_credential(
    forward: Callable[..., dict[str, Any]], egress: FakeEgress
) -> None:
    egress.body = json.dumps({"raw": KEY, "quoted": json.dumps(KEY)}).encode()
    reply = forward(frame(f"{API}/me"))
    text = base64.b64decode(reply["body"]).decode() + json.dumps(reply["headers"])
    assert KEY not in text
    assert "tooldeck-credential-" in text


@pytest.mark.parametrize(
    ("message", "problem"),
    [
        (frame(f"{API}/x", method="CONNECT"), "the HTTP method must be one of"),
        (frame(f"{API}/x", headers=[["Bad Header", "x"]]), "a header name or value is not valid"),
        (frame(f"{API}/x", headers=[["X", "a\r\nHost: evil"]]), "holds a line break"),
        (frame(f"{API}/x", headers=cast(Any, "nope")), "at most 64 headers"),
        (frame(f"{API}/x", headers=[["X", "1", "2"]]), "[name, value] pair"),
        (frame(f"{API}/x", body="***"), "not valid base64"),
        (frame(f"{API}/x", body=base64.b64encode(b"x" * 2_000_000).decode()), "at most 1048576 bytes"),
        ({"op": "http", "id": 7, "url": 5}, "the HTTP method"),
    ],
)
def test_malformed_requests_are_refused(
    forward: Callable[..., dict[str, Any]], egress: FakeEgress, message: dict[str, Any], problem: str
) -> None:
    reply = forward(message)
    assert reply["error"]["kind"] == "refused" and problem in reply["error"]["message"], reply
    assert egress.sent == []


def test_a_credential_with_a_line_break_cannot_split_a_header(egress: FakeEgress) -> None:
    secrets = CallSecrets({"api_key": "abc\r\nX-Injected: 1"})
    message = frame(f"{API}/x", headers=[["X-API-Key", secrets.placeholders["api_key"]]])
    reply = RequestForwarder(base_url=API, egress=egress).handle(message, secrets, deadline=time.monotonic() + 30)
    assert reply["error"]["kind"] == "refused" and egress.sent == []
    assert "X-Injected" not in json.dumps(reply)


def test_hop_by_hop_and_host_headers_are_dropped(forward: Callable[..., dict[str, Any]], egress: FakeEgress) -> None:
    headers = [["Host", "evil.test"], ["Content-Length", "9"], ["Proxy-Authorization", "x"], ["Accept", "json"]]
    forward(frame(f"{API}/x", headers=headers))
    assert egress.sent[0].headers == (("Accept", "json"),)


def test_the_timeout_is_bounded_by_the_call_and_the_limit(
    forward: Callable[..., dict[str, Any]], egress: FakeEgress
) -> None:
    forward(frame(f"{API}/x", timeout=300))
    assert egress.sent[0].timeout == 20.0
    forward(frame(f"{API}/x", timeout=1.5))
    assert egress.sent[1].timeout == 1.5
    late = forward(frame(f"{API}/x"), deadline=time.monotonic() - 1)
    assert late["error"]["kind"] == "timeout" and len(egress.sent) == 2


def test_egress_failures_reach_the_worker_by_kind_without_secrets(
    forward: Callable[..., dict[str, Any]], egress: FakeEgress
) -> None:
    egress.error = EgressError("refused", f"Refused to load {API}/x?key={KEY}: it points to 10.0.0.1")
    reply = forward(frame(f"{API}/x?key={{key}}"))
    assert reply["error"]["kind"] == "refused"
    assert KEY not in reply["error"]["message"] and "[redacted]" in reply["error"]["message"]


def test_call_secrets_never_show_their_values() -> None:
    secrets = CallSecrets({"api_key": KEY, "pin": "12"})
    assert KEY not in repr(secrets) and KEY not in repr(vars(secrets)).replace(f"'{KEY}'", "")
    assert secrets.scrub(f"key {KEY} and {secrets.placeholders['api_key']}") == "key [redacted] and [redacted]"
    assert secrets.found_in(json.dumps({"t": KEY})) and secrets.found_in(secrets.placeholders["pin"])
    assert not secrets.found_in("12 apples")  # too short to search for
