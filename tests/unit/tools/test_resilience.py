"""Circuit breaker, retries and timeouts through the registry, with injected time."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest
from pydantic import BaseModel

from tools import (
    BaseTool,
    CircuitBreaker,
    InMemoryMetrics,
    LocalToolRegistry,
    RetryPolicy,
    ToolError,
    UpstreamError,
)


class Req(BaseModel):
    n: int = 0


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Scripted(BaseTool[Req, Any]):
    """Fails with the queued exceptions, then succeeds."""

    name = "scripted"

    def __init__(self, failures: list[Exception]) -> None:
        self.failures = failures
        self.calls = 0
        self.lock = threading.Lock()

    def execute_internal(self, request: Req) -> Any:
        with self.lock:
            self.calls += 1
            if self.failures:
                raise self.failures.pop(0)
        return {"ok": request.n}


def test_breaker_opens_after_five_failures_and_half_opens_after_30s() -> None:
    clock = FakeClock()
    registry = LocalToolRegistry(clock=clock)
    tool = Scripted([ToolError("down", trips_breaker=True)] * 5)
    registry.register(tool)
    for _ in range(5):
        assert registry("scripted")["error_type"] == "execution_error"
    blocked = registry("scripted")
    assert blocked["error_type"] == "circuit_open" and blocked["retryable"] is True
    assert "temporarily disabled" in blocked["error"]
    assert tool.calls == 5
    clock.now += 29.9
    assert registry("scripted")["error_type"] == "circuit_open"
    clock.now += 0.2
    assert registry("scripted")["status"] == "success"  # the probe closes the circuit
    assert registry.breaker("scripted").state == "closed"  # type: ignore[union-attr]


def test_failed_probe_reopens() -> None:
    clock = FakeClock()
    registry = LocalToolRegistry(clock=clock, failure_threshold=2, reset_timeout=10)
    registry.register(Scripted([UpstreamError("x")] * 3))
    registry("scripted")
    registry("scripted")
    assert registry("scripted")["error_type"] == "circuit_open"
    clock.now += 10
    assert registry("scripted")["error_type"] == "upstream_error"
    assert registry("scripted")["error_type"] == "circuit_open"


def test_validation_errors_and_unknown_tools_do_not_count() -> None:
    registry = LocalToolRegistry(failure_threshold=2)
    registry.register(Scripted([]))
    for _ in range(10):
        assert registry("scripted", n="x")["error_type"] == "validation_error"
        registry("scriptd")
    assert registry("scripted")["status"] == "success"


def test_success_resets_consecutive_failures() -> None:
    registry = LocalToolRegistry(failure_threshold=3)
    tool = Scripted([ToolError("a", trips_breaker=True), ToolError("b", trips_breaker=True)])
    registry.register(tool)
    registry("scripted")
    registry("scripted")
    assert registry("scripted")["status"] == "success"
    tool.failures = [ToolError("c", trips_breaker=True), ToolError("d", trips_breaker=True)]
    registry("scripted")
    registry("scripted")
    assert registry("scripted")["status"] == "success"


def test_retry_is_off_unless_declared() -> None:
    registry = LocalToolRegistry()
    tool = Scripted([UpstreamError("503")])
    registry.register(tool)
    out = registry("scripted")
    assert out["error_type"] == "upstream_error" and out["_metadata"]["attempts"] == 1
    assert tool.calls == 1


def test_retry_with_backoff_counts_attempts() -> None:
    sleeps: list[float] = []
    registry = LocalToolRegistry(sleep=sleeps.append)
    tool = Scripted([UpstreamError("503"), UpstreamError("503")])
    registry.register(tool, retry=RetryPolicy(max_attempts=4, initial_delay=0.5, jitter=0.0))
    out = registry("scripted", n=7)
    assert out["data"] == {"ok": 7}
    assert out["_metadata"]["attempts"] == 3
    assert sleeps == [0.5, 1.0]


def test_retry_gives_up_and_skips_non_retryable() -> None:
    sleeps: list[float] = []
    registry = LocalToolRegistry(sleep=sleeps.append)
    registry.register(Scripted([UpstreamError("x")] * 5), retry=RetryPolicy(max_attempts=3, jitter=0.0))
    out = registry("scripted")
    assert out["error_type"] == "upstream_error" and out["_metadata"]["attempts"] == 3
    assert len(sleeps) == 2
    plain = Scripted([ToolError("not retryable")])
    registry.register(plain, name="plain", retry=RetryPolicy(max_attempts=3))
    assert registry("plain")["_metadata"]["attempts"] == 1
    assert registry.get_tool("plain").calls == 1  # type: ignore[union-attr]  # an alias is a shallow copy


async def test_async_retry_uses_async_sleep() -> None:
    sleeps: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        sleeps.append(seconds)

    registry = LocalToolRegistry(async_sleep=fake_sleep)
    registry.register(
        Scripted([UpstreamError("x")]),
        retry=RetryPolicy(max_attempts=2, initial_delay=0.25, jitter=0),
    )
    result = await registry.acall_tool("scripted")
    assert result.ok and result.metadata["attempts"] == 2 and sleeps == [0.25]


class Sleeper(BaseTool[Req, Any]):
    name = "sleeper"
    timeout = 0.05

    def execute_internal(self, request: Req) -> Any:
        time.sleep(0.5)
        return "late"


class AsyncSleeper(BaseTool[Req, Any]):
    name = "async_sleeper"

    async def execute_internal(self, request: Req) -> Any:
        await asyncio.sleep(5)
        return "late"


def test_sync_timeout_returns_timeout_error() -> None:
    metrics = InMemoryMetrics()
    registry = LocalToolRegistry(metrics=metrics)
    registry.register(Sleeper())
    out = registry("sleeper")
    assert out["error_type"] == "timeout" and out["retryable"] is True
    assert "did not finish within 0.05 s" in out["error"]
    assert metrics.stats("sleeper").error_types["timeout"] == 1


async def test_async_timeouts_sync_and_async_tools() -> None:
    registry = LocalToolRegistry(default_timeout=0.05)
    registry.register(AsyncSleeper())
    registry.register(Sleeper())
    results = await asyncio.gather(registry.acall_tool("async_sleeper"), registry.acall_tool("sleeper"))
    assert [r.error.type if r.error else None for r in results] == ["timeout", "timeout"]
    sync_result = registry.call_tool("async_sleeper")
    assert sync_result.error is not None and sync_result.error.type == "timeout"


def test_timeouts_count_for_the_breaker() -> None:
    registry = LocalToolRegistry(failure_threshold=2)
    registry.register(Sleeper())
    registry("sleeper")
    registry("sleeper")
    assert registry("sleeper")["error_type"] == "circuit_open"


def test_breaker_rejects_bad_settings() -> None:
    with pytest.raises(ValueError, match="failure_threshold"):
        CircuitBreaker(failure_threshold=0)
    with pytest.raises(ValueError, match="max_attempts"):
        RetryPolicy(max_attempts=0)


def test_input_caused_tool_errors_never_open_the_breaker() -> None:
    """A ToolError is about this call's input unless it says trips_breaker=True."""
    registry = LocalToolRegistry(failure_threshold=2)
    tool = Scripted([ToolError("no such page")] * 5)
    registry.register(tool)
    for _ in range(5):
        assert registry("scripted")["error_type"] == "execution_error"
    assert registry.breaker("scripted").state == "closed"  # type: ignore[union-attr]


def test_upstream_errors_open_the_breaker_by_default() -> None:
    registry = LocalToolRegistry(failure_threshold=2)
    registry.register(Scripted([UpstreamError("backend down")] * 2))
    registry("scripted")
    registry("scripted")
    assert registry("scripted")["error_type"] == "circuit_open"


def test_each_action_of_a_composite_tool_has_its_own_breaker() -> None:
    from tools import ActionStrategy, CompositeTool

    class Target(BaseModel):
        n: int = 0

    class Broken(ActionStrategy[Target]):
        action_name = "broken"
        description = "Its backend is down."

        def execute(self, request: Target) -> Any:
            raise UpstreamError("backend down")

    class Fine(ActionStrategy[Target]):
        action_name = "fine"
        description = "Works."

        def execute(self, request: Target) -> Any:
            return request.n

    class Multi(CompositeTool):
        name = "multi"
        description = "Two actions."

        def __init__(self) -> None:
            super().__init__([Broken(), Fine()])

    registry = LocalToolRegistry(failure_threshold=2)
    registry.register(Multi())
    for _ in range(2):
        assert registry("multi", action="broken")["error_type"] == "upstream_error"
    assert registry("multi", action="broken")["error_type"] == "circuit_open"
    assert registry.breaker("multi", action="broken").state == "open"  # type: ignore[union-attr]
    # The other action keeps working, from JSON text too.
    assert registry("multi", action="fine", n=3)["data"] == 3
    assert registry.call_tool_raw("multi", '{"action": "fine", "n": 4}').data == 4
    assert registry.breaker("multi", action="fine").state == "closed"  # type: ignore[union-attr]
