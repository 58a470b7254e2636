"""OpenTelemetry spans for tool calls, agent runs and model calls (GenAI conventions).

One span per tool call, ``execute_tool {tool name}`` (kind INTERNAL), with the GenAI
semantic-convention attributes (``gen_ai.operation.name``, ``gen_ai.tool.name``,
``gen_ai.tool.call.id``, ``gen_ai.tool.type``, ``gen_ai.tool.description``), the
envelope's ``error.type`` and an ERROR status on failure, and tooldeck's own
``tooldeck.request_id``, ``tooldeck.attempts`` and ``tooldeck.breaker_state``. Arguments
(``gen_ai.tool.call.arguments``) and results (``gen_ai.tool.call.result``) may hold
personal data and are recorded only when turned on. ``invoke_agent {agent}`` and
``chat {model}`` spans around them make one question one trace.

Needs the ``otel`` extra (``opentelemetry-api``); this module imports nothing from it until
a :class:`ToolTracer` is built, so without the extra (or without a tracer) the hot path
costs nothing.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from tools.errors import TooldeckError
from tools.result import ToolResult, to_jsonable

if TYPE_CHECKING:
    from contextvars import Token

    from opentelemetry.context import Context
    from opentelemetry.propagators.textmap import TextMapPropagator
    from opentelemetry.trace import Span, TracerProvider

#: What :meth:`ToolTracer.start` returns and :meth:`ToolTracer.end` takes: the span and the
#: context token that made it current.
ToolSpan = tuple["Span", "Token[Context]"]

#: ``gen_ai.tool.type`` by ``ToolManual.source``: tools run in this process are functions;
#: tools that call out to another service or program are extensions.
_TOOL_TYPES = {"builtin": "function", "function": "function", "module": "function"}
#: Tool-attribute sets cached per (name, description, type); unknown names are not cached.
_MAX_CACHED = 1024

ARGUMENTS = "gen_ai.tool.call.arguments"
RESULT = "gen_ai.tool.call.result"


class TracingUnavailableError(TooldeckError, ImportError):
    """A :class:`ToolTracer` was built but OpenTelemetry is not installed."""


def gen_ai_tool_type(source: str | None) -> str:
    """``gen_ai.tool.type`` for a tool whose manual has ``source``.

    ``function`` for tools that run in this process (builtin, function, module),
    ``extension`` for tools that call another service or program (mcp, http, cli, binary).
    """
    if source is None:
        return "function"
    return _TOOL_TYPES.get(source, "extension")


class ToolTracer:
    """Makes the spans of tool calls, agent runs and model calls.

    Args:
        tracer_provider: Where spans go (default: OpenTelemetry's global provider).
        record_arguments: Record ``gen_ai.tool.call.arguments`` (may hold personal data).
        record_results: Record ``gen_ai.tool.call.result`` of successful calls, and the
            error message as the status description of failed ones.
        max_content_chars: Longest arguments / result / description text recorded.
        propagator: Propagator for :meth:`inject_trace_context` (default: the global one,
            W3C ``traceparent``/``tracestate`` unless configured otherwise).

    Raises:
        TracingUnavailableError: ``opentelemetry-api`` is not installed (extra ``otel``).
    """

    def __init__(
        self,
        tracer_provider: TracerProvider | None = None,
        *,
        record_arguments: bool = False,
        record_results: bool = False,
        max_content_chars: int = 20_000,
        propagator: TextMapPropagator | None = None,
    ) -> None:
        try:
            from opentelemetry import context, trace
            from opentelemetry.trace import SpanKind, Status, StatusCode
        except ImportError as exc:
            raise TracingUnavailableError(
                "ToolTracer needs OpenTelemetry: pip install -e '.[otel]' (opentelemetry-api), "
                "or build the registry without a tracer"
            ) from exc
        self.record_arguments = record_arguments
        self.record_results = record_results
        self._max_chars = max_content_chars
        self._propagator = propagator
        self._tracer = trace.get_tracer("tooldeck", _package_version(), tracer_provider=tracer_provider)
        self._in_context = trace.set_span_in_context
        self._attach = context.attach
        self._detach = context.detach
        self._internal = SpanKind.INTERNAL
        self._client = SpanKind.CLIENT
        self._status = Status
        self._error = StatusCode.ERROR
        self._error_status = Status(StatusCode.ERROR)
        self._cache: dict[tuple[str, str | None, str], tuple[str, dict[str, Any]]] = {}

    # ----------------------------------------------------------------- tool calls

    def start(
        self,
        tool_name: str,
        description: str | None = None,
        tool_type: str = "function",
        call_id: str | None = None,
        arguments: object = None,
    ) -> ToolSpan:
        """Start a tool call's span and make it current (spans inside become its children).

        Pair every call with :meth:`end` (or :meth:`end_with_exception`) in the same thread
        or task.

        Args:
            tool_name: The name the tool was called by.
            description: The tool's description.
            tool_type: ``gen_ai.tool.type`` (see :func:`gen_ai_tool_type`).
            call_id: The model's ``tool_call`` id, when the call came from a model.
            arguments: The arguments as sent (JSON text or a mapping); recorded only with
                ``record_arguments``.
        """
        key = (tool_name, description, tool_type)
        cached = self._cache.get(key)
        if cached is None:
            cached = self._tool_attributes(key)
        name, attributes = cached
        if call_id is not None or (arguments is not None and self.record_arguments):
            attributes = dict(attributes)
            if call_id is not None:
                attributes["gen_ai.tool.call.id"] = str(call_id)
            if arguments is not None and self.record_arguments:
                attributes[ARGUMENTS] = self._text(arguments)
        span = self._tracer.start_span(name, kind=self._internal, attributes=attributes)
        return span, self._attach(self._in_context(span))

    def start_unknown(self, sent_name: object, call_id: str | None = None) -> ToolSpan:
        """Start the span of a call to a tool that is not registered.

        Its name is plain ``execute_tool`` (span names stay low-cardinality whatever a
        model invents); ``gen_ai.tool.name`` holds what was sent, cut to 100 characters.
        """
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": str(sent_name)[:100],
        }
        if call_id is not None:
            attributes["gen_ai.tool.call.id"] = str(call_id)
        span = self._tracer.start_span("execute_tool", kind=self._internal, attributes=attributes)
        return span, self._attach(self._in_context(span))

    def end(self, tool_span: ToolSpan, result: ToolResult, breaker_state: str | None = None) -> None:
        """Finish a tool call's span from its envelope and restore the previous context.

        Args:
            tool_span: What :meth:`start` returned.
            result: The call's result.
            breaker_state: The tool's circuit-breaker state after the call.
        """
        span, token = tool_span
        try:
            metadata = result.metadata
            attributes: dict[str, Any] = {"tooldeck.attempts": metadata.get("attempts", 1)}
            request_id = metadata.get("request_id")
            if type(request_id) is str:
                attributes["tooldeck.request_id"] = request_id
            if breaker_state is not None:
                attributes["tooldeck.breaker_state"] = breaker_state
            error = result.error
            if error is None:
                if self.record_results:
                    attributes[RESULT] = self._text(result.data)
                span.set_attributes(attributes)
            else:
                attributes["error.type"] = error.type
                span.set_attributes(attributes)
                if self.record_results:
                    span.set_status(self._status(self._error, error.message[: self._max_chars]))
                else:
                    span.set_status(self._error_status)
            span.end()
        finally:
            self._detach(token)

    def end_with_exception(self, tool_span: ToolSpan, exc: BaseException) -> None:
        """Finish a tool call's span that ended in an exception (e.g. cancellation)."""
        span, token = tool_span
        try:
            _fail(span, exc, self._error_status)
            span.end()
        finally:
            self._detach(token)

    def _tool_attributes(self, key: tuple[str, str | None, str]) -> tuple[str, dict[str, Any]]:
        tool_name, description, tool_type = key
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": tool_name,
            "gen_ai.tool.type": tool_type,
        }
        if description:
            attributes["gen_ai.tool.description"] = description[: self._max_chars]
        entry = (f"execute_tool {tool_name}", attributes)
        if len(self._cache) < _MAX_CACHED:
            self._cache[key] = entry
        return entry

    def _text(self, value: object) -> str:
        if isinstance(value, bytes):
            text = value.decode("utf-8", "replace")
        elif isinstance(value, str):
            text = value
        else:
            text = json.dumps(to_jsonable(value), ensure_ascii=False, separators=(",", ":"))
        return text[: self._max_chars]

    # ----------------------------------------------------------------- agent loop

    @contextmanager
    def agent_span(
        self, agent: str, *, agent_id: str | None = None, conversation_id: str | None = None
    ) -> Iterator[Span]:
        """A current ``invoke_agent {agent}`` span (kind INTERNAL) around one agent run.

        An exception leaving the block sets ``error.type`` (its class name) and an ERROR
        status, and propagates.
        """
        attributes: dict[str, Any] = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": agent}
        if agent_id is not None:
            attributes["gen_ai.agent.id"] = agent_id
        if conversation_id is not None:
            attributes["gen_ai.conversation.id"] = conversation_id
        with self._current(f"invoke_agent {agent}", self._internal, attributes) as span:
            yield span

    @contextmanager
    def chat_span(self, model: str, *, provider: str | None = None) -> Iterator[Span]:
        """A current ``chat {model}`` span (kind CLIENT) around one model call.

        Args:
            model: The requested model (``gen_ai.request.model``).
            provider: ``gen_ai.provider.name``, e.g. ``openai``.
        """
        attributes: dict[str, Any] = {"gen_ai.operation.name": "chat", "gen_ai.request.model": model}
        if provider is not None:
            attributes["gen_ai.provider.name"] = provider
        with self._current(f"chat {model}", self._client, attributes) as span:
            yield span

    @staticmethod
    def record_chat_response(
        span: Span,
        *,
        response_model: str | None = None,
        response_id: str | None = None,
        finish_reasons: Sequence[str] | None = None,
        input_tokens: int | None = None,
        output_tokens: int | None = None,
    ) -> None:
        """Add what a model answered to a :meth:`chat_span` (only the values given)."""
        values: dict[str, Any] = {
            "gen_ai.response.model": response_model,
            "gen_ai.response.id": response_id,
            "gen_ai.response.finish_reasons": list(finish_reasons) if finish_reasons is not None else None,
            "gen_ai.usage.input_tokens": input_tokens,
            "gen_ai.usage.output_tokens": output_tokens,
        }
        span.set_attributes({key: value for key, value in values.items() if value is not None})

    @contextmanager
    def _current(self, name: str, kind: Any, attributes: dict[str, Any]) -> Iterator[Span]:
        span = self._tracer.start_span(name, kind=kind, attributes=attributes)
        token = self._attach(self._in_context(span))
        try:
            yield span
        except BaseException as exc:
            _fail(span, exc, self._error_status)
            raise
        finally:
            span.end()
            self._detach(token)

    # ----------------------------------------------------------------- propagation

    def inject_trace_context(self, meta: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """A copy of ``meta`` with the current trace context added (see :func:`inject_trace_context`)."""
        return inject_trace_context(meta, propagator=self._propagator)


def inject_trace_context(
    meta: Mapping[str, Any] | None = None, *, propagator: TextMapPropagator | None = None
) -> dict[str, Any]:
    """A copy of ``meta`` with the current trace context added, for an MCP request's ``_meta``.

    With the default propagator that is W3C ``traceparent`` (and ``tracestate`` when set),
    so the server's spans join the caller's trace. Without OpenTelemetry installed, or with
    no span current, the copy is returned unchanged.

    Args:
        meta: The ``_meta`` to send (not modified).
        propagator: The propagator to use (default: OpenTelemetry's global one).
    """
    carrier: dict[str, Any] = dict(meta) if meta else {}
    if propagator is None and "opentelemetry.context" not in sys.modules:
        return carrier  # OpenTelemetry never loaded: no span can be current
    if propagator is None:
        from opentelemetry import propagate

        propagate.inject(carrier)
    else:
        propagator.inject(carrier)
    return carrier


def _fail(span: Span, exc: BaseException, status: Any) -> None:
    # The class name only: exception text can carry arguments or secrets.
    span.set_attribute("error.type", type(exc).__qualname__)
    span.set_status(status)


def _package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("tooldeck")
    except PackageNotFoundError:
        return "0"
