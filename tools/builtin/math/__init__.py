"""``math_solver``: exact math with sympy on parsed (never evaluated) model input.

Public names: :class:`MathSolverTool` and its :class:`MathRequest` / :class:`MathResponse`,
the bounds of in-process arithmetic :class:`ArithmeticLimits`,
the :class:`MathEngine` protocol with its default :class:`SympyWorkerPool`, the
:class:`MathJob` it computes, and :class:`MathParser` / :class:`ParseLimits`.
"""

from tools.builtin.math.arithmetic import ArithmeticLimits
from tools.builtin.math.engine import MathEngine, MathJob, SympyWorkerPool
from tools.builtin.math.parser import MathParser, ParseLimits
from tools.builtin.math.tool import MathRequest, MathResponse, MathSolverTool

__all__ = [
    "ArithmeticLimits",
    "MathEngine",
    "MathJob",
    "MathParser",
    "MathRequest",
    "MathResponse",
    "MathSolverTool",
    "ParseLimits",
    "SympyWorkerPool",
]
