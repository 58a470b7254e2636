"""The console's front door: Host check, token cookie, same origin and CSRF on every change."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytest.importorskip("fastapi")

from fastapi import FastAPI, Request
from fastapi.responses import PlainTextResponse
from fastapi.testclient import TestClient

from orchestrator.ui.security import ConsoleSecurity, SecurityMiddleware, is_loopback, new_token

TOKEN = "a-token-of-thirty-two-characters"
ORIGIN = "http://127.0.0.1:8777"


def _app() -> FastAPI:
    app = FastAPI()

    @app.get("/page")
    def page() -> PlainTextResponse:
        return PlainTextResponse("the page")

    @app.post("/change")
    async def change(request: Request) -> PlainTextResponse:
        form = await request.form()
        return PlainTextResponse(f"changed {form.get('value')}")

    return app


@pytest.fixture
def security() -> ConsoleSecurity:
    return ConsoleSecurity(token=TOKEN, port=8777, hosts=frozenset({"console.example"}))


@pytest.fixture
def client(security: ConsoleSecurity) -> Iterator[TestClient]:
    with TestClient(SecurityMiddleware(_app(), security), base_url=ORIGIN) as test_client:
        yield test_client


@pytest.fixture
def signed_in(client: TestClient) -> TestClient:
    assert client.get(f"/page?token={TOKEN}").status_code == 200
    return client


def test_a_request_without_the_token_is_refused(client: TestClient) -> None:
    response = client.get("/page")
    assert response.status_code == 401
    assert "Not signed in" in response.text
    assert "the page" not in response.text


def test_the_token_in_the_url_becomes_a_strict_httponly_cookie_and_leaves_the_url(client: TestClient) -> None:
    response = client.get(f"/page?token={TOKEN}&tool=x", follow_redirects=False)
    assert response.status_code == 303
    assert response.headers["location"] == "/page?tool=x"
    cookie = response.headers["set-cookie"]
    assert cookie.startswith(f"tooldeck_console_8777={TOKEN};")
    assert "HttpOnly" in cookie
    assert "SameSite=Strict" in cookie
    assert client.get("/page").text == "the page"


@pytest.mark.parametrize("path", ["//evil.example/x", "/\\evil.example/x", "///evil.example"])
def test_the_redirect_after_the_token_stays_on_the_console(client: TestClient, path: str) -> None:
    response = client.get(f"{path}?token={TOKEN}", follow_redirects=False)
    assert response.status_code == 303
    assert response.headers["location"].startswith("/")
    assert not response.headers["location"].startswith(("//", "/\\"))


def test_a_wrong_token_is_refused_and_sets_nothing(client: TestClient) -> None:
    response = client.get("/page?token=not-the-token-at-all-1234", follow_redirects=False)
    assert response.status_code == 403
    assert "set-cookie" not in response.headers
    assert client.get("/page").status_code == 401


def test_every_answer_carries_the_security_headers(signed_in: TestClient) -> None:
    for response in (signed_in.get("/page"), signed_in.get("/nothing-here")):
        headers = response.headers
        assert "script-src 'self'" in headers["content-security-policy"]
        assert "frame-ancestors 'none'" in headers["content-security-policy"]
        assert "unsafe-inline" not in headers["content-security-policy"]
        assert headers["x-content-type-options"] == "nosniff"
        assert headers["x-frame-options"] == "DENY"
        assert headers["referrer-policy"] == "same-origin"
        assert headers["cache-control"] == "no-store"


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8777", "127.0.0.1.evil.example", "127.0.0.1:x"])
def test_a_host_header_that_is_not_the_console_is_refused_even_with_the_cookie(
    signed_in: TestClient, host: str
) -> None:
    """DNS rebinding: a page of evil.example made to resolve to 127.0.0.1 names its own host."""
    response = signed_in.get("/page", headers={"Host": host})
    assert response.status_code == 400
    assert "the page" not in response.text


@pytest.mark.parametrize("host", ["localhost:8777", "[::1]:8777", "127.0.0.1", "console.example:8777"])
def test_loopback_names_and_the_given_hosts_are_the_console(signed_in: TestClient, host: str) -> None:
    assert signed_in.get("/page", headers={"Host": host}).text == "the page"


def test_a_change_from_another_origin_is_refused(signed_in: TestClient, security: ConsoleSecurity) -> None:
    form = {"csrf_token": security.csrf_token, "value": "1"}
    response = signed_in.post("/change", data=form, headers={"Origin": "http://evil.example"})
    assert response.status_code == 403
    assert "another origin" in response.text
    response = signed_in.post("/change", data=form, headers={"Referer": "http://evil.example/page"})
    assert response.status_code == 403


def test_a_change_that_says_nowhere_it_comes_from_is_refused(signed_in: TestClient, security: ConsoleSecurity) -> None:
    response = signed_in.post("/change", data={"csrf_token": security.csrf_token, "value": "1"})
    assert response.status_code == 403
    assert "Origin or Referer" in response.text


def test_a_change_without_the_csrf_token_is_refused(signed_in: TestClient) -> None:
    response = signed_in.post("/change", data={"value": "1"}, headers={"Origin": ORIGIN})
    assert response.status_code == 403
    assert "CSRF" in response.text
    response = signed_in.post("/change", data={"value": "1", "csrf_token": "0" * 64}, headers={"Origin": ORIGIN})
    assert response.status_code == 403
    as_json = {"Origin": ORIGIN, "Content-Type": "application/json"}
    response = signed_in.post("/change", content=b'{"value": 1}', headers=as_json)
    assert response.status_code == 403


def test_a_change_from_the_console_reaches_the_app_with_its_form_intact(
    signed_in: TestClient, security: ConsoleSecurity
) -> None:
    form = {"csrf_token": security.csrf_token, "value": "añ & =x"}
    assert signed_in.post("/change", data=form, headers={"Origin": ORIGIN}).text == "changed añ & =x"
    referred = signed_in.post("/change", data=form, headers={"Referer": f"{ORIGIN}/page"})
    assert referred.text == "changed añ & =x"
    by_header = signed_in.post(
        "/change", data={"value": "h"}, headers={"Origin": ORIGIN, "X-CSRF-Token": security.csrf_token}
    )
    assert by_header.text == "changed h"


def test_a_change_needs_the_cookie_not_a_token_in_its_url(client: TestClient, security: ConsoleSecurity) -> None:
    response = client.post(
        f"/change?token={TOKEN}", data={"csrf_token": security.csrf_token}, headers={"Origin": ORIGIN}
    )
    assert response.status_code == 401


def test_an_oversized_form_is_refused_unread(signed_in: TestClient) -> None:
    body = b"value=" + b"x" * (1 << 20) + b"&csrf_token=whatever"
    response = signed_in.post(
        "/change", content=body, headers={"Origin": ORIGIN, "Content-Type": "application/x-www-form-urlencoded"}
    )
    assert response.status_code == 403
    assert "larger than" in response.text


def test_tokens_are_long_and_random_and_short_ones_are_refused() -> None:
    first, second = new_token(), new_token()
    assert first != second
    assert len(first) >= 40
    with pytest.raises(ValueError, match="at least 16 characters"):
        ConsoleSecurity(token="short", port=1)
    with pytest.raises(ValueError, match="only letters, digits"):
        ConsoleSecurity(token="a token; Path=/ with spaces", port=1)
    security = ConsoleSecurity(token=TOKEN, port=1)
    assert TOKEN not in security.csrf_token
    assert security.token_matches(TOKEN)
    assert not security.token_matches(TOKEN[:-1])
    assert not security.token_matches(None)


@pytest.mark.parametrize(
    ("host", "loopback"),
    [("127.0.0.1", True), ("127.1.2.3", True), ("::1", True), ("[::1]", True), ("localhost", True),
     ("0.0.0.0", False), ("192.168.1.4", False), ("example.com", False), ("::", False)],
)  # fmt: skip
def test_is_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_importing_the_console_package_imports_no_web_framework() -> None:
    """``tooldeck`` lists ``ui`` among its commands on every start: that costs no FastAPI import."""
    import subprocess
    import sys

    code = (
        "import sys, orchestrator.ui, orchestrator.ui.command\n"
        "print(sorted(m for m in ('fastapi', 'starlette', 'jinja2', 'uvicorn') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == "[]"


def test_a_protocol_relative_path_is_not_a_redirect_target(security: ConsoleSecurity) -> None:
    """Sent as raw ASGI (an HTTP client would normalise the path before sending it)."""
    import asyncio

    sent: list[dict[str, object]] = []

    async def receive() -> dict[str, object]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, object]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": "GET",
        "path": "//evil.example/x",
        "query_string": f"token={TOKEN}".encode(),
        "headers": [(b"host", b"127.0.0.1:8777")],
    }
    asyncio.run(SecurityMiddleware(_app(), security)(scope, receive, send))  # type: ignore[arg-type]
    headers = dict(sent[0]["headers"])  # type: ignore[call-overload]
    assert sent[0]["status"] == 303
    assert headers[b"location"] == b"/evil.example/x"
