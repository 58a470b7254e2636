"""The worker's HTTP client: a ``requests`` session whose every request goes over the pipe.

A module's adapter gets :func:`pipe_session` as its ``http_session()``. The session works
like any ``requests.Session`` (``get``/``post``, ``params``, ``json``, ``auth``,
redirects, ``response.json()``), but its transport, :class:`PipeAdapter`, sends nothing
itself: it hands each request (each redirect hop too) to the host as an ``http`` frame and
builds the response from the host's ``http_reply``. The worker has no network of its own;
the host decides what is sent (the module's ``api_url`` only, within the address policy)
and puts the credentials in.

Failures come back as ``requests`` exceptions, so modules handle them as they would
handle a real network: :class:`RefusedByHost` (a URL outside ``api_url``, an address the
policy refuses), ``requests.Timeout``, ``requests.ConnectionError``.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Callable, Mapping
from typing import Any

import requests
from requests.adapters import BaseAdapter
from requests.structures import CaseInsensitiveDict
from requests.utils import get_encoding_from_headers

__all__ = ["PipeAdapter", "RefusedByHost", "ResponseTooLarge", "pipe_session"]

#: Sends one ``http`` frame and returns the host's ``http_reply``.
Exchange = Callable[[dict[str, Any]], dict[str, Any]]


class RefusedByHost(requests.exceptions.RequestException):
    """The host refused to send the request (outside ``api_url``, or a refused address)."""


class ResponseTooLarge(requests.exceptions.RequestException):
    """The answer was larger than the host passes on."""


def _seconds(timeout: Any, default: float) -> float:
    if isinstance(timeout, tuple):
        parts = [t for t in timeout if isinstance(t, (int, float))]
        return float(sum(parts)) if parts else default
    return float(timeout) if isinstance(timeout, (int, float)) else default


class PipeAdapter(BaseAdapter):  # type: ignore[misc,unused-ignore]
    """A ``requests`` transport that asks the host to send each request.

    Args:
        exchange: Sends an ``http`` frame, returns the ``http_reply``.
        timeout: Seconds per request when the module passes none.
    """

    def __init__(self, exchange: Exchange, *, timeout: float) -> None:
        super().__init__()
        self._exchange = exchange
        self._timeout = timeout

    def send(  # noqa: PLR0917 - requests' signature
        self,
        request: requests.PreparedRequest,
        stream: bool = False,
        timeout: Any = None,
        verify: Any = True,
        cert: Any = None,
        proxies: Mapping[str, str] | None = None,
    ) -> requests.Response:
        """Forward ``request`` to the host and return its answer as a ``Response``."""
        body = request.body
        if isinstance(body, str):
            body = body.encode("utf-8")
        if body is not None and not isinstance(body, bytes):
            raise requests.exceptions.InvalidBody("streamed request bodies are not supported; send bytes")
        reply = self._exchange(
            {
                "op": "http",
                "method": request.method or "GET",
                "url": request.url or "",
                "headers": [[str(k), str(v)] for k, v in request.headers.items()],
                "body": base64.b64encode(body).decode("ascii") if body else None,
                "timeout": _seconds(timeout, self._timeout),
            }
        )
        error = reply.get("error")
        if isinstance(error, dict):
            raise _exception(error, request)
        return _response(reply, request)

    def close(self) -> None:
        """Nothing to close: the pipe belongs to the worker."""


def _exception(error: Mapping[str, Any], request: requests.PreparedRequest) -> requests.RequestException:
    message = str(error.get("message") or "the request failed")
    kinds: dict[str, type[requests.RequestException]] = {
        "refused": RefusedByHost,
        "timeout": requests.exceptions.ReadTimeout,
        "too_large": ResponseTooLarge,
    }
    return kinds.get(str(error.get("kind")), requests.exceptions.ConnectionError)(message, request=request)


def _response(reply: Mapping[str, Any], request: requests.PreparedRequest) -> requests.Response:
    body = base64.b64decode(str(reply.get("body") or ""))
    headers = reply.get("headers") or []
    response = requests.Response()
    response.status_code = int(reply.get("status") or 0)
    response.reason = str(reply.get("reason") or "")
    response.headers = CaseInsensitiveDict({str(k): str(v) for k, v in headers})
    response.url = str(reply.get("url") or request.url or "")
    response.encoding = get_encoding_from_headers(response.headers)
    response.request = request
    response.raw = io.BytesIO(body)  # read by .content / .iter_content like a socket's stream
    return response


def pipe_session(exchange: Exchange, *, timeout: float) -> requests.Session:
    """A ``requests.Session`` whose only transport is a :class:`PipeAdapter`."""
    session = requests.Session()
    session.trust_env = False
    session.proxies = {}
    session.adapters.clear()
    adapter = PipeAdapter(exchange, timeout=timeout)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session
