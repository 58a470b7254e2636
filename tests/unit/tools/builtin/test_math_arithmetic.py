"""Plain arithmetic in process: exact, bounded before computing, the worker for everything else.

The real sympy worker pool answers whatever the in-process path leaves to it (wrapped in a
small counter, so the tests see which path answered); integer arithmetic must come out
exactly as the worker would have written it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tools.builtin.math import MathJob, MathSolverTool, SympyWorkerPool
from tools.builtin.math.arithmetic import ArithmeticLimits, decimal_text, evaluate_plain
from tools.builtin.math.parser import MathParser


class Counting:
    """A real engine, counted."""

    def __init__(self, engine: SympyWorkerPool) -> None:
        self.engine = engine
        self.jobs: list[MathJob] = []

    def compute(self, job: MathJob) -> dict[str, Any]:
        self.jobs.append(job)
        return self.engine.compute(job)

    def close(self) -> None:
        pass


@pytest.fixture(scope="module")
def pool() -> Iterator[SympyWorkerPool]:
    engine = SympyWorkerPool(max_workers=1, timeout_seconds=30)
    yield engine
    engine.close()


@pytest.fixture
def counted(pool: SympyWorkerPool) -> Counting:
    return Counting(pool)


def evaluate(tool: MathSolverTool, expression: str) -> dict[str, Any]:
    result = tool.execute(expression=expression)
    assert result.error is None, result.error
    data: dict[str, Any] = result.data
    return data


@pytest.mark.parametrize(
    ("expression", "result", "decimal"),
    [
        ("12*(3+4)", "84", "84.0000000000000"),
        ("0.1+0.2", "0.3", "0.300000000000000"),  # no float artefact
        ("0.1*3 - 0.3", "0", "0"),
        ("1/3 + 1/6", "1/2", "0.500000000000000"),
        ("2**-2", "1/4", "0.250000000000000"),
        ("-7/3", "-7/3", "-2.33333333333333"),
        ("7 % -3", "-2", "-2.00000000000000"),  # floored, like sympy's Mod
        ("5.5 % 2", "1.5", "1.50000000000000"),
        ("-2**2", "-4", "-4.00000000000000"),
        ("(-2)**3", "-8", "-8.00000000000000"),
        ("2^10", "1024", "1024.00000000000"),
        ("9.9999999999999999", "9.9999999999999999", "10.0000000000000"),  # as written, not as a float
        ("1.5e-3 * 2", "0.003", "0.00300000000000000"),
        ("10**20 + 1", "100000000000000000001", "1.00000000000000e+20"),
        ("0**0", "1", "1.00000000000000"),
        ("(-1)**(10**50 + 1)", "-1", "-1.00000000000000"),
    ],
)
def test_plain_arithmetic_is_exact_and_never_starts_the_worker(
    counted: Counting, expression: str, result: str, decimal: str
) -> None:
    data = evaluate(MathSolverTool(engine=counted), expression)
    assert (data["result"], data["decimal"]) == (result, decimal)
    assert data["steps"][1:] == [f"Evaluated exactly: {result}", f"Decimal value: {decimal}"]
    assert counted.jobs == []


INTEGER_CORPUS = [
    "12*(3+4)",
    "1/3",
    "-7/3",
    "2/3 - 5/7",
    "2**-5",
    "(3**4 - 1) % 7",
    "-(17 % 5)",
    "123456789012345678 * 3",
    "10**15",
    "10**14 * 999",
    "1000000 / 7",
    "-(2**61) / 3",
    "1 / 100000",
    "1 / 10000",
    "0 - 0",
    "99999999999999995 / 10",
]


@pytest.mark.parametrize("expression", INTEGER_CORPUS)
def test_integer_arithmetic_reads_exactly_as_the_worker_writes_it(
    pool: SympyWorkerPool, counted: Counting, expression: str
) -> None:
    fast = evaluate(MathSolverTool(engine=counted), expression)
    assert counted.jobs == []
    worker = evaluate(MathSolverTool(engine=pool, arithmetic=None), expression)
    keys = ("expression", "result", "latex", "decimal", "steps", "note")
    assert {k: fast[k] for k in keys} == {k: worker[k] for k in keys}
    # The float is the value correctly rounded (sympy's may be an ulp off: 1/100000).
    assert fast["numeric"] == pytest.approx(worker["numeric"], rel=1e-15, abs=0.0)


@pytest.mark.parametrize(
    ("expression", "result"),
    [
        ("1/0", "zoo"),  # complex infinity: the worker says so, with a note
        ("0**-1", "zoo"),
        ("0/0", "nan"),
        ("2**0.5", "1.41421356237310"),
        ("(-8)**(1/3)", "2*(-1)**(1/3)"),
        ("10**9999", "1" + "0" * 9999),  # a 10,000-digit power: past the in-process bound
        ("1" * 1500 + " + 1", "1" * 1499 + "2"),  # a long digit string
        ("pi * 2", "2*pi"),
        ("sqrt(16)", "4"),
    ],
)
def test_anything_else_goes_to_the_worker(counted: Counting, expression: str, result: str) -> None:
    data = evaluate(MathSolverTool(engine=counted), expression)
    assert data["result"] == result
    assert len(counted.jobs) == 1


def test_a_remainder_by_zero_is_the_workers_error(counted: Counting) -> None:
    result = MathSolverTool(engine=counted).execute(expression="1 % 0")
    assert result.error is not None and "Modulo by zero" in result.error.message
    assert len(counted.jobs) == 1


@pytest.mark.parametrize("expression", ["9**9**9", "2**(10**6)", "10**10**10", "(" * 51 + "1" + ")" * 51])
def test_hostile_sizes_are_refused_before_anything_is_computed(counted: Counting, expression: str) -> None:
    result = MathSolverTool(engine=counted).execute(expression=expression)
    assert result.error is not None and result.error.type == "validation_error"
    assert counted.jobs == []


def test_the_bounds_are_checked_before_each_operation() -> None:
    parser = MathParser()
    tight = ArithmeticLimits(max_digits=50, max_exponent=100)
    assert evaluate_plain(parser.expression("10**49"), tight) is not None
    assert evaluate_plain(parser.expression("10**50 * 10"), tight) is None  # the product could pass 50 digits
    assert evaluate_plain(parser.expression("2**101"), tight) is None  # the exponent bound
    assert evaluate_plain(parser.expression("1.5**2"), tight) is not None
    assert evaluate_plain(parser.expression("1e60"), tight) is None  # a literal past the bound
    assert evaluate_plain(parser.expression("1**(10**40)"), tight) is not None  # 1, -1 and 0: any power


def test_raw_trees_past_any_parser_limit_are_left_to_the_worker() -> None:
    tower = ["pow", ["int", "9"], ["pow", ["int", "9"], ["int", "9"]]]
    assert evaluate_plain(tower) is None
    huge_literal = ["mul", ["int", "7" * 5000], ["int", "3"]]
    assert evaluate_plain(huge_literal) is None
    deep: list[Any] = ["int", "1"]
    for _ in range(5000):
        deep = ["neg", deep]
    assert evaluate_plain(deep) is None  # too deep for this path: the parser never builds it
    assert evaluate_plain(["call", "sin", [["int", "1"]]]) is None
    assert evaluate_plain(["float", "inf"]) is None


@pytest.mark.parametrize(
    ("numerator", "denominator", "text"),
    [
        (0, 1, "0"),
        (84, 1, "84.0000000000000"),
        (999_999_999_999_999_5, 10**4, "1000000000000.00"),  # rounding carries into a new digit
        (10**15, 1, "1.00000000000000e+15"),
        (999_000_000_000_000, 1, "999000000000000."),
        (1, 10**4, "0.000100000000000000"),
        (1, 10**5, "1.00000000000000e-5"),
        (-2, 3, "-0.666666666666667"),
        (10**600, 1, "1.00000000000000e+600"),
    ],
)
def test_decimal_text_uses_the_workers_notation(numerator: int, denominator: int, text: str) -> None:
    from fractions import Fraction

    assert decimal_text(Fraction(numerator, denominator)) == text
