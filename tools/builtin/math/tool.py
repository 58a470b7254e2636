"""MathSolverTool (``math_solver``): evaluate, simplify, solve, differentiate, integrate."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from tools.base import BaseTool
from tools.builtin.math.arithmetic import ArithmeticLimits, evaluate_plain
from tools.builtin.math.engine import MathEngine, MathJob, SympyWorkerPool
from tools.builtin.math.parser import IR, MathParser, to_text
from tools.errors import InvalidArgumentsError
from tools.executors._pickling import shallow_copy, state_without
from tools.manual import ToolCategory, ToolManual


class MathRequest(BaseModel):
    """Arguments of the math_solver tool."""

    operation: Literal["evaluate", "simplify", "solve", "differentiate", "integrate"] = Field(
        default="evaluate",
        description=(
            "What to do: 'evaluate' computes a value exactly and as a decimal, 'simplify' "
            "rewrites an expression, 'solve' finds the values of the variable(s) that make "
            "the equation(s) true, 'differentiate' takes a derivative, 'integrate' an "
            "antiderivative or, with 'lower' and 'upper', a definite integral."
        ),
    )
    expression: str = Field(
        description=(
            "The math, in Python syntax (at most 2000 characters): e.g. '12*(3+4)', "
            "'sin(x)**2 + cos(x)**2', 'x^2 = 4' (^ means power), 'x + y = 3; x - y = 1' "
            "(a system: equations separated by ';'). Write products explicitly (2*x). "
            "Functions: sin, cos, tan, asin, acos, atan, sinh, cosh, tanh, exp, log (log(x) is "
            "natural, log(x, b) base b), ln, sqrt, cbrt, root, abs, factorial, binomial, gamma, "
            "floor, ceiling, min, max, gcd, lcm, re, im; constants pi, e, I (sqrt(-1)), oo."
        ),
    )
    variable: str | None = Field(
        default=None,
        description=(
            "The variable to solve for, differentiate or integrate by, e.g. 'x'; for a system, "
            "comma-separated ('x, y'). Leave empty when the expression has only one variable."
        ),
    )
    order: int = Field(default=1, ge=1, le=10, description="Derivative order (differentiate).")
    lower: str | None = Field(default=None, description="Lower bound of a definite integral, e.g. '0' (integrate).")
    upper: str | None = Field(default=None, description="Upper bound of a definite integral, e.g. 'pi' (integrate).")
    show_steps: bool = Field(default=True, description="Also return the intermediate steps of the work.")


class MathResponse(BaseModel):
    """The answer of the math_solver tool."""

    operation: str = Field(description="The operation performed.")
    expression: str = Field(description="The input as understood, normalised.")
    result: str = Field(description="The exact result (sympy syntax).")
    latex: str | None = Field(default=None, description="The result as LaTeX.")
    numeric: float | None = Field(default=None, description="The result as a float, when it is a real number.")
    decimal: str | None = Field(default=None, description="The result to 15 significant digits (complex numbers too).")
    variable: str | None = Field(default=None, description="The variable(s) used.")
    solutions: list[dict[str, str]] | None = Field(
        default=None, description="For solve: each solution as variable -> exact value."
    )
    numeric_solutions: list[dict[str, float | None]] | None = Field(
        default=None, description="For solve: the solutions as floats (null when not real)."
    )
    steps: list[str] | None = Field(default=None, description="The steps, when asked for.")
    note: str | None = Field(default=None, description="Anything to keep in mind.")


class MathSolverTool(BaseTool[MathRequest, MathResponse]):
    """Exact math with sympy, on input that is parsed, never evaluated as Python.

    Expression text goes through :class:`~tools.builtin.math.parser.MathParser` (an
    allow-list over :mod:`ast`; anything else, such as ``__import__('os')``, attribute
    access or strings, is a ``validation_error`` that says what is allowed). Oversized
    integer work (``9**9**9**9``, ``factorial(10**9)``), input longer than 2000 characters
    or nested deeper than 50 parentheses is refused before computing. Plain arithmetic
    (numbers, ``+ - * / ** %``, parentheses) is evaluated exactly in process, within bounds
    checked before each operation (:mod:`tools.builtin.math.arithmetic`); everything else
    runs in sympy worker processes (:class:`~tools.builtin.math.engine.SympyWorkerPool`)
    with a memory limit and a wall-clock timeout; a computation that runs too long is a
    ``timeout`` error and the worker is replaced.

    Args:
        engine: Where sympy runs. Default: a new :class:`SympyWorkerPool`, owned by this
            tool and stopped by :meth:`close` (started on first use: arithmetic alone never
            starts it). An injected engine is left to its owner.
        parser: The expression parser (its limits). Default: :class:`MathParser` defaults.
        arithmetic: Bounds of in-process arithmetic; None sends everything to the engine.
    """

    name = "math_solver"
    description = (
        "Exact math: evaluate arithmetic, simplify expressions, solve equations and systems, "
        "differentiate and integrate, optionally with steps. Use it instead of doing "
        "arithmetic or algebra in your head."
    )
    version = "1.0.0"
    manual = ToolManual(
        name="math_solver",
        display_name="Math solver",
        description="Computes in process or in a worker process; reads and changes nothing.",
        category=ToolCategory.COMPUTE,
        risk="safe",
        mutating=False,
        token_cost="medium",  # noqa: S106 - a cost level, not a secret
        capabilities=("arithmetic", "algebra", "solve_equation", "calculus", "simplify"),
    )

    def __init__(
        self,
        *,
        engine: MathEngine | None = None,
        parser: MathParser | None = None,
        arithmetic: ArithmeticLimits | None = ArithmeticLimits(),  # noqa: B008 - frozen value object
    ) -> None:
        self._owns_engine = engine is None
        self._engine: MathEngine = engine if engine is not None else SympyWorkerPool()
        self._parser = parser or MathParser()
        self._arithmetic = arithmetic

    def execute_internal(self, request: MathRequest) -> MathResponse:
        """Parse and check the request, compute it (in process or in the engine), shape the answer."""
        job, shown = self._job(request)
        plain = None
        if job.operation == "evaluate" and self._arithmetic is not None:
            plain = evaluate_plain(job.exprs[0], self._arithmetic)
        answer = dict(plain if plain is not None else self._engine.compute(job))
        if not request.show_steps:
            answer.pop("steps", None)
        else:
            answer["steps"] = [f"Input: {shown}", *answer.get("steps", [])]
        fields = MathResponse.model_fields
        return MathResponse(
            operation=request.operation,
            expression=shown,
            **{k: v for k, v in answer.items() if k in fields and k not in ("operation",)},
        )

    def close(self) -> None:
        """Stop the engine's worker processes if this tool created them. Idempotent."""
        if self._owns_engine:
            self._engine.close()

    def __enter__(self) -> MathSolverTool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __copy__(self) -> MathSolverTool:
        return shallow_copy(self)  # an alias shares the engine

    def __getstate__(self) -> dict[str, Any]:
        """Pickled (for a Ray actor): the copy starts its own engine; an injected one cannot travel."""
        return state_without(self, "_engine", owned=self._owns_engine)

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state, _engine=SympyWorkerPool())

    def _job(self, request: MathRequest) -> tuple[MathJob, str]:
        parser = self._parser
        variables = self._variables(request.variable)
        if request.operation == "solve":
            exprs = parser.equations(request.expression)
        else:
            exprs = [parser.expression(request.expression)]
        bounds: list[IR | None] = [None, None]
        if request.operation == "integrate" and (request.lower or request.upper):
            if not (request.lower and request.upper):
                msg = "A definite integral needs both 'lower' and 'upper' (e.g. '0' and 'pi')."
                raise InvalidArgumentsError(msg)
            bounds = [parser.expression(request.lower), parser.expression(request.upper)]
        if request.operation != "solve" and len(variables) > 1:
            msg = f"'{request.operation}' takes one variable, got {', '.join(variables)}."
            raise InvalidArgumentsError(msg)
        job = MathJob(
            operation=request.operation,
            exprs=exprs,
            variables=variables,
            order=request.order,
            lower=bounds[0],
            upper=bounds[1],
            show_steps=request.show_steps,
        )
        return job, "; ".join(to_text(expr) for expr in exprs)

    def _variables(self, text: str | None) -> list[str]:
        if not text or not text.strip():
            return []
        names = [part for part in text.split(",") if part.strip()]
        if len(names) > 10:
            msg = "Give at most 10 variables."
            raise InvalidArgumentsError(msg)
        return [self._parser.variable(name) for name in names]
