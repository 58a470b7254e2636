"""Tools the Ray tests register. They live in an importable module because Ray's workers
import a pickled tool's class and functions by name (as they would a deployment's)."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from pydantic import BaseModel, Field

from tools import BaseTool, UpstreamError


def where(tag: str = "") -> dict[str, object]:
    """Report the process that ran the call.

    Args:
        tag: Echoed back.
    """
    return {"pid": os.getpid(), "tag": tag}


def spin(marker: str, seconds: float = 600.0) -> str:
    """Busy-wait in small sleeps; writes MARKER.interrupted when interrupted.

    Args:
        marker: Path prefix of the files this call writes.
        seconds: How long to run when nobody interrupts.
    """
    Path(marker + ".started").write_text(str(os.getpid()))
    try:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            time.sleep(0.01)
    except KeyboardInterrupt:  # what ray.cancel raises in a task
        Path(marker + ".interrupted").write_text("yes")
        raise
    return "finished"


def crash(code: int = 3) -> str:
    """Kill the worker process.

    Args:
        code: Exit status.
    """
    os._exit(code)


def burn(milliseconds: int = 100) -> int:
    """Pure-Python work for about this long.

    Args:
        milliseconds: How long to compute.
    """
    end = time.perf_counter() + milliseconds / 1000
    n = 0
    while time.perf_counter() < end:
        n += 1
    return n


class CountRequest(BaseModel):
    """Count one more call."""

    step: int = Field(default=1, description="How much to add.")


class Counter:
    """A client with state: what a stateful tool holds."""

    def __init__(self) -> None:
        self.steps: list[int] = []

    def add(self, step: int) -> int:
        self.steps.append(step)  # atomic: calls may run in several threads
        return sum(self.steps)


class CountingTool(BaseTool[CountRequest, dict]):  # type: ignore[type-arg]
    """Adds to a counter it holds; answers with the total and the process it runs in."""

    name = "count"
    description = "Count calls."

    def __init__(self, counter: Counter) -> None:
        self._counter = counter

    def execute_internal(self, request: CountRequest) -> dict[str, int]:
        return {"total": self._counter.add(request.step), "pid": os.getpid()}


class SlowActorRequest(BaseModel):
    """How long to take."""

    seconds: float = Field(description="Seconds.")


class SlowStatefulTool(BaseTool[SlowActorRequest, str]):
    """A stateful tool whose calls take as long as asked."""

    name = "slow_stateful"
    description = "Take a while."
    stateful = True

    def execute_internal(self, request: SlowActorRequest) -> str:
        time.sleep(request.seconds)
        return f"slept {request.seconds}"


class LockedTool(BaseTool[CountRequest, int]):
    """Holds a lock, which cannot be pickled."""

    name = "locked"
    description = "Cannot travel."

    def __init__(self) -> None:
        self._lock = threading.Lock()

    def execute_internal(self, request: CountRequest) -> int:
        return request.step


class FailingTool(BaseTool[CountRequest, int]):
    """Always fails (and records each run in a file)."""

    name = "failing"
    description = "Fails."
    stateful = False

    def __init__(self, runs: str) -> None:
        self.runs = runs

    def execute_internal(self, request: CountRequest) -> int:
        with open(self.runs, "a", encoding="utf-8") as handle:
            handle.write("ran\n")
        raise UpstreamError("its backend failed", retryable=False)


class FragileRequest(BaseModel):
    """Count, or kill the process."""

    crash: bool = Field(default=False, description="Exit the process instead.")


class FragileCounter(BaseTool[FragileRequest, int]):
    """A stateful tool that counts its calls and can kill its actor; ``close()`` leaves a mark."""

    name = "fragile"
    description = "Count or crash."
    stateful = True

    def __init__(self, closed_marker: str) -> None:
        self.closed_marker = closed_marker
        self.calls = 0

    def execute_internal(self, request: FragileRequest) -> int:
        if request.crash:
            os._exit(4)
        self.calls += 1
        return self.calls

    def close(self) -> None:
        Path(self.closed_marker).write_text(str(self.calls))
