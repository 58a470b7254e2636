"""The circuit breaker judges the tool, not the input (issue 9, item 5).

Hostile programs and problems fail *because of their input*: five in a row must leave the
breaker of a registry with ``failure_threshold=2`` closed. A sandbox or worker pool that
cannot work at all still trips it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tools import LocalToolRegistry
from tools.builtin.code_executor import CodeExecutorTool, LocalSandbox, SandboxLimits
from tools.builtin.math import MathSolverTool, SympyWorkerPool

HOSTILE_PROGRAMS = [
    "while True:\n    pass\n",  # killed at the timeout
    "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n",  # fork bomb
    "import ctypes\nctypes.string_at(0)\n",  # segfault
    "x = bytearray(10 * 1024**3)\n",  # MemoryError
    "import sys\nsys.stdout.write('x' * 10_000_000)\n",  # output flood, killed
]

HARD_PROBLEMS = [
    {"operation": "simplify", "expression": "(x+y+z)**300"},
    {"operation": "integrate", "expression": "exp(sin(x)**7)*tan(x)**5/(1+x**13)"},
    {"operation": "simplify", "expression": "(x+2*y+3*z)**250"},
    {"operation": "solve", "expression": "x**7 + y**5*x**3 + sin(x*y) = cos(y)**3", "variable": "x"},
    {"operation": "simplify", "expression": "(a+b+c+d+e)**90"},
]


def registry() -> LocalToolRegistry:
    return LocalToolRegistry(failure_threshold=2)


def test_hostile_programs_leave_the_breaker_closed(sandbox_root: Path) -> None:
    limits = SandboxLimits(timeout_seconds=1.0, max_processes=16, max_drain_bytes=1_000_000, max_output_bytes=1000)
    with LocalSandbox(limits=limits, temp_root=str(sandbox_root)) as box:
        tools = registry()
        tools.register(CodeExecutorTool(sandbox=box))
        for code in HOSTILE_PROGRAMS:
            result = tools("execute_code", code=code)
            assert result["status"] == "success", result
        assert tools.breaker("execute_code").state == "closed"  # type: ignore[union-attr]


def test_a_sandbox_that_cannot_start_trips_the_breaker(sandbox_root: Path) -> None:
    broken = LocalSandbox(launcher="namespaces", launcher_python="/nonexistent/python3", temp_root=str(sandbox_root))
    tools = registry()
    tools.register(CodeExecutorTool(sandbox=broken))
    for _ in range(2):
        result = tools("execute_code", code="print(1)")
        assert result["error_type"] == "execution_error"
    assert tools.breaker("execute_code").state == "open"  # type: ignore[union-attr]


@pytest.fixture(scope="module")
def fast_pool() -> Iterator[SympyWorkerPool]:
    pool = SympyWorkerPool(timeout_seconds=0.5, max_workers=1)
    pool.warm_up()
    yield pool
    pool.close()


def test_problems_that_time_out_leave_the_breaker_closed(fast_pool: SympyWorkerPool) -> None:
    tools = registry()
    tools.register(MathSolverTool(engine=fast_pool))
    for problem in HARD_PROBLEMS:
        result = tools("math_solver", **problem)
        assert result["status"] == "error", result
        assert result["error_type"] == "timeout", result
    assert tools.breaker("math_solver").state == "closed"  # type: ignore[union-attr]


def test_a_worker_pool_that_cannot_start_trips_the_breaker() -> None:
    tools = registry()
    with MathSolverTool(engine=SympyWorkerPool(python="/nonexistent/python3")) as solver:
        tools.register(solver)
        for _ in range(2):
            result = tools("math_solver", expression="sqrt(2)")  # not plain arithmetic: the worker's
            assert result["error_type"] == "execution_error"
        assert tools.breaker("math_solver").state == "open"  # type: ignore[union-attr]
