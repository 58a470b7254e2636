"""The host's side of a module's HTTP: check, put the credentials in, send, redact.

A module worker asks the host to send each request (an ``http`` frame). The host:

1. reads the frame strictly (method, absolute URL, headers, a bounded body);
2. refuses any URL outside the module's ``api_url`` (same scheme, host and port, a path
   under its path: :func:`~shared.modules.confined_http.within_base_url`);
3. replaces the credential *placeholders* the worker was given with the real values
   (:class:`CallSecrets`): in the URL (percent-encoded), in header values (inside
   ``Authorization: Basic`` too) and in the body (JSON- or form-encoded as its type says);
4. sends it through the :class:`~shared.modules.egress.ModuleEgress` (the address policy)
   within the call's remaining time;
5. replaces any credential in the answer by its placeholder before the worker sees it.

So the worker never holds key material: a module reads ``config["credentials"]["api_key"]``
and gets an opaque, per-call token that means something only in a request to its own API.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import secrets
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, quote_plus, urlsplit

from shared.modules.confined_http import within_base_url
from shared.modules.egress import EgressError, EgressRequest, ModuleEgress

__all__ = ["CallSecrets", "RequestForwarder"]

_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
#: Headers the egress sets itself, or that would change how the connection is used.
_DROPPED = frozenset(
    {"host", "content-length", "connection", "keep-alive", "te", "trailer", "transfer-encoding", "upgrade"}
)
_TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$")
_MAX_URL = 8192
_MAX_HEADERS = 64
_MAX_HEADER_VALUE = 8192
#: Secrets shorter than this are not searched for in answers (too many false matches).
MIN_SECRET_CHARS = 4


class _Refused(Exception):
    """The request is not sent; the message says why (no secret in it)."""


def _origin(url: str) -> str:
    try:
        parts = urlsplit(url)
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "an invalid URL"
    return f"{parts.scheme}://{parts.hostname or '?'}{port}"


class CallSecrets:
    """One call's credentials: placeholders for the worker, values kept by the host.

    Args:
        values: Credential name -> secret value (decrypted for this call only).
    """

    def __init__(self, values: Mapping[str, str]) -> None:
        self.placeholders = {name: f"tooldeck-credential-{secrets.token_hex(16)}" for name in values}
        self._pairs = [(self.placeholders[name], value) for name, value in values.items()]

    def __repr__(self) -> str:
        return f"CallSecrets({sorted(self.placeholders)})"

    @property
    def empty(self) -> bool:
        """Whether there are no credentials."""
        return not self._pairs

    def _searchable(self) -> list[tuple[str, str]]:
        return [(token, value) for token, value in self._pairs if len(value) >= MIN_SECRET_CHARS]

    def inject_url(self, url: str) -> str:
        """``url`` with each placeholder replaced by its value, percent-encoded."""
        for token, value in self._pairs:
            url = url.replace(token, quote(value, safe=""))
        return url

    def inject_header(self, name: str, value: str) -> str:
        """A header value with the placeholders replaced (also inside ``Basic`` auth)."""
        scheme, _, encoded = value.partition(" ")
        if name.lower() == "authorization" and scheme.lower() == "basic" and encoded:
            try:
                decoded = base64.b64decode(encoded.strip(), validate=True).decode("utf-8")
            except (binascii.Error, UnicodeDecodeError):
                return value
            return f"{scheme} " + base64.b64encode(self._replace(decoded).encode("utf-8")).decode("ascii")
        return self._replace(value)

    def inject_body(self, body: bytes, content_type: str) -> bytes:
        """The body with the placeholders replaced, encoded as its content type needs."""
        kind = content_type.lower()
        for token, value in self._pairs:
            if "json" in kind:
                encoded = json.dumps(value)[1:-1]
            elif "x-www-form-urlencoded" in kind:
                encoded = quote_plus(value)
            else:
                encoded = value
            body = body.replace(token.encode("ascii"), encoded.encode("utf-8"))
        return body

    def _replace(self, text: str) -> str:
        for token, value in self._pairs:
            text = text.replace(token, value)
        return text

    def redact_bytes(self, data: bytes) -> bytes:
        """``data`` with every credential (raw, JSON-escaped or percent-encoded) put back as its placeholder."""
        for token, value in self._searchable():
            for form in dict.fromkeys((value, json.dumps(value)[1:-1], quote(value, safe=""))):
                data = data.replace(form.encode("utf-8"), token.encode("ascii"))
        return data

    def redact_text(self, text: str) -> str:
        """Like :meth:`redact_bytes`, for text."""
        return self.redact_bytes(text.encode("utf-8", "surrogatepass")).decode("utf-8", "replace")

    def scrub(self, text: str) -> str:
        """``text`` with every credential and placeholder replaced by ``[redacted]``."""
        for token, value in self._pairs:
            text = text.replace(token, "[redacted]")
            if len(value) >= MIN_SECRET_CHARS:
                text = text.replace(value, "[redacted]").replace(json.dumps(value)[1:-1], "[redacted]")
        return text

    def found_in(self, text: str) -> bool:
        """Whether ``text`` (e.g. records as JSON) holds a credential or a placeholder."""
        return any(token in text for token, _ in self._pairs) or any(
            value in text or json.dumps(value)[1:-1] in text for _, value in self._searchable()
        )


class RequestForwarder:
    """Sends the HTTP requests of one module's worker, confined to its ``api_url``.

    Args:
        base_url: The module's ``api_url``.
        egress: Sends the checked requests (the address policy).
        max_request_bytes: Largest request body passed on.
        max_timeout: Most seconds one request may take (also bounded by the call).
    """

    def __init__(
        self, *, base_url: str, egress: ModuleEgress, max_request_bytes: int = 1024 * 1024, max_timeout: float = 30.0
    ) -> None:
        self._base_url = base_url
        self._egress = egress
        self._max_body = max_request_bytes
        self._max_timeout = max_timeout

    def handle(self, frame: Mapping[str, Any], call_secrets: CallSecrets, *, deadline: float) -> dict[str, Any]:
        """Answer one ``http`` frame with an ``http_reply`` frame (never raises for bad input)."""
        reply_id = frame.get("id") if isinstance(frame.get("id"), int) else None
        try:
            request = self._checked(frame, call_secrets, deadline)
            response = self._egress.send(request)
        except _Refused as exc:
            return {"op": "http_reply", "id": reply_id, "error": {"kind": "refused", "message": str(exc)}}
        except EgressError as exc:
            message = call_secrets.scrub(exc.message)
            return {"op": "http_reply", "id": reply_id, "error": {"kind": exc.kind, "message": message}}
        return {
            "op": "http_reply",
            "id": reply_id,
            "status": response.status,
            "reason": response.reason[:200],
            "url": call_secrets.redact_text(response.url),
            "headers": [[name, call_secrets.redact_text(value)] for name, value in response.headers],
            "body": base64.b64encode(call_secrets.redact_bytes(response.body)).decode("ascii"),
        }

    def _checked(self, frame: Mapping[str, Any], call_secrets: CallSecrets, deadline: float) -> EgressRequest:
        method, url = frame.get("method"), frame.get("url")
        if not isinstance(method, str) or method.upper() not in _METHODS:
            raise _Refused(f"the HTTP method must be one of {', '.join(sorted(_METHODS))}")
        if not isinstance(url, str) or not url or len(url) > _MAX_URL:
            raise _Refused("the request has no valid URL")
        if not within_base_url(url, self._base_url):
            raise _Refused(
                f"the module may only reach URLs under its api_url ({self._base_url}); "
                f"refused a request to {_origin(url)}"
            )
        headers = self._headers(frame.get("headers"), call_secrets)
        body = self._body(frame.get("body"), headers, call_secrets)
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise EgressError("timeout", "the call ran out of time before the request was sent")
        asked = frame.get("timeout")
        timeout = float(asked) if isinstance(asked, (int, float)) and asked > 0 else self._max_timeout
        return EgressRequest(
            method=method.upper(),
            url=call_secrets.inject_url(url),
            headers=headers,
            body=body,
            timeout=min(timeout, remaining, self._max_timeout),
        )

    @staticmethod
    def _headers(raw: Any, call_secrets: CallSecrets) -> tuple[tuple[str, str], ...]:
        if not isinstance(raw, list) or len(raw) > _MAX_HEADERS:
            raise _Refused(f"the request must have at most {_MAX_HEADERS} headers")
        headers: list[tuple[str, str]] = []
        for item in raw:
            if not (isinstance(item, list) and len(item) == 2 and all(isinstance(part, str) for part in item)):
                raise _Refused("each header must be a [name, value] pair of strings")
            name, value = item
            if not _TOKEN.match(name) or len(value) > _MAX_HEADER_VALUE:
                raise _Refused("a header name or value is not valid")
            if name.lower() in _DROPPED or name.lower().startswith("proxy-"):
                continue
            value = call_secrets.inject_header(name, value)
            if any(char in value for char in "\r\n\0"):
                raise _Refused(f"the value of the header {name!r} holds a line break")
            headers.append((name, value))
        return tuple(headers)

    def _body(self, raw: Any, headers: tuple[tuple[str, str], ...], call_secrets: CallSecrets) -> bytes | None:
        if raw is None:
            return None
        if not isinstance(raw, str) or len(raw) > self._max_body * 4 // 3 + 4:
            raise _Refused(f"request bodies may be at most {self._max_body} bytes")
        try:
            body = base64.b64decode(raw, validate=True)
        except binascii.Error:
            raise _Refused("the request body is not valid base64") from None
        content_type = next((value for name, value in headers if name.lower() == "content-type"), "")
        return call_secrets.inject_body(body, content_type)
