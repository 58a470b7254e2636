"""MathSolverTool's request handling and answer shaping, with a hand-written fake engine."""

from __future__ import annotations

from typing import Any

import pytest

from tools.builtin.math import MathEngine, MathJob, MathSolverTool, SympyWorkerPool
from tools.errors import ToolError, ToolTimeoutError


class FakeEngine:
    """Records jobs and answers with a canned dict (or raises)."""

    def __init__(self, answer: dict[str, Any] | None = None, error: ToolError | None = None):
        self.jobs: list[MathJob] = []
        self.answer = answer or {"result": "84", "latex": "84", "steps": ["Evaluated: 84"]}
        self.error = error
        self.closed = False

    def compute(self, job: MathJob) -> dict[str, Any]:
        self.jobs.append(job)
        if self.error is not None:
            raise self.error
        return dict(self.answer)

    def close(self) -> None:
        self.closed = True


def test_fake_engine_satisfies_the_protocol() -> None:
    assert isinstance(FakeEngine(), MathEngine)


def test_request_becomes_a_checked_job() -> None:
    engine = FakeEngine()
    tool = MathSolverTool(engine=engine, arithmetic=None)  # everything to the engine
    result = tool.execute(expression="12*(3+4)", show_steps=False)
    assert result.data == {
        "operation": "evaluate",
        "expression": "12 * (3 + 4)",
        "result": "84",
        "latex": "84",
        "numeric": None,
        "decimal": None,
        "variable": None,
        "solutions": None,
        "numeric_solutions": None,
        "steps": None,
        "note": None,
    }
    assert engine.jobs == [
        MathJob(
            operation="evaluate",
            exprs=[["mul", ["int", "12"], ["add", ["int", "3"], ["int", "4"]]]],
        )
    ]


def test_steps_by_default_as_the_old_math_solver_did_and_led_by_the_input() -> None:
    engine = FakeEngine()
    tool = MathSolverTool(engine=engine, arithmetic=None)
    assert tool.execute(expression="84").data["steps"] == ["Input: 84", "Evaluated: 84"]
    assert tool.execute(expression="84", show_steps=False).data["steps"] is None


def test_solve_parses_equations_and_variables() -> None:
    engine = FakeEngine({"result": "x = 2, y = 1", "solutions": [{"x": "2", "y": "1"}]})
    tool = MathSolverTool(engine=engine)
    out = tool.execute(operation="solve", expression="x+y=3; x-y=1", variable="x, y")
    assert out.data["solutions"] == [{"x": "2", "y": "1"}]
    assert out.data["expression"] == "x + y = 3; x - y = 1"
    assert engine.jobs[0].variables == ["x", "y"]
    assert [e[0] for e in engine.jobs[0].exprs] == ["eq", "eq"]


def test_definite_integral_bounds_are_parsed_too() -> None:
    engine = FakeEngine()
    tool = MathSolverTool(engine=engine)
    tool.execute(operation="integrate", expression="sin(x)", lower="0", upper="pi")
    assert (engine.jobs[0].lower, engine.jobs[0].upper) == (["int", "0"], ["const", "pi"])
    half = tool.execute(operation="integrate", expression="x", lower="0")
    assert half.error is not None
    assert half.error.message == ("A definite integral needs both 'lower' and 'upper' (e.g. '0' and 'pi').")
    hostile = tool.execute(operation="integrate", expression="x", lower="0", upper="9**9**9**9")
    assert hostile.error is not None
    assert hostile.error.type == "validation_error"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"expression": "__import__('os').system('id')"}, "is not allowed"),
        ({"operation": "differentiate", "expression": "x*y", "variable": "x, y"}, "one variable"),
        ({"operation": "solve", "expression": "x", "variable": "sin"}, "not a valid variable"),
        (
            {"operation": "solve", "expression": "x", "variable": ",".join("abcdefghijk")},
            "at most 10",
        ),
        ({"expression": "1", "order": 11}, "order"),
        ({"expression": "1", "operation": "factor"}, "operation"),
        ({"expression": "1", "unknown": 1}, "unknown"),
    ],
)
def test_bad_requests_never_reach_the_engine(arguments: dict[str, Any], message: str) -> None:
    engine = FakeEngine()
    result = MathSolverTool(engine=engine).execute(**arguments)
    assert result.error is not None
    assert result.error.type == "validation_error"
    assert message in result.error.message
    assert engine.jobs == []


def test_engine_errors_become_envelopes() -> None:
    timeout = ToolTimeoutError("did not finish within 5 s", retryable=False)
    result = MathSolverTool(engine=FakeEngine(error=timeout)).execute(expression="x")
    assert result.error is not None
    assert (result.error.type, result.error.message) == ("timeout", "did not finish within 5 s")
    failed = MathSolverTool(engine=FakeEngine(error=ToolError("sympy failed"))).execute(expression="x")
    assert failed.error is not None
    assert (failed.error.type, failed.error.message) == ("execution_error", "sympy failed")


def test_close_only_closes_an_owned_engine() -> None:
    injected = FakeEngine()
    with MathSolverTool(engine=injected):
        pass
    assert injected.closed is False
    owned = MathSolverTool()  # the pool starts no process until first used
    assert isinstance(owned._engine, SympyWorkerPool)
    owned.close()
    assert owned.execute(expression="x + 1").error is not None
    assert owned.execute(expression="1 + 1").data["result"] == "2"  # arithmetic needs no engine


def test_schema_describes_the_arguments() -> None:
    schema = MathSolverTool(engine=FakeEngine()).input_schema()
    assert schema["required"] == ["expression"]
    assert set(schema["properties"]) == {
        "operation",
        "expression",
        "variable",
        "order",
        "lower",
        "upper",
        "show_steps",
    }
    assert "x^2 = 4" in schema["properties"]["expression"]["description"]
