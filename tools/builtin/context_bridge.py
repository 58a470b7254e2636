"""ContextBridge: the tool side's client of the context service.

``fetch`` asks ``GET /context`` for some categories, ``query_finance`` asks
``GET /context/finance/query``, and ``normalize`` turns a ``/context`` answer into what a
tool shows the model by delegating each category to its adapter's ``normalize_for_tools``
(no per-category switch here). Nothing here raises for a failing service: down, slow,
5xx, a wrong key or garbage all become per-category ``unavailable`` statuses with a
reason, within ``timeout`` seconds in total (retries included).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

import requests
from tenacity import RetryCallState, Retrying, retry_if_exception_type, stop_after_attempt

from shared.adapters import KNOWN_CATEGORIES, AdapterRegistry

__all__ = ["ContextBridge"]

logger = logging.getLogger(__name__)

_RETRY_STATUSES = frozenset({429, 502, 503, 504})
_MIN_ATTEMPT_SECONDS = 0.05
_SHAPE_ERRORS = (TypeError, KeyError, ValueError, AttributeError, IndexError)


class _Unavailable(Exception):
    """The service could not give an answer; ``reason`` is safe to show."""

    def __init__(self, reason: str, *, retry: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry = retry


class _RetryableFailure(_Unavailable):
    pass


class ContextBridge:
    """Client of the context service, injected into ``UserContextTool``.

    Args:
        dashboard_url: Base URL of the context service, e.g. ``http://127.0.0.1:8765``.
        api_key: Sent as ``X-API-Key``; never logged nor put in results.
        timeout: Total seconds one ``fetch``/``query_finance`` may take, retries included.
        session: The ``requests.Session`` to use (one is created when omitted).
        adapters: Registry whose adapter classes normalize each category (default: the
            built-in adapters).
        max_attempts: Attempts for connection errors and 429/502/503/504 answers.
        max_response_bytes: Larger answers are refused (reported as unavailable).
        sleep: Used between retries; tests pass a no-op.
        monotonic: Seconds clock for the time budget.
    """

    def __init__(
        self,
        dashboard_url: str,
        api_key: str | None = None,
        timeout: float = 10,
        *,
        session: requests.Session | None = None,
        adapters: AdapterRegistry | None = None,
        max_attempts: int = 3,
        max_response_bytes: int = 8 * 1024 * 1024,
        sleep: Callable[[float], None] = time.sleep,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        parts = urlsplit(dashboard_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"dashboard_url must be an http(s) URL, got {dashboard_url!r}")
        if timeout <= 0:
            raise ValueError("timeout must be positive")
        self._base = dashboard_url.rstrip("/")
        self._origin = f"{parts.scheme}://{parts.hostname}" + (f":{parts.port}" if parts.port else "")
        self._api_key = api_key
        self._timeout = float(timeout)
        self._session = session if session is not None else requests.Session()
        self._adapters = adapters if adapters is not None else AdapterRegistry.with_builtin_adapters()
        self._max_attempts = max(1, max_attempts)
        self._max_bytes = max_response_bytes
        self._sleep = sleep
        self._monotonic = monotonic

    def __repr__(self) -> str:
        return f"ContextBridge({self._base!r}, timeout={self._timeout:g})"

    # -- public -------------------------------------------------------------------------

    def fetch(
        self,
        categories: Sequence[str] | None,
        user_id: str = "default",
        *,
        destination: str | None = None,
    ) -> dict[str, Any]:
        """The ``/context`` answer for ``categories`` (None: all), never raising.

        On any failure (connection refused, slower than ``timeout`` in total, 5xx, 401,
        an answer that is not JSON, of the wrong shape, or larger than
        ``max_response_bytes``) every requested category comes back as
        ``{"status": "unavailable", "data": None, "reason": ...}``; categories missing
        from an otherwise valid answer are filled the same way. The reason never holds
        the API key.
        """
        wanted = list(dict.fromkeys(categories)) if categories else None
        params: dict[str, str] = {"user_id": user_id, "categories": ",".join(wanted or ["all"])}
        if destination:
            params["destination"] = destination
        try:
            body = self._get_json("/context", params)
            answered = body["categories"]
            if not isinstance(answered, dict) or not all(
                isinstance(v, dict) and isinstance(v.get("status"), str) for v in answered.values()
            ):
                raise _Unavailable("the context service answered with an unexpected shape")
        except _Unavailable as exc:
            return self._unavailable(wanted or list(KNOWN_CATEGORIES), user_id, exc.reason)
        except _SHAPE_ERRORS:
            return self._unavailable(
                wanted or list(KNOWN_CATEGORIES),
                user_id,
                "the context service answered with an unexpected shape",
            )
        for category in wanted or []:
            answered.setdefault(
                category,
                {
                    "status": "unavailable",
                    "data": None,
                    "reason": "missing from the service's answer",
                },
            )
        return {
            "user_id": user_id,
            "generated_at": body.get("generated_at"),
            "timezone": body.get("timezone"),
            "categories": answered,
        }

    def normalize(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        """Shape a :meth:`fetch` answer for tools via each category's ``normalize_for_tools``.

        Categories with data are replaced by their adapter's summary plus ``status``;
        others keep ``status`` and ``reason``. A category whose data has the wrong shape
        becomes ``unavailable``. Never raises.
        """
        categories = raw.get("categories") if isinstance(raw, Mapping) else None
        out: dict[str, Any] = {}
        for category, entry in (categories or {}).items():
            out[str(category)] = self._normalize_one(str(category), entry)
        return {
            "user_id": raw.get("user_id") if isinstance(raw, Mapping) else None,
            "generated_at": raw.get("generated_at") if isinstance(raw, Mapping) else None,
            "categories": out,
        }

    def query_finance(self, user_id: str, query: Mapping[str, Any]) -> dict[str, Any]:
        """Run a finance query server-side; never raises.

        Returns:
            ``{"status": "ok"|"partial", "result": {...}, "errors": [...]}``, or
            ``{"status": "unavailable"|"error"|"not_configured"|"invalid", "reason": ...}``.
        """
        params = {"user_id": user_id}
        params.update({k: str(v) for k, v in query.items() if v is not None})
        try:
            body = self._get_json("/context/finance/query", params, invalid_ok=True)
        except _Unavailable as exc:
            return {"status": "unavailable", "reason": exc.reason}
        if not isinstance(body, dict) or not isinstance(body.get("status"), str):
            return {
                "status": "unavailable",
                "reason": "the context service answered with an unexpected shape",
            }
        return body

    # -- internals ----------------------------------------------------------------------

    def _normalize_one(self, category: str, entry: Any) -> dict[str, Any]:
        if not isinstance(entry, Mapping):
            return {"status": "unavailable", "reason": "the service sent no usable entry"}
        status = str(entry.get("status") or "unavailable")
        reason = entry.get("reason")
        if status not in ("ok", "partial") or entry.get("data") is None:
            return {"status": status, "reason": reason}
        platforms = entry.get("platforms") or [None]
        cls = self._adapters.normalizer(category, platforms[0] if isinstance(platforms, list) else None)
        if cls is None:
            return {"status": status, "reason": reason, "data": entry.get("data")}
        try:
            summary = cls.normalize_for_tools(entry["data"])
        except _SHAPE_ERRORS:
            logger.warning("context service sent %s data of an unexpected shape", category)
            return {
                "status": "unavailable",
                "reason": f"the service sent {category} data of an unexpected shape",
            }
        result: dict[str, Any] = {"status": status, **summary}
        if reason:
            result["reason"] = reason
        return result

    def _unavailable(self, categories: Sequence[str], user_id: str, reason: str) -> dict[str, Any]:
        return {
            "user_id": user_id,
            "generated_at": None,
            "timezone": None,
            "categories": {c: {"status": "unavailable", "data": None, "reason": reason} for c in categories},
        }

    def _get_json(self, path: str, params: Mapping[str, str], *, invalid_ok: bool = False) -> Any:
        deadline = self._monotonic() + self._timeout

        def remaining() -> float:
            return deadline - self._monotonic()

        def stop(state: RetryCallState) -> bool:
            return stop_after_attempt(self._max_attempts)(state) or remaining() <= _MIN_ATTEMPT_SECONDS

        def wait(state: RetryCallState) -> float:
            backoff: float = min(0.1 * 2.0 ** (state.attempt_number - 1), 1.0)
            return max(0.0, min(backoff, remaining() - _MIN_ATTEMPT_SECONDS))

        retrying = Retrying(
            stop=stop,
            wait=wait,
            retry=retry_if_exception_type(_RetryableFailure),
            sleep=self._sleep,
            reraise=True,
        )
        return retrying(self._attempt, path, params, remaining, invalid_ok)

    def _attempt(self, path: str, params: Mapping[str, str], remaining: Callable[[], float], invalid_ok: bool) -> Any:
        budget = remaining()
        if budget <= 0:
            raise _Unavailable(f"the context service did not answer within {self._timeout:g} s")
        headers = {"Accept": "application/json"}
        if self._api_key:
            headers["X-API-Key"] = self._api_key
        try:
            with self._session.get(
                self._base + path, params=params, headers=headers, timeout=budget, stream=True
            ) as response:
                body = self._read(response, remaining)
                status = response.status_code
        except requests.Timeout:
            raise _Unavailable(f"the context service did not answer within {self._timeout:g} s") from None
        except requests.ConnectionError:
            raise _RetryableFailure(f"cannot connect to the context service at {self._origin}") from None
        except requests.RequestException as exc:
            raise _Unavailable(f"request to the context service failed ({type(exc).__name__})") from None
        return self._decode(status, body, invalid_ok)

    def _read(self, response: requests.Response, remaining: Callable[[], float]) -> bytes:
        body = bytearray()
        for chunk in response.iter_content(chunk_size=65536):
            body += chunk
            if len(body) > self._max_bytes:
                raise _Unavailable("the context service's answer is too large")
            if remaining() <= 0:
                raise _Unavailable(f"the context service did not answer within {self._timeout:g} s")
        return bytes(body)

    def _decode(self, status: int, body: bytes, invalid_ok: bool) -> Any:
        if status in _RETRY_STATUSES:
            raise _RetryableFailure(f"the context service is unavailable (HTTP {status})")
        if status == 401:
            raise _Unavailable("the context service rejected the API key (HTTP 401)")
        if status >= 500:
            raise _Unavailable(f"the context service failed (HTTP {status})")
        try:
            data = json.loads(body)
        except ValueError:
            raise _Unavailable("the context service answered with something that is not JSON") from None
        if status in (404, 422) and isinstance(data, dict) and isinstance(data.get("error"), str):
            if status == 422 and invalid_ok:
                return {"status": "invalid", "reason": data["error"][:500]}
            raise _Unavailable(data["error"][:500])
        if status != 200:
            raise _Unavailable(f"the context service answered HTTP {status}")
        return data
