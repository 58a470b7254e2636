"""Who may talk to the console, and how a page may change anything.

The console can run tools and approve calls, so every request is checked before it reaches a
page (:class:`SecurityMiddleware`, plain ASGI):

* **Host.** The ``Host`` header must name the console (a loopback name, or the host it was
  started for): a page of another site whose name was made to resolve to 127.0.0.1 (DNS
  rebinding) is refused before anything else.
* **Token.** A random token (``secrets.token_urlsafe``) is printed in the URL at start, like
  Jupyter's. The first request carrying ``?token=`` gets it back as an ``HttpOnly``,
  ``SameSite=Strict`` cookie and is redirected to the same address without it (so the token
  stays out of the history and of ``Referer``); every later request needs the cookie. A
  request without either is refused.
* **Same origin.** A request that changes anything (``POST``, ``PUT``, ``PATCH``,
  ``DELETE``) needs the cookie (a token in its URL is not enough), an ``Origin`` header that
  is the console's own (or, without one, a ``Referer`` on the console), and the CSRF token of
  the page it came from: the ``csrf_token`` form field, or the ``X-CSRF-Token`` header the
  console's script sends.
* **Headers.** Every answer carries a strict Content-Security-Policy (only the console's own
  script and style, no inline script, no frames), ``nosniff``, ``no-store``, and a
  ``Referrer-Policy`` that keeps addresses inside the console.

Tokens are compared in constant time (:func:`hmac.compare_digest`).
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import re
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

__all__ = ["LOOPBACK_NAMES", "ConsoleSecurity", "SecurityMiddleware", "is_loopback", "new_token"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: Host names that always reach this machine only.
LOOPBACK_NAMES: frozenset[str] = frozenset({"localhost", "127.0.0.1", "::1"})
#: Shortest token accepted from ``--token``.
MIN_TOKEN_CHARS = 16
_TOKEN_CHARS = re.compile(r"[A-Za-z0-9._~-]+")
#: Largest form body read for its CSRF token.
MAX_FORM_BYTES = 1 << 20
_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy", _CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
    (b"cache-control", b"no-store"),
)


def new_token() -> str:
    """A fresh random token (43 URL-safe characters, 256 bits)."""
    return secrets.token_urlsafe(32)


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address) reaches this machine only."""
    name = host.strip().strip("[]").lower()
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class ConsoleSecurity:
    """The console's credentials and the names it answers to.

    Args:
        token: The secret in the printed URL (at least 16 characters).
        port: The port served (it names the cookie, so consoles on two ports keep theirs).
        hosts: Host names the console answers to besides the loopback names.

    Raises:
        ValueError: a token shorter than 16 characters.
    """

    token: str
    port: int
    hosts: frozenset[str] = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        if len(self.token) < MIN_TOKEN_CHARS:
            raise ValueError(
                f"the console token must have at least {MIN_TOKEN_CHARS} characters (got {len(self.token)}); "
                "leave --token out for a random one"
            )
        if not _TOKEN_CHARS.fullmatch(self.token):
            raise ValueError(
                "the console token may hold only letters, digits and . _ ~ - (it goes into a URL and a cookie); "
                "e.g. the output of `openssl rand -hex 24`"
            )

    @property
    def cookie_name(self) -> str:
        """The cookie that carries the token."""
        return f"tooldeck_console_{self.port}"

    @property
    def csrf_token(self) -> str:
        """The token pages put in their forms (derived from the secret; it does not reveal it)."""
        return hmac.new(self.token.encode(), b"tooldeck-console-csrf", hashlib.sha256).hexdigest()

    def allows_host(self, header: str) -> bool:
        """Whether a ``Host`` header names this console."""
        name = _host_name(header)
        return name is not None and (is_loopback(name) or name in {h.lower() for h in self.hosts})

    def token_matches(self, given: str | None) -> bool:
        """Whether ``given`` is the token (constant time)."""
        return given is not None and hmac.compare_digest(given.encode(), self.token.encode())

    def csrf_matches(self, given: str | None) -> bool:
        """Whether ``given`` is the CSRF token (constant time)."""
        return given is not None and hmac.compare_digest(given.encode(), self.csrf_token.encode())

    def cookie_header(self) -> bytes:
        """The ``Set-Cookie`` value that hands the token to the browser."""
        return f"{self.cookie_name}={self.token}; HttpOnly; SameSite=Strict; Path=/".encode()


def _host_name(header: str) -> str | None:
    """The name part of a ``Host`` header (``[::1]:8777`` -> ``::1``), lower-cased; None if malformed."""
    text = header.strip().lower()
    if not text:
        return None
    if text.startswith("["):
        end = text.find("]")
        return text[1:end] if end > 0 else None
    name, _, port = text.partition(":")
    if port and not port.isdigit():
        return None
    return name or None


class SecurityMiddleware:
    """The checks of the module docstring, in front of the console's ASGI app.

    Args:
        app: The console application.
        security: Its credentials.
    """

    def __init__(self, app: ASGIApp, security: ConsoleSecurity) -> None:
        self.app = app
        self.security = security

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Check the request, then hand it to the app with the security headers added."""
        if scope["type"] != "http":
            if scope["type"] == "lifespan":
                await self.app(scope, receive, send)
            return  # websockets: none are served
        headers = _headers(scope)
        send = _with_headers(send)
        if not self.security.allows_host(headers.get("host", "")):
            await _refuse(
                send,
                400,
                "This console answers only to its own address (the Host header names another site). "
                "Open the URL tooldeck ui printed.",
            )
            return
        method = scope["method"]
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True))
        if "token" in query and method in ("GET", "HEAD"):
            await self._login(scope, query, send)
            return
        if not self.security.token_matches(_cookie(headers, self.security.cookie_name)):
            await _refuse(
                send,
                401,
                "Not signed in: open the URL tooldeck ui printed when it started (it carries ?token=...). "
                "Restarting tooldeck ui prints a new one.",
            )
            return
        if method in _CHANGING:
            problem = self._origin_problem(headers)
            if problem is None:
                receive, problem = await self._csrf_problem(headers, receive)
            if problem is not None:
                await _refuse(send, 403, problem)
                return
        await self.app(scope, receive, send)

    async def _login(self, scope: Scope, query: dict[str, str], send: Send) -> None:
        """``?token=``: set the cookie and redirect to the same address without the token."""
        if not self.security.token_matches(query.get("token")):
            await _refuse(send, 403, "That token is not this console's; open the URL tooldeck ui printed last.")
            return
        rest = {k: v for k, v in query.items() if k != "token"}
        path = "/" + str(scope["path"]).lstrip("/\\")  # never "//host": the redirect stays on the console
        target = path + (f"?{urlencode(rest)}" if rest else "")
        await send(
            {
                "type": "http.response.start",
                "status": 303,
                "headers": [(b"location", target.encode()), (b"set-cookie", self.security.cookie_header())],
            }
        )
        await send({"type": "http.response.body", "body": b""})

    def _origin_problem(self, headers: dict[str, str]) -> str | None:
        """Why a changing request is not from the console's own pages (None: it is)."""
        own = "http://" + headers.get("host", "").strip().lower()
        origin = headers.get("origin")
        if origin is not None:
            if origin.strip().lower() == own:
                return None
            return f"refused: a request from another origin ({origin[:80]}) cannot change anything here"
        referer = headers.get("referer")
        if referer is not None:
            parts = urlsplit(referer.strip())
            if f"{parts.scheme}://{parts.netloc}".lower() == own:
                return None
            return "refused: a request from another page (Referer) cannot change anything here"
        return "refused: a request that changes something must say where it comes from (Origin or Referer)"

    async def _csrf_problem(self, headers: dict[str, str], receive: Receive) -> tuple[Receive, str | None]:
        """Check the CSRF token (header, or the form's ``csrf_token``); returns the receive to
        hand on (the body replayed when it was read) and the problem, if any."""
        if self.security.csrf_matches(headers.get("x-csrf-token")):
            return receive, None
        kind = headers.get("content-type", "").split(";")[0].strip().lower()
        if kind != "application/x-www-form-urlencoded":
            return receive, "refused: the request carries no CSRF token; reload the page and try again"
        body, complete = await _read_body(receive, MAX_FORM_BYTES)
        if not complete:
            return receive, f"refused: the form is larger than {MAX_FORM_BYTES} bytes"
        fields = dict(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))
        if not self.security.csrf_matches(fields.get("csrf_token")):
            return receive, "refused: the form's CSRF token is missing or stale; reload the page and try again"
        return _replay(body, receive), None


def _headers(scope: Scope) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in scope.get("headers", []):
        name = key.decode("latin-1").lower()
        if name not in out:  # the first of repeated headers (a second Host is not believed)
            out[name] = value.decode("latin-1")
    return out


def _cookie(headers: dict[str, str], name: str) -> str | None:
    for part in headers.get("cookie", "").split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value
    return None


def _with_headers(send: Send) -> Send:
    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            present = {key.lower() for key, _ in message.get("headers", [])}
            extra = [(key, value) for key, value in _HEADERS if key not in present]
            message["headers"] = [*message.get("headers", []), *extra]
        await send(message)

    return sending


async def _refuse(send: Send, status: int, text: str) -> None:
    body = (
        "<!doctype html><html><head><meta charset=utf-8><title>tooldeck console</title></head>"
        f"<body><h1>tooldeck console</h1><p>{_escape(text)}</p></body></html>"
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"text/html; charset=utf-8"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


async def _read_body(receive: Receive, limit: int) -> tuple[bytes, bool]:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(chunks), False
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return b"", False
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks), True


def _replay(body: bytes, then: Receive) -> Receive:
    """The body read already, then the connection's own messages (its disconnect)."""
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if sent:
            return await then()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return receive
