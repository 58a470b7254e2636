"""One registered tool with its call policy: presets, breaker, retry, timeout and metrics.

Every registry call path goes through :class:`ToolEntry`, so ``get(name)(...)``,
``registry(name, ...)``, ``call_tool``, ``call_tool_raw`` and the async twins behave the
same: same validation, same breaker, same retries, same metrics, same logging.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tools._arguments import AcceptedArguments, describe_arguments, field_error, invalid_arguments, parse_arguments
from tools._executor import ToolExecutor
from tools._failure_log import log_tool_failure
from tools.base import Arguments, BaseTool
from tools.errors import InvalidArgumentsError
from tools.metrics import MetricsSink
from tools.resilience import CircuitBreaker, RetryPolicy
from tools.result import ErrorInfo, ToolResult

if TYPE_CHECKING:
    from tools.executors import RemoteTool
    from tools.manual import ToolManual
    from tools.telemetry import ToolTracer

logger = logging.getLogger("tools.registry")


@dataclass(frozen=True)
class CallContext:
    """What every entry of one registry shares: time, sleeping, workers and the metrics sink."""

    executor: ToolExecutor
    metrics: MetricsSink | None = None
    sleep: Callable[[float], None] = time.sleep
    async_sleep: Callable[[float], Awaitable[None]] | None = None
    new_breaker: Callable[[], CircuitBreaker] = CircuitBreaker
    tracer: ToolTracer | None = None


@dataclass
class ToolEntry:
    """A registered tool and its policy; call it through :meth:`call` / :meth:`acall`."""

    tool: BaseTool[Any, Any]
    breaker: CircuitBreaker
    context: CallContext
    retry: RetryPolicy | None = None
    timeout: float | None = None
    preset: dict[str, Any] = field(default_factory=dict)
    #: The manual given at registration; None: derived from the tool on first use of
    #: :attr:`manual` (deriving one sizes the tool's schema: registration stays cheap).
    given_manual: ToolManual | None = None
    #: One breaker per action for multi-action tools: one failing action rests alone.
    action_breakers: dict[str, CircuitBreaker] | None = None
    #: Callable but left out of the exports (old names kept for stored conversations).
    hidden: bool = False
    #: Where the tool's lifecycle runs when not in this process (a Ray cluster, say).
    remote: RemoteTool | None = None

    def __post_init__(self) -> None:
        from tools.composite import CompositeTool

        if isinstance(self.tool, CompositeTool) and self.action_breakers is None:
            self.action_breakers = {action: self.context.new_breaker() for action in self.tool.actions}
        self._simple = not self.preset and self.action_breakers is None
        self._preset_accepted: AcceptedArguments | None = None
        if self.context.tracer is None:
            # Untraced registries call straight into the policy (one frame less per call).
            self.call = self._call  # type: ignore[method-assign]
            self.acall = self._acall  # type: ignore[method-assign]

    @property
    def name(self) -> str:
        """The name the entry is registered under."""
        return self.tool.name

    @property
    def manual(self) -> ToolManual:
        """The registration's routing manual, under the registered name (worked out once)."""
        manual: ToolManual | None = self.__dict__.get("_manual")
        if manual is None:
            given = self.given_manual
            manual = self.__dict__["_manual"] = (given or self.tool.get_manual()).renamed(self.name)
        return manual

    def breaker_for(self, action: str | None = None) -> CircuitBreaker:
        """The breaker of one action (multi-action tools), else the tool's breaker."""
        breakers = self.action_breakers
        if breakers is not None and action is not None and action in breakers:
            return breakers[action]
        return self.breaker

    # ----------------------------------------------------------------- sync

    def call(self, arguments: Arguments, call_id: str | None = None) -> ToolResult:
        """Run one call with breaker, retry, timeout, metrics and a span; never raises.

        Args:
            arguments: As the model sent them (JSON text or a mapping).
            call_id: The model's ``tool_call`` id, for the trace.
        """
        tracer = self.context.tracer
        if tracer is not None:
            return self._traced_call(tracer, arguments, call_id)
        return self._call(arguments)

    def _traced_call(self, tracer: ToolTracer, arguments: Arguments, call_id: str | None) -> ToolResult:
        span = tracer.start(self.name, self.tool.description, self._tool_type(), call_id, arguments)
        try:
            result = self._call(arguments)
        except BaseException as exc:  # pragma: no cover - _call never raises
            tracer.end_with_exception(span, exc)
            raise
        tracer.end(span, result, self.breaker.state)
        return result

    def _call(self, arguments: Arguments, call_id: str | None = None) -> ToolResult:
        breaker = self.breaker
        if not self._simple:
            prepared = self._prepare(arguments)
            if isinstance(prepared, ToolResult):
                return self._finish(prepared)
            arguments, breaker = prepared
        if breaker._state != "closed":  # the cheap check first: closed is the common case
            blocked = self._blocked(breaker)
            if blocked is not None:
                return self._finish(blocked)
        tool, timeout, executor, remote = self.tool, self.timeout, self.context.executor, self.remote
        result = tool._run(arguments, timeout, executor) if remote is None else remote.run(arguments, timeout)
        error = result.error
        if error is None:
            if breaker._failures:
                breaker.record_success()
            return result if self.context.metrics is None else self._finish(result)
        if self.retry is not None and error.retryable:
            started = time.perf_counter_ns()
            result, attempts = self.retry.run(
                result,
                lambda: tool._run(arguments, timeout, executor) if remote is None else remote.run(arguments, timeout),
                sleep=self.context.sleep,
            )
            result = _retried(result, attempts, started)
        return self._finish(_judge(breaker, result))

    # ----------------------------------------------------------------- async

    async def acall(self, arguments: Arguments, call_id: str | None = None) -> ToolResult:
        """Async twin of :meth:`call`; sync tools run in the registry's worker threads."""
        tracer = self.context.tracer
        if tracer is None:
            return await self._acall(arguments)
        span = tracer.start(self.name, self.tool.description, self._tool_type(), call_id, arguments)
        try:
            result = await self._acall(arguments)
        except BaseException as exc:  # cancellation
            tracer.end_with_exception(span, exc)
            raise
        tracer.end(span, result, self.breaker.state)
        return result

    def _tool_type(self) -> str:
        """``gen_ai.tool.type`` of this tool (worked out once)."""
        kind = self.__dict__.get("_gen_ai_type")
        if kind is None:
            from tools.telemetry import gen_ai_tool_type

            kind = self.__dict__["_gen_ai_type"] = gen_ai_tool_type(self.manual.source)
        return kind

    async def _acall(self, arguments: Arguments, call_id: str | None = None) -> ToolResult:
        breaker = self.breaker
        if not self._simple:
            prepared = self._prepare(arguments)
            if isinstance(prepared, ToolResult):
                return self._finish(prepared)
            arguments, breaker = prepared
        if breaker._state != "closed":
            blocked = self._blocked(breaker)
            if blocked is not None:
                return self._finish(blocked)
        tool, timeout, executor, remote = self.tool, self.timeout, self.context.executor, self.remote
        if remote is None:
            result = await tool._arun(arguments, timeout, executor)
        else:
            result = await remote.arun(arguments, timeout)
        error = result.error
        if error is None:
            if breaker._failures:
                breaker.record_success()
            return result if self.context.metrics is None else self._finish(result)
        if self.retry is not None and error.retryable:
            started = time.perf_counter_ns()
            result, attempts = await self.retry.arun(
                result,
                lambda: (
                    tool._arun(arguments, timeout=timeout, executor=executor)
                    if remote is None
                    else remote.arun(arguments, timeout)
                ),
                sleep=self.context.async_sleep,
            )
            result = _retried(result, attempts, started)
        return self._finish(_judge(breaker, result))

    # ----------------------------------------------------------------- shared

    def _prepare(self, arguments: Arguments) -> tuple[dict[str, Any], CircuitBreaker] | ToolResult:
        """Decode the arguments, enforce the preset boundary and pick the action's breaker."""
        try:
            kwargs = parse_arguments(arguments, self.tool.name)
        except InvalidArgumentsError as exc:
            return _failure(self.tool, ErrorInfo(exc.error_type, exc.message, False, exc.details))
        if self.preset:
            sent = [key for key in kwargs if key in self.preset]
            if sent:
                return self._preset_sent(sent)
            kwargs = {**kwargs, **self.preset}
        action = kwargs.get("action")
        return kwargs, self.breaker_for(action if isinstance(action, str) else None)

    def _preset_sent(self, keys: list[str]) -> ToolResult:
        """A model sent an argument this registration fixes: not in its schema, refused."""
        if self._preset_accepted is None:
            from tools.schema import without_properties

            self._preset_accepted = describe_arguments(without_properties(self.tool._input_schema(), set(self.preset)))
        records = [field_error((key,), "unknown argument, not accepted by this tool", sent=False) for key in keys]
        error = invalid_arguments(self.tool.name, records, self._preset_accepted)
        return _failure(self.tool, ErrorInfo("validation_error", error.message, False, error.details, False))

    def _blocked(self, breaker: CircuitBreaker) -> ToolResult | None:
        wait = breaker.before_call()
        if wait is None:
            return None
        return _failure(
            self.tool,
            ErrorInfo(
                "circuit_open",
                f"The tool '{self.tool.name}' is temporarily disabled after repeated failures; "
                f"it will be tried again in about {max(wait, 0.0):.0f} s. Use another tool or "
                "continue without it.",
                True,
                {"retry_after_s": round(max(wait, 0.0), 3)},
                False,
            ),
        )

    def _finish(self, result: ToolResult) -> ToolResult:
        if result.error is not None:
            log_tool_failure(logger, result)
        metrics = self.context.metrics
        if metrics is not None:
            try:
                metrics.record(result)
            except Exception:
                logger.exception("metrics sink failed for %r", self.tool.name)
        return result


def _judge(breaker: CircuitBreaker, result: ToolResult) -> ToolResult:
    error = result.error
    if error is None:
        breaker.record_success()
    elif error.counts_as_failure:
        breaker.record_failure()
    else:
        breaker.release()
    return result


def _retried(result: ToolResult, attempts: int, started_ns: int) -> ToolResult:
    first = float(result.metadata.get("duration_ms", 0.0))
    total = first + (time.perf_counter_ns() - started_ns) / 1e6
    return result._with_trusted_metadata(attempts=attempts, duration_ms=total)


def _failure(tool: BaseTool[Any, Any], info: ErrorInfo) -> ToolResult:
    return ToolResult._trusted("error", None, info, tool._metadata(time.perf_counter_ns(), time.time()))
