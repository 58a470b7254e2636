"""MathSolverTool with its real sympy worker processes: answers, hostile input, recovery."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tools import LocalToolRegistry
from tools.builtin.math import MathJob, MathParser, MathSolverTool, SympyWorkerPool
from tools.builtin.math.parser import FUNCTIONS
from tools.errors import ToolError, ToolTimeoutError


def _worker_children(among: set[int] | None = None) -> list[int]:
    """Live (non-zombie) children of this process running the sympy worker (``among``)."""
    found = []
    me = str(os.getpid())
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry.name}/stat").read_text().rsplit(")", 1)[1].split()
            cmdline = Path(f"/proc/{entry.name}/cmdline").read_bytes()
        except (OSError, IndexError):
            continue
        mine = fields[0] != "Z" and fields[1] == me and b"_worker.py" in cmdline
        if mine and (among is None or int(entry.name) in among):
            found.append(int(entry.name))
    return found


@pytest.fixture(scope="module")
def pool() -> Iterator[SympyWorkerPool]:
    """One warm pool for the module (starting sympy takes a while); checked for leftovers."""
    engine = SympyWorkerPool(timeout_seconds=20.0, max_workers=2)
    engine.warm_up()
    yield engine
    engine.close()
    assert _worker_children() == []


@pytest.fixture
def solver(pool: SympyWorkerPool) -> MathSolverTool:
    return MathSolverTool(engine=pool)


def data(tool: MathSolverTool, **arguments: Any) -> dict[str, Any]:
    result = tool.execute(**arguments)
    assert result.error is None, result.error
    out: dict[str, Any] = result.data
    return out


def test_evaluate_is_exact_and_numeric(solver: MathSolverTool) -> None:
    assert data(solver, expression="12*(3+4)", show_steps=False) == {
        "operation": "evaluate",
        "expression": "12 * (3 + 4)",
        "result": "84",
        "latex": "84",
        "numeric": 84.0,
        "decimal": "84.0000000000000",
        "variable": None,
        "solutions": None,
        "numeric_solutions": None,
        "steps": None,
        "note": None,
    }
    irrational = data(solver, expression="sqrt(8) + 1/3")
    assert irrational["result"] == "1/3 + 2*sqrt(2)"
    assert irrational["numeric"] == pytest.approx(3.16176045807952)
    assert data(solver, expression="2^10")["result"] == "1024"
    assert data(solver, expression="sqrt(-4)")["numeric"] is None
    assert data(solver, expression="sqrt(-4)")["decimal"] == "2.0*I"
    assert data(solver, expression="1/0")["note"] == "Division by zero (complex infinity)."


def test_solve_quadratic_with_equals_and_steps(solver: MathSolverTool) -> None:
    out = data(solver, operation="solve", expression="x**2 = 4", show_steps=True)
    assert out["result"] == "x = -2 or x = 2"
    assert out["solutions"] == [{"x": "-2"}, {"x": "2"}]
    assert out["numeric_solutions"] == [{"x": -2.0}, {"x": 2.0}]
    assert out["steps"] == [
        "Input: x ** 2 = 4",
        "Moved everything to one side: x**2 - 4 = 0",
        "Factored: (x - 2)*(x + 2) = 0",
        "Solutions: x = -2 or x = 2",
    ]


def test_solve_system_and_edge_cases(solver: MathSolverTool) -> None:
    system = data(solver, operation="solve", expression="x + y = 3; x - y = 1")
    assert system["solutions"] == [{"x": "2", "y": "1"}]
    assert data(solver, operation="solve", expression="x^2 + 1 = 0")["solutions"] == [
        {"x": "-I"},
        {"x": "I"},
    ]
    assert data(solver, operation="solve", expression="x = x + 1")["result"] == "EmptySet"
    ambiguous = solver.execute(operation="solve", expression="x**2 + y")
    assert ambiguous.error is not None
    assert "say which one in 'variable'" in ambiguous.error.message
    chosen = data(solver, operation="solve", expression="x**2 + y", variable="y")
    assert chosen["solutions"] == [{"y": "-x**2"}]


def test_differentiate_integrate_simplify(solver: MathSolverTool) -> None:
    derivative = data(solver, operation="differentiate", expression="x**3 + sin(x)")
    assert derivative["result"] == "3*x**2 + cos(x)"
    assert data(solver, operation="differentiate", expression="x^4", order=2)["result"] == ("12*x**2")
    indefinite = data(solver, operation="integrate", expression="x**2 + 1", show_steps=True)
    assert indefinite["result"] == "x**3/3 + x"
    assert indefinite["note"] == "Indefinite integral: add an arbitrary constant C."
    definite = data(solver, operation="integrate", expression="sin(x)", lower="0", upper="pi")
    assert (definite["result"], definite["numeric"]) == ("2", 2.0)
    assert data(solver, operation="simplify", expression="sin(t)^2 + cos(t)^2")["result"] == "1"


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("__import__('os').system('id')", "Calling \"__import__('os').system\" is not allowed"),
        ("().__class__.__bases__[0].__subclasses__()", "is not allowed"),
        ("9**9**9**9", "That power would have about"),
        ("factorial(10**9)", "factorial() of that size would have about"),
        ("10**10**10", "That power would have about"),
        ("(" * 10_000 + "1" + ")" * 10_000, "longer than 2000 characters"),
        ("(" * 60 + "1" + ")" * 60, "nested deeper than 50 levels"),
        ("open('/etc/passwd')", "Calling 'open' is not allowed"),
        ("x if y else z", "IfExp syntax is not allowed"),
    ],
)
def test_hostile_math_is_rejected_clearly(solver: MathSolverTool, expression: str, expected: str) -> None:
    result = solver.execute(expression=expression)
    assert result.error is not None
    assert result.error.type == "validation_error"
    assert expected in result.error.message
    assert data(solver, expression="1+1")["result"] == "2"  # still healthy


def _pids(engine: SympyWorkerPool) -> set[int]:
    return {worker.proc.pid for worker in [*engine._idle, *engine._busy]}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_every_allowed_function_is_known_to_the_worker(solver: MathSolverTool, name: str) -> None:
    low, _ = FUNCTIONS[name]
    arguments = ", ".join(["x", "3"][:low]) if low == 2 else "x"
    out = solver.execute(operation="simplify", expression=f"{name}({arguments})")
    assert out.error is None, out.error
    assert out.data["result"]


def test_sympy_failures_are_answers_not_crashes(solver: MathSolverTool) -> None:
    modulo = solver.execute(expression="x % 0")
    assert modulo.error is not None
    assert modulo.error.message == "sympy failed: ZeroDivisionError: Modulo by zero"
    unsolvable = solver.execute(operation="solve", expression="sin(x) + x**x")
    assert unsolvable.error is not None
    assert unsolvable.error.message == "sympy can't solve this equation in closed form."
    no_closed_form = data(solver, operation="integrate", expression="floor(x)**x")
    assert no_closed_form["result"] == "Integral(floor(x)**x, x)"
    assert no_closed_form["note"] == ("sympy found no closed form; the result contains an unevaluated integral.")


def test_long_computation_times_out_and_the_pool_recovers() -> None:
    engine = SympyWorkerPool(timeout_seconds=1.0, max_workers=1)
    tool = MathSolverTool(engine=engine)
    try:
        engine.warm_up()
        first = _pids(engine)
        slow = tool.execute(operation="simplify", expression="(x + y + z)**300 - 1")
        assert slow.error is not None
        assert slow.error.type == "timeout"
        assert "did not finish within 1 s" in slow.error.message
        assert _worker_children(first) == []  # the runaway worker was killed
        assert tool.execute(expression="2*21").data["result"] == "42"
        second = _pids(engine)
        assert second.isdisjoint(first)
    finally:
        engine.close()
    assert _worker_children(second) == []


def test_a_crashed_worker_is_an_error_and_gets_replaced() -> None:
    engine = SympyWorkerPool(timeout_seconds=30.0, max_workers=1)
    engine.warm_up()
    try:
        job = MathJob("simplify", [MathParser().expression("(x + y + z)**300 - 1")])
        errors: list[BaseException] = []

        def run() -> None:
            try:
                engine.compute(job)
            except ToolError as exc:
                errors.append(exc)

        thread = threading.Thread(target=run)
        thread.start()
        while not engine._busy:  # fault injection: kill the worker mid-computation
            time.sleep(0.01)
        time.sleep(0.2)
        next(iter(engine._busy)).proc.kill()
        thread.join(timeout=30)
        assert len(errors) == 1
        assert not isinstance(errors[0], ToolTimeoutError)
        assert "crashed" in str(errors[0])
        assert engine.compute(MathJob("evaluate", [["int", "7"]]))["result"] == "7"
    finally:
        engine.close()


def test_default_tool_owns_and_closes_its_pool() -> None:
    tool = MathSolverTool()
    registry = LocalToolRegistry()
    registry.register(tool)
    try:
        assert registry("math_solver", expression="sqrt(16)")["data"]["result"] == "4"  # the worker's
        started = _pids(tool._engine)  # type: ignore[arg-type]
        assert len(started) == 1
    finally:
        tool.close()
    assert _worker_children(started) == []
    closed = registry("math_solver", expression="sqrt(9)")  # the worker's, which is shut down
    assert closed["status"] == "error"
    assert "shut down" in closed["error"]
