"""Resilience building blocks: circuit breaker, retry policy (tenacity) and the clock.

Time is injected (``clock`` for reading, ``sleep`` for waiting) so tests never sleep.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import timezone
from typing import Any, Literal

from tools.result import ToolResult

BreakerState = Literal["closed", "open", "half_open"]


class CircuitBreaker:
    """Per-tool breaker: closed -> open after N consecutive failures -> half-open probe.

    Only failures of the tool or its upstream count (``execution_error``,
    ``upstream_error``, ``timeout``); the registry decides what to record. Thread-safe.

    Args:
        failure_threshold: Consecutive failures that open the circuit (>= 1).
        reset_timeout: Seconds the circuit stays open before one probe call is let through.
        clock: Monotonic clock in seconds (injectable for tests).
    """

    def __init__(
        self,
        failure_threshold: int = 5,
        reset_timeout: float = 30.0,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if failure_threshold < 1:
            raise ValueError("failure_threshold must be at least 1")
        if reset_timeout < 0:
            raise ValueError("reset_timeout must be >= 0 seconds")
        self.failure_threshold = failure_threshold
        self.reset_timeout = reset_timeout
        self._clock = clock
        self._lock = threading.Lock()
        self._state: BreakerState = "closed"
        self._failures = 0
        self._opened_at = 0.0
        self._probe_in_flight = False

    @property
    def state(self) -> BreakerState:
        """The current state, moving open -> half_open once the reset timeout has passed."""
        with self._lock:
            if self._state == "open" and self._clock() - self._opened_at >= self.reset_timeout:
                return "half_open"
            return self._state

    @property
    def consecutive_failures(self) -> int:
        """Failures counted since the last success."""
        return self._failures

    def before_call(self) -> float | None:
        """Ask to make a call: ``None`` if allowed, else seconds until a probe is allowed."""
        if self._state == "closed":
            return None
        with self._lock:
            state: BreakerState = self._state
            if state == "closed":
                return None
            remaining = self.reset_timeout - (self._clock() - self._opened_at)
            if state == "open" and remaining > 0:
                return remaining
            if self._probe_in_flight:
                return max(remaining, 0.0)
            self._state = "half_open"
            self._probe_in_flight = True
            return None

    def record_success(self) -> None:
        """A call succeeded (or failed in a way that is not the tool's fault)."""
        if self._state == "closed" and self._failures == 0:
            return
        with self._lock:
            self._state = "closed"
            self._failures = 0
            self._probe_in_flight = False

    def record_failure(self) -> None:
        """A call failed because of the tool or its upstream."""
        with self._lock:
            self._failures += 1
            if self._state == "half_open" or self._failures >= self.failure_threshold:
                self._state = "open"
                self._opened_at = self._clock()
            self._probe_in_flight = False

    def release(self) -> None:
        """A permitted call ended without a verdict (e.g. bad input): free the probe slot."""
        if self._probe_in_flight:
            with self._lock:
                self._probe_in_flight = False


@dataclass(frozen=True)
class RetryPolicy:
    """Retries of calls whose error is ``retryable`` (off unless a tool declares one).

    Exponential backoff with jitter: ``initial_delay * multiplier**n`` capped at
    ``max_delay`` plus up to ``jitter`` seconds of random jitter.

    Args:
        max_attempts: Total attempts including the first (>= 1).
        initial_delay: Seconds before the first retry.
        max_delay: Upper bound of one wait, in seconds.
        multiplier: Growth factor of the wait.
        jitter: Maximum random seconds added to each wait (0 disables jitter).
    """

    max_attempts: int = 3
    initial_delay: float = 0.2
    max_delay: float = 5.0
    multiplier: float = 2.0
    jitter: float = 0.1

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("RetryPolicy.max_attempts must be at least 1")
        if self.initial_delay < 0 or self.max_delay < 0 or self.jitter < 0:
            raise ValueError("RetryPolicy delays must be >= 0 seconds")

    def _wait(self) -> Any:  # tenacity's wait base type is not public
        from tenacity import wait_exponential, wait_random

        exponential = wait_exponential(multiplier=self.initial_delay, max=self.max_delay, exp_base=self.multiplier)
        return exponential + wait_random(0, self.jitter) if self.jitter else exponential

    def run(
        self,
        first: ToolResult,
        attempt: Callable[[], ToolResult],
        *,
        sleep: Callable[[float], None] = time.sleep,
    ) -> tuple[ToolResult, int]:
        """Retry after ``first`` while the result is a retryable error.

        Returns the last result and the number of attempts made (``first`` included).
        """
        if not _should_retry(first) or self.max_attempts == 1:
            return first, 1
        from tenacity import Retrying, retry_if_result, stop_after_attempt

        pending = [first]

        def call() -> ToolResult:
            return pending.pop() if pending else attempt()

        retrying = Retrying(
            stop=stop_after_attempt(self.max_attempts),
            wait=self._wait(),
            retry=retry_if_result(_should_retry),
            sleep=sleep,
            reraise=True,
            retry_error_callback=lambda state: state.outcome.result() if state.outcome else first,
        )
        result = retrying(call)
        return result, retrying.statistics.get("attempt_number", self.max_attempts)

    async def arun(
        self,
        first: ToolResult,
        attempt: Callable[[], Awaitable[ToolResult]],
        *,
        sleep: Callable[[float], Awaitable[None]] | None = None,
    ) -> tuple[ToolResult, int]:
        """Async twin of :meth:`run` (``sleep`` defaults to ``asyncio.sleep``)."""
        if not _should_retry(first) or self.max_attempts == 1:
            return first, 1
        import asyncio

        from tenacity import AsyncRetrying, retry_if_result, stop_after_attempt

        pending = [first]

        async def call() -> ToolResult:
            return pending.pop() if pending else await attempt()

        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.max_attempts),
            wait=self._wait(),
            retry=retry_if_result(_should_retry),
            sleep=sleep or asyncio.sleep,
            reraise=True,
            retry_error_callback=lambda state: state.outcome.result() if state.outcome else first,
        )
        result: ToolResult = await retrying(call)
        return result, retrying.statistics.get("attempt_number", self.max_attempts)


def parse_retry_after(value: str | None, *, now: float, cap: float = math.inf) -> float | None:
    """Seconds to wait from a ``Retry-After`` header: delta seconds or an HTTP date.

    Args:
        value: The header's value (None or empty: absent).
        now: The current time as a Unix timestamp (for HTTP dates).
        cap: The longest wait honoured.

    Returns:
        The wait in seconds, at least 0 (a date in the past) and at most ``cap``; None
        when the value is absent or malformed (fall back to exponential back-off).
    """
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        from email.utils import parsedate_to_datetime

        try:
            when = parsedate_to_datetime(value)
            if when.tzinfo is None:
                when = when.replace(tzinfo=timezone.utc)
            seconds = when.timestamp() - now
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
    if math.isnan(seconds):
        return None
    return min(max(seconds, 0.0), cap)


def _should_retry(result: ToolResult) -> bool:
    return result.error is not None and result.error.retryable
