"""`OpenAIChatModel`: a `ChatModel` over any OpenAI-compatible ``/chat/completions`` endpoint.

Works with OpenAI, vLLM, llama.cpp's server (and llama-cpp-python's), Ollama and LM Studio.
Built on `requests` with an explicit timeout on every call and tenacity retries (429, 5xx
and connection failures; exponential backoff that honours ``Retry-After``).
"""

from __future__ import annotations

import functools
import json
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt

if TYPE_CHECKING:  # imported on first use: ``import orchestrator`` stays light
    import requests

from orchestrator._openai_wire import (
    SERVER_MESSAGE_CHARS,
    endpoint_for,
    server_message,
    text_of,
    tool_calls_of,
    wire_messages,
)
from orchestrator._sse import StreamAssembler, StreamError, sse_data
from orchestrator.llm import (
    ChatModelConnectionError,
    ChatModelError,
    ChatModelHTTPError,
    ChatModelResponseError,
    ChatResponse,
    Message,
    ToolChoice,
)
from tools.resilience import parse_retry_after

__all__ = ["OpenAIChatModel"]

_log = logging.getLogger(__name__)
_REQUIRED_REJECTED = frozenset({400, 422, 500})  # how servers without tool_choice="required" answer it

_STATUS_HINTS: Mapping[int, str] = {
    400: "the server rejected the request; check --model and that the server supports tools "
    "(llama.cpp needs a tool-capable chat format)",
    401: "the API key was rejected; put a valid key in the environment variable named by --api-key-env",
    403: "the API key lacks access to this model; check the key and --model",
    404: "no chat-completions endpoint or model there; --base-url should end in /v1 and "
    "--model must name a model the server serves",
    408: "the server timed out the request; retry later or raise the timeout",
    413: "the request is too large for the server; shorten the conversation",
    422: "the server could not process the request; check --model and the tool schemas",
    429: "rate limited; wait and retry, or lower the request rate",
}


def _is_retryable(exc: BaseException) -> bool:
    if isinstance(exc, ChatModelHTTPError):
        return exc.retryable
    return isinstance(exc, ChatModelConnectionError) and exc.retryable


class OpenAIChatModel:
    """A chat model served by an OpenAI-compatible HTTP endpoint.

    Example:
        >>> model = OpenAIChatModel("http://127.0.0.1:8080/v1", "smollm2")  # doctest: +SKIP
        >>> model.chat([{"role": "user", "content": "Hi"}]).content  # doctest: +SKIP

    Hostile or broken servers: a body that is not JSON, lacks ``choices``, or exceeds
    ``max_response_bytes`` raises `ChatModelResponseError`; malformed tool-call entries
    (no function name) are dropped with a warning; tool-call arguments sent as an object
    are re-encoded as JSON text; missing tool-call ids are generated. The legacy
    ``function_call`` field is ignored. The API key is sent only in the ``Authorization``
    header of each request: it is never logged, never part of `repr`, and scrubbed from any
    server error text that echoes it.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout: float = 120.0,
        connect_timeout: float = 10.0,
        session: requests.Session | None = None,
        max_retries: int = 3,
        initial_backoff: float = 0.5,
        max_backoff: float = 20.0,
        max_retry_after: float = 60.0,
        sleep: Callable[[float], None] = time.sleep,
        strict_tools: bool | None = None,
        temperature: float | None = None,
        extra_body: Mapping[str, Any] | None = None,
        max_response_bytes: int = 16 * 1024 * 1024,
        now: Callable[[], datetime] = lambda: datetime.now(timezone.utc),
        stream: bool = False,
    ) -> None:
        """Configure the client; nothing is sent until `chat`.

        Args:
            base_url: The API root, e.g. ``https://api.openai.com/v1`` (a bare
                ``http://host:port`` gets ``/v1``; a full ``.../chat/completions`` is accepted).
            model: The model name the server serves.
            api_key: Bearer token; None for local servers that need none.
            timeout: Seconds to wait for the whole response of one attempt.
            connect_timeout: Seconds to wait for the TCP connection.
            session: A `requests.Session` to use (and not close); one is created otherwise.
            max_retries: Extra attempts after a retryable failure (429, 5xx, connection).
            initial_backoff: First backoff in seconds; doubles per attempt.
            max_backoff: Cap of the exponential backoff, seconds.
            max_retry_after: Cap on a server's ``Retry-After``, seconds.
            sleep: Called to wait between attempts (inject a fake in tests).
            strict_tools: Whether the server accepts strict tool schemas; default: only
                ``api.openai.com``.
            temperature: Sampling temperature to send, if any.
            extra_body: Extra JSON fields merged into every request body.
            max_response_bytes: Largest response body accepted.
            now: Current UTC time, used to read an HTTP-date ``Retry-After``.
            stream: Ask for server-sent events (``"stream": true``) and pass each piece of
                answer text to ``chat``'s ``on_delta`` as it arrives; the turn returned is the
                same, tool calls assembled from the stream and checked as a whole message.

        Raises:
            ValueError: For a base_url that is not http(s), or that embeds credentials, or
                for negative limits.
        """
        self._endpoint = endpoint_for(base_url)
        if not model or not model.strip():
            raise ValueError("model must be a non-empty model name, e.g. 'gpt-4o-mini'")
        if timeout <= 0 or connect_timeout <= 0 or max_retries < 0 or max_response_bytes <= 0:
            raise ValueError("timeouts and max_response_bytes must be > 0, max_retries >= 0")
        self._model = model
        self._api_key = api_key or None
        self._timeout = timeout
        self._connect_timeout = connect_timeout
        self._owns_session = session is None
        if session is None:
            import requests

            session = requests.Session()
        self._session = session
        self._max_retries = max_retries
        self._initial_backoff = initial_backoff
        self._max_backoff = max_backoff
        self._max_retry_after = max_retry_after
        self._sleep = sleep
        host = urlsplit(self._endpoint).hostname or ""
        self._strict = strict_tools if strict_tools is not None else host == "api.openai.com"
        self._temperature = temperature
        self._extra_body = dict(extra_body or {})
        self._max_response_bytes = max_response_bytes
        self._now = now
        self._stream = stream
        self._turn = 0
        self._required_supported = True

    def __repr__(self) -> str:
        return f"OpenAIChatModel(endpoint={self._endpoint!r}, model={self._model!r})"

    @property
    def endpoint(self) -> str:
        """The full chat-completions URL."""
        return self._endpoint

    @property
    def model(self) -> str:
        """The model name sent with each request."""
        return self._model

    @property
    def supports_strict_tools(self) -> bool:
        """Whether tool schemas are exported with OpenAI strict mode for this server."""
        return self._strict

    @property
    def streams(self) -> bool:
        """Whether answers are streamed (server-sent events; see ``stream``)."""
        return self._stream

    def close(self) -> None:
        """Close the HTTP session if this client created it."""
        if self._owns_session:
            self._session.close()

    def __enter__(self) -> OpenAIChatModel:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def chat(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        tool_choice: ToolChoice | None = None,
        on_delta: Callable[[str], None] | None = None,
    ) -> ChatResponse:
        """Send the conversation and return the assistant's next turn.

        Args:
            messages: The conversation, OpenAI chat format.
            tools: OpenAI tool definitions; omitted from the request when empty.
            tool_choice: Sent only together with tools. ``"required"`` with a single tool
                is sent as that tool by name; a server that rejects ``"required"`` (HTTP
                400, 422 or 500, as llama-cpp-python's server does) is asked again with
                ``"auto"``, with a warning, and sent ``"auto"`` from then on.
            on_delta: Told each piece of answer text as it arrives (with ``stream``).

        An assistant message with ``content: None`` is sent with ``content: ""``: OpenAI
        accepts it and llama.cpp servers need it.

        Returns:
            The parsed turn (``tool_calls`` read from ``tool_calls``, never from the legacy
            ``function_call``; ``content: null`` stays None).

        Raises:
            ChatModelHTTPError: An error status (after retries for 429/5xx); the message
                names the endpoint, the status, the server's message and the fix.
            ChatModelConnectionError: Unreachable endpoint or timeout (after retries).
            ChatModelResponseError: A 2xx answer that is not a chat completion.
        """
        choice = self._choice_for(tools, tool_choice)
        try:
            return self._send(messages, tools, choice, on_delta)
        except ChatModelHTTPError as exc:
            if choice != "required" or exc.status not in _REQUIRED_REJECTED:
                raise
            self._required_supported = False
            _log.warning(
                "%s rejected tool_choice='required' (HTTP %d); sending 'auto' instead from now on, "
                "so the model may answer without calling a tool (llama-cpp-python's "
                "chatml-function-calling format has no 'required')",
                self._endpoint,
                exc.status,
            )
            return self._send(messages, tools, "auto", on_delta)

    def _choice_for(self, tools: Sequence[Mapping[str, Any]] | None, choice: ToolChoice | None) -> ToolChoice | None:
        """``required`` with one tool is sent as that tool by name (every server knows it)."""
        if choice != "required" or not tools:
            return choice
        if len(tools) == 1:
            function = tools[0].get("function")
            name = function.get("name") if isinstance(function, Mapping) else None
            if isinstance(name, str):
                return {"type": "function", "function": {"name": name}}
        return choice if self._required_supported else "auto"

    def _send(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] | None,
        tool_choice: ToolChoice | None,
        on_delta: Callable[[str], None] | None = None,
    ) -> ChatResponse:
        body: dict[str, Any] = {"model": self._model, "messages": wire_messages(messages)}
        if self._stream:
            body["stream"] = True
        if tools:
            body["tools"] = list(tools)
            if tool_choice is not None:
                body["tool_choice"] = tool_choice
        if self._temperature is not None:
            body["temperature"] = self._temperature
        body.update(self._extra_body)
        try:
            payload = json.dumps(body, ensure_ascii=False).encode("utf-8")
        except (TypeError, ValueError) as exc:
            raise ChatModelError(f"the conversation is not JSON-serialisable: {exc}") from exc
        retrying = Retrying(
            stop=stop_after_attempt(self._max_retries + 1),
            wait=self._wait,
            retry=retry_if_exception(_is_retryable),
            reraise=True,
            sleep=self._sleep,
            before_sleep=self._log_retry,
        )
        response = self._parse(retrying(functools.partial(self._post_once, payload, on_delta)))
        self._turn += 1
        return response

    def _wait(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome is not None else None
        if isinstance(exc, ChatModelHTTPError) and exc.retry_after is not None:
            return min(exc.retry_after, self._max_retry_after)
        delay = self._initial_backoff * (2 ** (state.attempt_number - 1))
        return float(min(delay, self._max_backoff))

    def _log_retry(self, state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome is not None else None
        delay = state.next_action.sleep if state.next_action is not None else 0.0
        _log.warning(
            "chat model call to %s failed (attempt %d: %s); retrying in %.2fs",
            self._endpoint,
            state.attempt_number,
            type(exc).__name__,
            delay,
        )

    def _scrub(self, text: str) -> str:
        if self._api_key:
            text = text.replace(self._api_key, "***")
        return text

    def _post_once(self, payload: bytes, on_delta: Callable[[str], None] | None = None) -> Any:
        import requests  # imported once (by __init__ or the first call): a dictionary lookup

        accept = "text/event-stream, application/json" if self._stream else "application/json"
        headers = {"Content-Type": "application/json", "Accept": accept}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        started = time.monotonic()
        _log.debug("POST %s (%d bytes)", self._endpoint, len(payload))
        try:
            with self._session.post(
                self._endpoint,
                data=payload,
                headers=headers,
                timeout=(self._connect_timeout, self._timeout),
                stream=True,
            ) as response:
                status = response.status_code
                retry_after = response.headers.get("Retry-After")
                if status < 400 and "text/event-stream" in response.headers.get("Content-Type", ""):
                    return self._read_stream(response, started, on_delta)
                raw = self._read_body(response, started)
        except requests.exceptions.ConnectTimeout as exc:
            raise self._connection_error("did not accept a connection in time", exc, True) from None
        except requests.exceptions.ReadTimeout as exc:
            raise self._connection_error(f"did not answer within {self._timeout:g}s", exc, False) from None
        except requests.exceptions.ConnectionError as exc:
            raise self._connection_error("could not be reached", exc, True) from None
        except requests.exceptions.RequestException as exc:
            raise self._connection_error("failed", exc, False) from None
        _log.debug("%s answered HTTP %d (%d bytes)", self._endpoint, status, len(raw))
        if status >= 400:
            raise self._http_error(status, raw, retry_after)
        try:
            return json.loads(raw)
        except ValueError:
            raise ChatModelResponseError(
                f"chat model endpoint {self._endpoint} answered HTTP {status} with a body that "
                f"is not JSON ({raw[:120]!r}); is --base-url an OpenAI-compatible API root?"
            ) from None

    def _read_body(self, response: requests.Response, started: float) -> bytes:
        chunks: list[bytes] = []
        size = 0
        for chunk in response.iter_content(chunk_size=65536):
            size += len(chunk)
            if size > self._max_response_bytes:
                raise ChatModelResponseError(
                    f"chat model endpoint {self._endpoint} sent more than "
                    f"{self._max_response_bytes} bytes; refusing the response"
                )
            if time.monotonic() - started > self._timeout + self._connect_timeout:
                raise ChatModelConnectionError(
                    f"chat model endpoint {self._endpoint} did not finish its answer within "
                    f"{self._timeout:g}s; raise the timeout or check the server",
                    retryable=False,
                )
            chunks.append(chunk)
        return b"".join(chunks)

    def _read_stream(
        self, response: requests.Response, started: float, on_delta: Callable[[str], None] | None
    ) -> dict[str, Any]:
        """The streamed answer, assembled (bounded in size and time like a whole body).

        Once text has been passed on, a failure is not retried (the text would repeat).
        """
        import requests

        assembler = StreamAssembler(on_delta)
        size = 0

        def lines() -> Any:
            nonlocal size
            for line in response.iter_lines(chunk_size=8192):
                size += len(line) + 1
                if size > self._max_response_bytes:
                    raise ChatModelResponseError(
                        f"chat model endpoint {self._endpoint} streamed more than {self._max_response_bytes} bytes; "
                        "refusing the response"
                    )
                if time.monotonic() - started > self._timeout + self._connect_timeout:
                    raise ChatModelConnectionError(
                        f"chat model endpoint {self._endpoint} did not finish its answer within {self._timeout:g}s; "
                        "raise the timeout or check the server",
                        retryable=False,
                    )
                yield line

        try:
            for data in sse_data(lines()):
                assembler.feed(data)
        except StreamError as exc:
            raise ChatModelResponseError(f"chat model endpoint {self._endpoint}: {self._scrub(str(exc))}") from None
        except requests.exceptions.RequestException as exc:
            raise self._connection_error("broke off its streamed answer", exc, False) from None
        if assembler.chunks == 0:
            raise ChatModelResponseError(
                f"chat model endpoint {self._endpoint} sent an event stream without a chunk; is it an "
                "OpenAI-compatible chat API?"
            )
        return assembler.completion()

    def _connection_error(self, what: str, exc: Exception, retryable: bool) -> ChatModelConnectionError:
        from tools._netcause import connection_cause

        return ChatModelConnectionError(
            f"chat model endpoint {self._endpoint} {what}: {self._scrub(connection_cause(exc))}; "
            "check that the server is running and --base-url is right",
            retryable=retryable,
        )

    def _http_error(self, status: int, raw: bytes, retry_after: str | None) -> ChatModelHTTPError:
        said = self._scrub(server_message(raw))[:SERVER_MESSAGE_CHARS]
        hint = _STATUS_HINTS.get(status, "the server failed; retry later or check its logs")
        text = f"chat model endpoint {self._endpoint} answered HTTP {status}"
        if said:
            text += f": {said}"
        return ChatModelHTTPError(
            f"{text} ({hint})",
            status=status,
            endpoint=self._endpoint,
            server_message=said,
            retry_after=parse_retry_after(retry_after, now=self._now().timestamp()),
        )

    def _parse(self, data: Any) -> ChatResponse:
        try:
            choice = data["choices"][0]
            message = choice["message"]
            if not isinstance(message, dict):
                raise TypeError("message is not an object")
        except (KeyError, IndexError, TypeError) as exc:
            raise ChatModelResponseError(
                f"chat model endpoint {self._endpoint} answered without choices[0].message "
                f"({type(exc).__name__}: {exc}); is it an OpenAI-compatible chat API?"
            ) from None
        result: Message = {"role": "assistant", "content": text_of(message.get("content"))}
        calls = tool_calls_of(message.get("tool_calls"), self._turn)
        if calls:
            result["tool_calls"] = calls
        finish = choice.get("finish_reason")
        usage = data.get("usage")
        model = data.get("model")
        return ChatResponse(
            message=result,
            finish_reason=finish if isinstance(finish, str) else None,
            usage=usage if isinstance(usage, dict) else None,
            model=model if isinstance(model, str) else None,
            raw=data if isinstance(data, dict) else None,
        )
