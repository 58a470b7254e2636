"""One registered tool with its call policy: breaker, retry, timeout and metrics.

Every registry call path goes through :class:`ToolEntry`, so ``get(name)(...)``,
``registry(name, ...)``, ``call_tool`` and ``acall_tool`` behave the same.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tools.base import BaseTool, new_request_id, parse_arguments
from tools.errors import InvalidArgumentsError
from tools.metrics import MetricsSink
from tools.resilience import CircuitBreaker, RetryPolicy
from tools.result import ErrorInfo, ToolResult

if TYPE_CHECKING:
    from tools.routing import ToolManual

Arguments = str | bytes | Mapping[str, Any] | None


@dataclass(frozen=True)
class CallContext:
    """What every entry of one registry shares: time, sleeping and the metrics sink."""

    metrics: MetricsSink | None = None
    sleep: Callable[[float], None] = time.sleep
    async_sleep: Callable[[float], Awaitable[None]] | None = None


@dataclass
class ToolEntry:
    """A registered tool and its policy; call it through :meth:`call` / :meth:`acall`."""

    tool: BaseTool[Any, Any]
    breaker: CircuitBreaker
    context: CallContext
    retry: RetryPolicy | None = None
    timeout: float | None = None
    preset: dict[str, Any] = field(default_factory=dict)
    manual: ToolManual = None  # type: ignore[assignment]  # always set by the registry

    @property
    def name(self) -> str:
        """The name the entry is registered under."""
        return self.tool.name

    # ----------------------------------------------------------------- sync

    def call(self, arguments: Arguments) -> ToolResult:
        """Run one call with breaker, retry, timeout and metrics; never raises."""
        breaker = self.breaker
        if breaker._state != "closed":  # the cheap check first: closed is the common case
            blocked = self._blocked()
            if blocked is not None:
                return self._finish(blocked)
        if self.preset or self.timeout is not None:
            attempt = self._attempt_fn(arguments)
            result = attempt()
        elif isinstance(arguments, (str, bytes)):
            result = self.tool.execute_raw(arguments)
        else:
            result = self.tool._execute(dict(arguments) if arguments else {}, None)
        error = result.error
        if error is None:
            if breaker._failures:
                breaker.record_success()
            if self.context.metrics is None:
                return result
            return self._finish(result)
        if self.retry is not None and error.retryable:
            started = time.perf_counter_ns()
            retry_attempt = self._attempt_fn(arguments)
            result, attempts = self.retry.run(result, retry_attempt, sleep=self.context.sleep)
            result = _retried(result, attempts, started)
        return self._finish(self._judge(result))

    def _attempt_fn(self, arguments: Arguments) -> Callable[[], ToolResult]:
        tool = self.tool
        if self.preset:
            merged = self._with_preset(arguments)
            if isinstance(merged, ToolResult):
                return lambda: merged
            arguments = merged
        if self.timeout is None:
            if isinstance(arguments, Mapping):
                kwargs = dict(arguments)
                return lambda: tool._execute(kwargs, None)
            return lambda: tool.execute_raw(arguments)
        timeout = self.timeout
        return lambda: _run_with_timeout(lambda: tool.execute_raw(arguments), timeout, tool)

    # ----------------------------------------------------------------- async

    async def acall(self, arguments: Arguments) -> ToolResult:
        """Async twin of :meth:`call`; sync tools run in worker threads."""
        blocked = self._blocked()
        if blocked is not None:
            return self._finish(blocked)
        if self.preset:
            merged = self._with_preset(arguments)
            if isinstance(merged, ToolResult):
                return self._finish(merged)
            arguments = merged
        tool, timeout = self.tool, self.timeout
        import asyncio

        async def attempt() -> ToolResult:
            if timeout is None:
                return await tool.aexecute_raw(arguments)
            try:
                return await asyncio.wait_for(tool.aexecute_raw(arguments), timeout)
            except asyncio.TimeoutError:
                return _timeout_result(tool, timeout)

        result = await attempt()
        if self.retry is not None and result.error is not None and result.error.retryable:
            started = time.perf_counter_ns()
            result, attempts = await self.retry.arun(result, attempt, sleep=self.context.async_sleep)
            result = _retried(result, attempts, started)
        return self._finish(self._judge(result))

    # ----------------------------------------------------------------- shared

    def _blocked(self) -> ToolResult | None:
        wait = self.breaker.before_call()
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
            ),
        )

    def _judge(self, result: ToolResult) -> ToolResult:
        error = result.error
        if error is None:
            self.breaker.record_success()
        elif error.counts_as_failure:
            self.breaker.record_failure()
        else:
            self.breaker.release()
        return result

    def _finish(self, result: ToolResult) -> ToolResult:
        metrics = self.context.metrics
        if metrics is not None:
            try:
                metrics.record(result)
            except Exception:
                import logging

                logging.getLogger(__name__).exception("metrics sink failed for %r", self.tool.name)
        return result

    def _with_preset(self, arguments: Arguments) -> dict[str, Any] | ToolResult:
        try:
            kwargs = parse_arguments(arguments, self.tool.name)
        except InvalidArgumentsError as exc:
            return _failure(self.tool, ErrorInfo(exc.error_type, exc.message, False, exc.details))
        return {**self.preset, **kwargs}


def _retried(result: ToolResult, attempts: int, started_ns: int) -> ToolResult:
    first = float(result.metadata.get("duration_ms", 0.0))
    total = first + (time.perf_counter_ns() - started_ns) / 1e6
    return result._with_trusted_metadata(attempts=attempts, duration_ms=total)


def _failure(tool: BaseTool[Any, Any], info: ErrorInfo) -> ToolResult:
    return ToolResult._trusted(
        "error", None, info, tool._metadata(time.perf_counter_ns(), time.time(), new_request_id())
    )


def _timeout_result(tool: BaseTool[Any, Any], timeout: float) -> ToolResult:
    return _failure(
        tool,
        ErrorInfo(
            "timeout",
            f"The tool '{tool.name}' did not finish within {timeout:g} s and was abandoned. "
            "Try a smaller request, or try again later.",
            True,
            {"timeout_s": timeout},
        ),
    )


def _run_with_timeout(fn: Callable[[], ToolResult], timeout: float, tool: BaseTool[Any, Any]) -> ToolResult:
    """Run ``fn`` in a daemon thread and stop waiting after ``timeout`` seconds.

    A Python thread cannot be killed: an abandoned call keeps running in the background,
    so tools that may hang should also bound their own I/O. A fresh thread per call keeps
    one hung call from starving the others.
    """
    box: list[ToolResult] = []
    thread = threading.Thread(target=lambda: box.append(fn()), name=f"tooldeck-{tool.name}", daemon=True)
    started = time.perf_counter_ns()
    thread.start()
    thread.join(timeout)
    if box:
        return box[0]
    result = _timeout_result(tool, timeout)
    return result._with_trusted_metadata(duration_ms=(time.perf_counter_ns() - started) / 1e6)
