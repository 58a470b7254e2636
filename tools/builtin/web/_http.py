"""GET a JSON document from a search API: timeouts, bounded body, tenacity retries.

Retries happen only at this I/O edge and only for failures that may pass: connection errors,
timeouts, HTTP 429 and 5xx. ``Retry-After`` (seconds) is honoured up to ``max_wait``.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import requests
import urllib3
from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception_type,
    stop_after_attempt,
    wait_exponential,
    wait_random,
)

from tools.errors import ToolTimeoutError, UpstreamError
from tools.resilience import parse_retry_after

logger = logging.getLogger(__name__)

_RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


@dataclass(frozen=True, slots=True)
class HttpOptions:
    """How a search backend talks HTTP.

    Attributes:
        connect_timeout: Seconds to open a connection.
        read_timeout: Seconds to wait for data.
        max_attempts: Tries in total for retryable failures (1 = no retry).
        initial_wait: First back-off in seconds (exponential with jitter after that).
        max_wait: Longest back-off, also the cap for ``Retry-After``.
        max_bytes: Largest response body accepted.
    """

    connect_timeout: float = 5.0
    read_timeout: float = 15.0
    max_attempts: int = 3
    initial_wait: float = 0.5
    max_wait: float = 8.0
    max_bytes: int = 5_000_000


class HttpStatusError(Exception):
    """A non-success HTTP status that retrying will not fix (or that stayed after retries)."""

    def __init__(self, status: int, retry_after: float | None = None) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status
        self.retry_after = retry_after


class _Transient(Exception):
    """A failure worth retrying; wraps the cause."""

    def __init__(self, cause: Exception, retry_after: float | None = None) -> None:
        super().__init__(str(cause))
        self.cause = cause
        self.retry_after = retry_after


class _RetryAfterWait:
    """Honour ``Retry-After`` when the server sent one, else exponential back-off."""

    def __init__(self, options: HttpOptions) -> None:
        self._max = options.max_wait
        self._fallback = wait_exponential(multiplier=options.initial_wait, max=options.max_wait) + wait_random(
            0, options.initial_wait
        )

    def __call__(self, state: RetryCallState) -> float:
        outcome = state.outcome
        error = outcome.exception() if outcome is not None else None
        if isinstance(error, _Transient) and error.retry_after is not None:
            return min(max(error.retry_after, 0.0), self._max)
        return float(self._fallback(state))


def get_json(
    session: requests.Session,
    url: str,
    *,
    label: str,
    params: Mapping[str, str | int],
    headers: Mapping[str, str],
    options: HttpOptions,
    sleep: Callable[[float], None] = time.sleep,
) -> Any:
    """GET ``url`` and parse the JSON body, retrying transient failures.

    Args:
        session: The requests session to use.
        url: The endpoint.
        label: The service name for messages (``"Brave Search"``); never a secret.
        params: Query parameters.
        headers: Request headers (may hold credentials: they are never logged).
        options: Timeouts, retry and size bounds.
        sleep: Called between attempts (injectable for tests).

    Raises:
        HttpStatusError: For a 4xx status other than 429, or a 429/5xx that outlived retries.
        ToolTimeoutError: When the service kept timing out.
        UpstreamError: For connection failures, oversized or non-JSON bodies.
    """
    retrying = Retrying(
        stop=stop_after_attempt(max(1, options.max_attempts)),
        wait=_RetryAfterWait(options),
        retry=retry_if_exception_type(_Transient),
        reraise=True,
        sleep=sleep,
    )
    try:
        body = retrying(_get_once, session, url, label=label, params=params, headers=headers, options=options)
    except _Transient as exc:
        cause = exc.cause
        if isinstance(cause, HttpStatusError):
            raise cause from None
        if isinstance(cause, requests.exceptions.Timeout):
            raise ToolTimeoutError(f"{label} did not answer in time; try again later.") from None
        raise UpstreamError(f"{label} could not be reached ({type(cause).__name__}).") from None
    try:
        return json.loads(body)
    except (ValueError, RecursionError) as exc:
        raise UpstreamError(f"{label} answered with something that is not JSON.") from exc


def _get_once(
    session: requests.Session,
    url: str,
    *,
    label: str,
    params: Mapping[str, str | int],
    headers: Mapping[str, str],
    options: HttpOptions,
) -> bytes:
    try:
        response = session.get(
            url,
            params=dict(params),
            headers=dict(headers),
            timeout=(options.connect_timeout, options.read_timeout),
            stream=True,
            allow_redirects=False,
        )
    except (requests.exceptions.ConnectionError, requests.exceptions.Timeout) as exc:
        logger.warning("%s request failed: %s", label, type(exc).__name__)
        raise _Transient(exc) from exc
    with response:
        status = response.status_code
        if status in _RETRY_STATUSES:
            retry_after = parse_retry_after(response.headers.get("retry-after"), now=time.time())
            logger.warning("%s answered HTTP %d", label, status)
            raise _Transient(HttpStatusError(status, retry_after), retry_after)
        if not 200 <= status < 300:
            raise HttpStatusError(status)
        return _read_bounded(response, label, options.max_bytes)


def _read_bounded(response: requests.Response, label: str, limit: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    try:
        for chunk in response.iter_content(65_536):
            size += len(chunk)
            if size > limit:
                raise UpstreamError(f"{label} sent a response larger than {limit} bytes.")
            chunks.append(chunk)
    except requests.exceptions.RequestException as exc:
        # requests reports a read timeout while streaming as a ConnectionError.
        if exc.args and isinstance(exc.args[0], urllib3.exceptions.ReadTimeoutError):
            raise _Transient(requests.exceptions.ReadTimeout(exc.args[0])) from exc
        raise _Transient(exc) from exc
    return b"".join(chunks)
