"""HTTP GET with a timeout, a size cap and bounded tenacity retries, for the online adapters."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

import requests
from tenacity import (
    Retrying,
    retry_if_exception_type,
    stop_after_attempt,
    wait_exponential,
)

from shared.adapters.base import AdapterError

#: Largest response body an adapter reads (bytes); larger bodies are an error.
MAX_BODY_BYTES = 20 * 1024 * 1024

_RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


class _RetryableStatus(Exception):
    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


def safe_origin(url: str) -> str:
    """``scheme://host[:port]`` of ``url``: what may appear in errors (no path, no secrets)."""
    parts = urlsplit(url)
    host = parts.hostname or "?"
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}"


def http_get(
    session: requests.Session,
    url: str,
    *,
    params: Mapping[str, Any] | None = None,
    timeout: float,
    max_attempts: int,
    sleep: Callable[[float], None],
    max_bytes: int = MAX_BODY_BYTES,
    ok_statuses: frozenset[int] = frozenset(),
) -> bytes:
    """GET ``url`` and return its body.

    Connection errors, timeouts and 429/5xx answers are retried up to ``max_attempts``
    times with exponential backoff; other 4xx answers fail at once. Bodies larger than
    ``max_bytes`` are refused. A 4xx status listed in ``ok_statuses`` returns its body
    (APIs such as OSRM explain a failure in a JSON body). Errors name only the origin of
    the URL, never its path or query (which may carry tokens).

    Raises:
        AdapterError: The request failed for good.
    """
    retrying = Retrying(
        stop=stop_after_attempt(max_attempts),
        wait=wait_exponential(multiplier=0.2, max=2.0),
        retry=retry_if_exception_type((requests.ConnectionError, requests.Timeout, _RetryableStatus)),
        sleep=sleep,
        reraise=True,
    )
    origin = safe_origin(url)
    try:
        return retrying(
            _get_once,
            session,
            url,
            params=params,
            timeout=timeout,
            max_bytes=max_bytes,
            ok_statuses=ok_statuses,
        )
    except _RetryableStatus as exc:
        raise AdapterError(f"{origin} answered HTTP {exc.status}") from None
    except requests.Timeout:
        raise AdapterError(f"{origin} did not answer within {timeout:g} s") from None
    except requests.RequestException as exc:
        raise AdapterError(f"could not reach {origin} ({type(exc).__name__})") from None


def _get_once(
    session: requests.Session,
    url: str,
    *,
    params: Mapping[str, Any] | None,
    timeout: float,
    max_bytes: int,
    ok_statuses: frozenset[int],
) -> bytes:
    with session.get(url, params=params, timeout=timeout, stream=True) as response:
        if response.status_code in _RETRY_STATUSES:
            raise _RetryableStatus(response.status_code)
        if response.status_code >= 400 and response.status_code not in ok_statuses:
            raise AdapterError(f"{safe_origin(url)} answered HTTP {response.status_code}")
        body = bytearray()
        for chunk in response.iter_content(chunk_size=65536):
            body += chunk
            if len(body) > max_bytes:
                raise AdapterError(f"{safe_origin(url)} sent more than {max_bytes // (1024 * 1024)} MiB")
        return bytes(body)


def http_get_json(
    session: requests.Session,
    url: str,
    *,
    params: Mapping[str, Any] | None = None,
    timeout: float,
    max_attempts: int,
    sleep: Callable[[float], None],
    ok_statuses: frozenset[int] = frozenset(),
) -> Any:
    """:func:`http_get` and decode JSON; a body that is not JSON is an :class:`AdapterError`."""
    body = http_get(
        session,
        url,
        params=params,
        timeout=timeout,
        max_attempts=max_attempts,
        sleep=sleep,
        ok_statuses=ok_statuses,
    )
    try:
        return json.loads(body)
    except ValueError:
        raise AdapterError(f"{safe_origin(url)} answered with something that is not JSON") from None
