"""Call HTTP APIs as tools: :class:`HTTPAdapter` (adapter type ``"http"``).

Each action is an :class:`~tools.external.config.HTTPEndpoint`. Calls retry (tenacity) on 429,
5xx and connection errors, honouring ``Retry-After`` (seconds or an HTTP date, capped by
:attr:`HTTPConfig.retry_after_cap`). Status codes map to error types: 401/403 ->
``permission_denied``; 400/404/422 -> ``validation_error`` with the server's message; 429/5xx
after the last attempt -> ``upstream_error`` (retryable); other 4xx -> ``upstream_error``;
timeouts -> ``timeout``. Redirects are followed unless the secret travels in a custom header
(requests only strips ``Authorization`` across hosts); an unfollowed 3xx is an
``upstream_error``. Successful output is parsed JSON (or text) in ``data``, and a short
markdown rendering of it is put in ``metadata["markdown"]``.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import quote

import requests
from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception_type,
    stop_after_attempt,
    stop_before_delay,
    wait_exponential,
)

from tools._netcause import connection_cause, public_url
from tools.errors import (
    InvalidArgumentsError,
    PermissionDeniedError,
    ToolDefinitionError,
    ToolError,
    ToolTimeoutError,
    UnknownToolError,
    UpstreamError,
)
from tools.external._markdown import render_markdown
from tools.external._redact import Redactor, clip
from tools.external.cli_adapter import pick_action
from tools.external.config import HTTPConfig, HTTPEndpoint, ToolConfig
from tools.resilience import parse_retry_after
from tools.result import ToolResult

logger = logging.getLogger(__name__)

MAX_SERVER_MESSAGE = 500
_QUERY_METHODS = frozenset({"GET", "DELETE", "HEAD"})


class _RetryableStatus(Exception):
    """A 429/5xx answer worth another attempt."""

    def __init__(self, status: int, retry_after: float | None, message: str) -> None:
        super().__init__(status)
        self.status = status
        self.retry_after = retry_after
        self.message = message


def _server_message(body: bytes, redactor: Redactor) -> str:
    text = body.decode("utf-8", "replace")
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        for key in ("message", "error_description", "error", "detail", "title"):
            value = parsed.get(key)
            if isinstance(value, dict):
                value = value.get("message", value)
            if value:
                text = value if isinstance(value, str) else json.dumps(value)
                break
    return clip(redactor.text(text.strip()), MAX_SERVER_MESSAGE) or "(no message)"


class HTTPAdapter:
    """Runs HTTP tools described by :class:`ToolConfig` objects with an :class:`HTTPConfig`.

    Args:
        tools: Configs to register at once (see :meth:`add_tool`).
        env: Where :class:`AuthConfig` secrets are looked up at call time (``os.environ`` at
            the entry point). Secrets are sent only in headers and redacted from every message.
        session: ``requests.Session`` to use (one is created when omitted).
        sleep: Sleep used between retries (inject a fake in tests).
        clock: Wall clock in epoch seconds, for ``Retry-After`` HTTP dates.
    """

    adapter_type = "http"

    def __init__(
        self,
        tools: Iterable[ToolConfig] = (),
        *,
        env: Mapping[str, str] | None = None,
        session: requests.Session | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._env = dict(env or {})
        self._session = session or requests.Session()
        self._sleep = sleep
        self._clock = clock
        self._tools: dict[str, ToolConfig] = {}
        for config in tools:
            self.add_tool(config)

    def add_tool(self, config: ToolConfig) -> None:
        """Register ``config`` under its id (replacing an earlier one with the same id).

        Raises:
            ToolDefinitionError: ``config`` is not an HTTP config.
        """
        self._http(config)
        self._tools[config.id] = config

    @staticmethod
    def _http(config: ToolConfig) -> HTTPConfig:
        if not isinstance(config.config, HTTPConfig):
            raise ToolDefinitionError(
                f"tool {config.id!r} has adapter_type {config.adapter_type!r}; "
                "HTTPAdapter needs adapter_type 'http' with an HTTPConfig"
            )
        return config.config

    def is_available(self, config: ToolConfig) -> bool:
        """True when ``config`` is an HTTP tool whose auth secret (if any) is set."""
        if not isinstance(config.config, HTTPConfig):
            return False
        return config.auth is None or bool(self._env.get(config.auth.env_var))

    def close(self) -> None:
        """Close the HTTP session."""
        self._session.close()

    def execute(
        self,
        tool_id: str,
        action: str | None,
        params: Mapping[str, Any],
        timeout: float | None = None,
    ) -> ToolResult:
        """Run one call; every failure is an error :class:`ToolResult`, never an exception.

        Malformed input (missing path arguments, unknown arguments when the endpoint lists
        them) is a ``validation_error``; path values are URL-quoted so they cannot change the
        path; bodies over :attr:`HTTPConfig.max_response_bytes` are an error (JSON) or cut
        (text, ``metadata["truncated"]``).
        """
        try:
            return self._execute(tool_id, action, params, timeout)
        except ToolError as exc:
            return ToolResult.failure(exc.error_type, exc.message, retryable=exc.retryable, details=exc.details)

    def _execute(
        self, tool_id: str, action: str | None, params: Mapping[str, Any], timeout: float | None
    ) -> ToolResult:
        try:
            config = self._tools[tool_id]
        except KeyError:
            raise UnknownToolError(f"No HTTP tool with id {tool_id!r}.") from None
        http = self._http(config)
        name = pick_action(config, http.endpoints, action)
        endpoint = http.endpoints[name]
        path, query, body = _split_params(endpoint, params)
        headers = dict(http.headers)
        secret: str | None = None
        if config.auth is not None:
            secret = self._env.get(config.auth.env_var)
            if not secret:
                raise ToolError(
                    f"Tool '{config.name}' is not configured (its credential is missing); "
                    "tell the user it cannot be used right now.",
                    details={"reason": "missing_credential", "env_var": config.auth.env_var},
                )
            headers[config.auth.header] = config.auth.header_value(secret)
        redactor = Redactor([secret])
        url = http.base_url.rstrip("/") + "/" + path.lstrip("/")
        budget = timeout if timeout is not None else (config.timeout or http.timeout * 4)
        call = _Call(
            session=self._session,
            retrying=self._retrying(http, budget),
            clock=self._clock,
            config=config,
            endpoint=endpoint,
            redactor=redactor,
        )
        status, content_type, raw, truncated, attempts = call.run(url, query, body, headers, budget)
        data = _decode(endpoint, content_type, raw, truncated, config.name)
        meta: dict[str, Any] = {
            "http_status": status,
            "action": name,
            "markdown": render_markdown(data),
            "http_attempts": attempts,
        }
        if truncated:
            meta["truncated"] = True
        return ToolResult.success(redactor.data(data), metadata=meta)

    def _retrying(self, http: HTTPConfig, budget: float) -> Retrying:
        backoff = wait_exponential(multiplier=0.5, max=8.0)

        def wait(state: RetryCallState) -> float:
            exc = state.outcome.exception() if state.outcome else None
            if isinstance(exc, _RetryableStatus) and exc.retry_after is not None:
                return exc.retry_after
            return float(backoff(state))

        return Retrying(
            # stop_before_delay: give up when the next wait would end past the budget.
            stop=stop_after_attempt(http.max_attempts) | stop_before_delay(budget),
            wait=wait,
            retry=retry_if_exception_type((_RetryableStatus, requests.ConnectionError)),
            reraise=True,
            sleep=self._sleep,
        )


class _Call:
    """One call with its retries; keeps the per-call state out of the adapter."""

    def __init__(
        self,
        *,
        session: requests.Session,
        retrying: Retrying,
        clock: Callable[[], float],
        config: ToolConfig,
        endpoint: HTTPEndpoint,
        redactor: Redactor,
    ) -> None:
        if not isinstance(config.config, HTTPConfig):  # pragma: no cover - checked by caller
            raise ToolDefinitionError(f"tool {config.id!r} is not an HTTP tool")
        self.session = session
        self.retrying = retrying
        self.clock = clock
        self.config = config
        self.http = config.config
        self.endpoint = endpoint
        self.redactor = redactor
        self.label = f"{endpoint.method} {endpoint.path}"
        self.attempts = 0

    def run(
        self,
        url: str,
        query: dict[str, Any],
        body: dict[str, Any] | None,
        headers: dict[str, str],
        budget: float,
    ) -> tuple[int, str, bytes, bool, int]:
        tool = self.config.name
        deadline = time.monotonic() + budget
        try:
            for attempt in self.retrying:
                with attempt:
                    self.attempts += 1
                    status, ctype, raw, cut = self._once(url, query, body, headers, deadline)
        except _RetryableStatus as exc:
            raise UpstreamError(
                f"Tool '{tool}': the API is unavailable (HTTP {exc.status}) after "
                f"{self.attempts} attempt(s): {exc.message}. Try again later.",
                details={"http_status": exc.status},
            ) from None
        except requests.Timeout:
            raise ToolTimeoutError(f"Tool '{tool}': the API did not answer in time.") from None
        except requests.RequestException as exc:
            logger.info("tool %s: %s failed: %s", self.config.id, self.label, type(exc).__name__)
            raise UpstreamError(
                f"Tool '{tool}': could not reach the API ({type(exc).__name__}).",
                details={"reason": "unreachable", "url": public_url(url), "cause": connection_cause(exc)},
            ) from None
        return status, ctype, raw, cut, self.attempts

    def _once(
        self,
        url: str,
        query: dict[str, Any],
        body: dict[str, Any] | None,
        headers: dict[str, str],
        deadline: float,
    ) -> tuple[int, str, bytes, bool]:
        # Each attempt gets what is left of the call's budget (at least a moment to connect).
        per_attempt = max(0.05, min(self.http.timeout, deadline - time.monotonic()))
        with self.session.request(
            self.endpoint.method,
            url,
            params=query or None,
            json=body,
            headers=headers,
            timeout=per_attempt,
            stream=True,
            verify=self.http.verify_tls,
            allow_redirects=self._follow_redirects(),
        ) as resp:
            raw, cut = _read_capped(resp, self.http.max_response_bytes)
            status = resp.status_code
            if status == 429 or status >= 500:
                retry_after = parse_retry_after(
                    resp.headers.get("Retry-After"), now=self.clock(), cap=self.http.retry_after_cap
                )
                raise _RetryableStatus(status, retry_after, _server_message(raw, self.redactor))
            if status >= 400:
                self._raise_for_client_error(status, raw)
            if 300 <= status < 400:
                raise UpstreamError(
                    f"Tool '{self.config.name}': the API redirected (HTTP {status}); redirects "
                    "are not followed for this tool. Tell the user the endpoint moved.",
                    retryable=False,
                    details={"http_status": status},
                )
            return status, resp.headers.get("Content-Type", ""), raw, cut

    def _follow_redirects(self) -> bool:
        # requests drops 'Authorization' when a redirect leaves the host, but not custom
        # headers: with a secret in one, never follow a redirect.
        auth = self.config.auth
        return auth is None or auth.header.lower() == "authorization"

    def _raise_for_client_error(self, status: int, raw: bytes) -> None:
        tool = self.config.name
        message = _server_message(raw, self.redactor)
        details = {"http_status": status}
        if status in (401, 403):
            raise PermissionDeniedError(
                f"Tool '{tool}': the API refused access (HTTP {status}): {message}",
                details=details,
            )
        if status in (400, 404, 422):
            what = "found nothing for these arguments" if status == 404 else "rejected the request"
            raise InvalidArgumentsError(
                f"Tool '{tool}': the API {what} (HTTP {status}, {self.label}): {message}. "
                "Check the arguments and call again.",
                details=details,
            )
        raise UpstreamError(
            f"Tool '{tool}': the API answered HTTP {status}: {message}",
            retryable=False,
            details=details,
        )


def _read_capped(resp: requests.Response, limit: int) -> tuple[bytes, bool]:
    chunks: list[bytes] = []
    size = 0
    for chunk in resp.iter_content(65536):
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            return b"".join(chunks)[:limit], True
    return b"".join(chunks), False


def _split_params(
    endpoint: HTTPEndpoint, params: Mapping[str, Any]
) -> tuple[str, dict[str, Any], dict[str, Any] | None]:
    path_names = endpoint.path_params()
    missing = [n for n in path_names if params.get(n) is None]
    if missing:
        raise InvalidArgumentsError(
            f"Missing required argument(s) {missing} (they are part of the URL).",
            details={"missing": missing},
        )
    values = {n: quote(str(params[n]), safe="") for n in path_names}
    dots = [n for n, v in values.items() if v in ("", ".", "..")]
    if dots:
        raise InvalidArgumentsError(
            f"Argument(s) {dots} must not be empty, '.' or '..' (they are part of the URL).",
            details={"invalid": dots},
        )
    path = endpoint.path.format_map(values)
    rest = {k: v for k, v in params.items() if k not in path_names and v is not None}
    if endpoint.query is None and endpoint.body is None:
        if endpoint.method in _QUERY_METHODS:
            return path, rest, None
        return path, {}, rest
    allowed = set(endpoint.query or []) | set(endpoint.body or [])
    unknown = sorted(set(rest) - allowed)
    if unknown:
        raise InvalidArgumentsError(
            f"Unknown argument(s) {unknown}; accepted: {sorted(allowed | set(path_names))}.",
            details={"unknown": unknown},
        )
    query = {k: v for k, v in rest.items() if k in (endpoint.query or [])}
    body = {k: v for k, v in rest.items() if k in (endpoint.body or [])}
    return path, query, body if endpoint.body is not None else None


def _decode(endpoint: HTTPEndpoint, content_type: str, raw: bytes, cut: bool, tool: str) -> Any:
    wants_json = endpoint.output == "json" or (endpoint.output == "auto" and "json" in content_type.lower())
    if wants_json:
        if cut:
            raise UpstreamError(
                f"Tool '{tool}': the API answer is larger than the configured limit; "
                "ask for less data (filters, paging).",
                retryable=False,
            )
        if not raw.strip():
            return None
        try:
            return json.loads(raw)
        except ValueError:
            raise UpstreamError(f"Tool '{tool}': the API answered with invalid JSON.", retryable=False) from None
    return raw.decode("utf-8", "replace")
