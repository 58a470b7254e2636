"""Parse model-written math into a small, allow-listed, size-checked tree (no sympy here).

The text is never given to ``eval``, ``sympify`` or ``parse_expr`` (they run Python). It is
parsed with :func:`ast.parse` (``mode="eval"``) after cheap bounds on length and nesting,
and every node is checked against an allow-list. The result is a JSON-compatible tree
("IR") of lists that the worker process turns into sympy objects:

``["int", "12"]``, ``["float", "1.5"]`` (as written), ``["sym", "x"]``, ``["const", "pi"]``,
``["add"|"sub"|"mul"|"div"|"pow"|"mod", a, b]``, ``["neg"|"pos", a]``,
``["call", "sin", [args...]]`` and, for equations, ``["eq", lhs, rhs]``.

Integer arithmetic that sympy would evaluate eagerly (``9**9**9**9``, ``factorial(10**9)``)
is estimated here, before any computation, and refused when the result would have more
than ``max_digits`` digits.
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass
from typing import Any

from tools.errors import InvalidArgumentsError

IR = list[Any]

#: Function name -> (min arity, max arity). Names are what the model writes.
FUNCTIONS: dict[str, tuple[int, int]] = {
    **dict.fromkeys(("sin", "cos", "tan", "cot", "sec", "csc", "asin", "acos", "atan", "acot"), (1, 1)),
    **dict.fromkeys(("sinh", "cosh", "tanh", "asinh", "acosh", "atanh"), (1, 1)),
    **dict.fromkeys(("exp", "ln", "sqrt", "cbrt", "abs", "factorial", "gamma"), (1, 1)),
    **dict.fromkeys(("floor", "ceiling", "ceil", "sign", "re", "im", "conjugate", "arg"), (1, 1)),
    "log": (1, 2),
    "atan2": (2, 2),
    "root": (2, 2),
    "binomial": (2, 2),
    **dict.fromkeys(("gcd", "lcm"), (2, 2)),
    **dict.fromkeys(("min", "max", "Min", "Max"), (1, 16)),
}
CONSTANTS = ("pi", "e", "E", "I", "oo")
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,31}")
_DECIMAL = re.compile(r"(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_BINOPS: dict[type[ast.operator], str] = {
    ast.Add: "add",
    ast.Sub: "sub",
    ast.Mult: "mul",
    ast.Div: "div",
    ast.Pow: "pow",
    ast.Mod: "mod",
}
_SYMBOLS = {"add": "+", "sub": "-", "mul": "*", "div": "/", "pow": "**", "mod": "%"}
_FACTORIAL_LIKE = frozenset({"factorial", "gamma"})


def allowed_syntax() -> str:
    """One paragraph, for the model, of what expressions may contain."""
    return (
        "Write math in Python syntax, e.g. 'x**2 - 4', '2*sin(x)/3', 'x^2 = 4'. Allowed: "
        "numbers, variable names (a letter, then letters, digits or _, at most 32 chars), "
        "+ - * / ** % (^ also means power), parentheses, '=' for an equation (';' between "
        f"equations), functions {', '.join(sorted(FUNCTIONS))}, constants "
        f"{', '.join(CONSTANTS)} (e = E = 2.718..., I = sqrt(-1), oo = infinity). "
        "Write products explicitly (2*x, not 2x)."
    )


def _reject(problem: str) -> InvalidArgumentsError:
    return InvalidArgumentsError(f"{problem} {allowed_syntax()}")


@dataclass(frozen=True, slots=True)
class ParseLimits:
    """Bounds on what :class:`MathParser` accepts.

    Attributes:
        max_length: Longest expression text, in characters.
        max_nesting: Deepest parenthesis nesting.
        max_depth: Deepest expression tree (operators chained or nested).
        max_digits: Largest exact integer result sympy may have to build, in digits.
    """

    max_length: int = 2000
    max_nesting: int = 50
    max_depth: int = 200
    max_digits: int = 10_000


# An estimate of a numeric subtree: an exact int, a log10 bound of |value|, or None
# (symbolic or otherwise unknown).
_Estimate = tuple[str, float | int | None]
_SYMBOLIC: _Estimate = ("sym", None)


class MathParser:
    """Turns expression text into the IR, rejecting anything outside the allow-list.

    Args:
        limits: Size bounds; the defaults suit a chat model's questions.
    """

    def __init__(self, limits: ParseLimits | None = None) -> None:
        self.limits = limits or ParseLimits()

    def variable(self, name: str) -> str:
        """Validate a variable name (``x``, ``theta2``); raise InvalidArgumentsError if bad."""
        name = name.strip()
        if not _NAME.fullmatch(name) or name in FUNCTIONS or name in CONSTANTS:
            msg = (
                f"{name[:40]!r} is not a valid variable name: use a letter followed by "
                "letters, digits or _ (at most 32 characters), not a function or constant name."
            )
            raise InvalidArgumentsError(msg)
        return name

    def expression(self, text: str) -> IR:
        """Parse one expression (no ``=``).

        Raises:
            InvalidArgumentsError: Anything outside the allow-list, too long, too deep, or an
                integer result too large to compute; the message says what is allowed.
        """
        source = self._precheck(text)
        if re.search(r"(?<![<>=!])=(?!=)|==", source):
            raise _reject("An '=' is not allowed here; give a single expression.")
        return self._parse(source)

    def equations(self, text: str) -> list[IR]:
        """Parse ``;``-separated equations ``lhs = rhs`` (``==`` also works); a bare
        expression means ``expression = 0``.

        Raises:
            InvalidArgumentsError: As :meth:`expression`, or more than one ``=`` in a part,
                or an inequality.
        """
        source = self._precheck(text)
        parts = [part for part in source.split(";") if part.strip()]
        if not parts or len(parts) > 10:
            raise _reject("Give between 1 and 10 equations separated by ';'.")
        out: list[IR] = []
        for part in parts:
            if re.search(r"[<>]|!=", part):
                raise _reject("Inequalities are not supported; use '=' for an equation.")
            sides = re.split(r"==?", part)
            if len(sides) > 2:
                raise _reject("Use one '=' per equation; separate equations with ';'.")
            if len(sides) == 2:
                out.append(["eq", self._parse(sides[0]), self._parse(sides[1])])
            else:
                out.append(self._parse(sides[0]))
        return out

    def _precheck(self, text: str) -> str:
        if not isinstance(text, str) or not text.strip():
            raise _reject("The expression is empty.")
        if len(text) > self.limits.max_length:
            raise _reject(f"The expression is longer than {self.limits.max_length} characters.")
        depth = deepest = 0
        for char in text:
            if char in "([{":
                depth += 1
                deepest = max(deepest, depth)
            elif char in ")]}":
                depth -= 1
        if deepest > self.limits.max_nesting:
            raise _reject(f"Parentheses are nested deeper than {self.limits.max_nesting} levels.")
        return text.replace("^", "**")

    def _parse(self, source: str) -> IR:
        if not source.strip():
            raise _reject("One side of an equation is empty.")
        try:
            tree = ast.parse(source.strip(), mode="eval")
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            raise _reject(f"Could not parse {source.strip()[:80]!r}.") from None
        self._check_depth(tree.body)
        ir = self._node(tree.body, source.strip())
        self._estimate(ir)
        return ir

    def _check_depth(self, root: ast.AST) -> None:
        stack: list[tuple[ast.AST, int]] = [(root, 1)]
        while stack:
            node, depth = stack.pop()
            if depth > self.limits.max_depth:
                raise _reject(f"The expression is nested deeper than {self.limits.max_depth}.")
            stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))

    def _node(self, node: ast.AST, source: str) -> IR:
        if isinstance(node, ast.Constant):
            return self._constant(node.value, ast.get_source_segment(source, node))
        if isinstance(node, ast.Name):
            if node.id in CONSTANTS:
                return ["const", node.id]
            if node.id in FUNCTIONS:
                raise _reject(f"{node.id!r} is a function; call it like {node.id}(x).")
            if not _NAME.fullmatch(node.id):
                raise _reject(
                    f"{node.id[:40]!r} is not a valid variable name (a letter, then letters, "
                    "digits or _, at most 32 characters)."
                )
            return ["sym", node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            return [_BINOPS[type(node.op)], self._node(node.left, source), self._node(node.right, source)]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
            return ["neg" if isinstance(node.op, ast.USub) else "pos", self._node(node.operand, source)]
        if isinstance(node, ast.Call):
            return self._call(node, source)
        raise _reject(f"{type(node).__name__} syntax is not allowed.")

    def _constant(self, value: object, text: str | None) -> IR:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise _reject(f"The literal {str(value)[:40]!r} is not a number.")
        if isinstance(value, float):
            if not math.isfinite(value):
                raise _reject("Floating-point literals must be finite.")
            # The decimal as written (0.1 is one tenth, 9.99999999999999999 is not 10), when
            # it is a plain decimal literal; else the float's shortest form.
            spelled = text.replace("_", "") if text is not None else ""
            return ["float", spelled if _DECIMAL.fullmatch(spelled) else repr(value)]
        return ["int", str(value)]

    def _call(self, node: ast.Call, source: str) -> IR:
        func = node.func
        if not isinstance(func, ast.Name) or func.id not in FUNCTIONS:
            name = func.id if isinstance(func, ast.Name) else ast.unparse(func)[:60]
            raise _reject(f"Calling {name!r} is not allowed; only the functions below are.")
        if node.keywords:
            raise _reject(f"{func.id}() takes no keyword arguments.")
        low, high = FUNCTIONS[func.id]
        if not low <= len(node.args) <= high:
            arity = str(low) if low == high else f"{low} to {high}"
            raise _reject(f"{func.id}() takes {arity} argument(s), got {len(node.args)}.")
        return ["call", func.id, [self._node(arg, source) for arg in node.args]]

    # -- size estimation ------------------------------------------------------------

    def _estimate(self, ir: IR) -> _Estimate:
        kind = ir[0]
        if kind in ("int", "float", "const", "sym"):
            return _leaf_estimate(ir)
        if kind in ("neg", "pos"):
            inner = self._estimate(ir[1])
            if inner[0] == "exact" and isinstance(inner[1], int):
                return ("exact", -inner[1] if kind == "neg" else inner[1])
            return inner
        if kind == "call":
            return self._estimate_call(ir[1], [self._estimate(arg) for arg in ir[2]])
        return self._estimate_binop(kind, self._estimate(ir[1]), self._estimate(ir[2]))

    def _too_big(self, digits: float, what: str) -> InvalidArgumentsError:
        return InvalidArgumentsError(
            f"{what} would have about {_human(digits)} digits, more than the "
            f"{self.limits.max_digits} this tool computes exactly. Use smaller numbers, or "
            "ask for something that doesn't need the exact value (e.g. work with logarithms)."
        )

    def _estimate_binop(self, kind: str, left: _Estimate, right: _Estimate) -> _Estimate:
        if kind == "pow":
            return self._estimate_pow(left, right)
        if left[0] == "sym" or right[0] == "sym":
            return _SYMBOLIC
        a, b = left[1], right[1]
        if left[0] == right[0] == "exact" and isinstance(a, int) and isinstance(b, int):
            if kind == "mul":
                digits = _log10(left) + _log10(right)
                if digits > self.limits.max_digits:
                    raise self._too_big(digits, "That product")
                return ("exact", a * b)
            if kind in ("add", "sub"):
                return ("exact", a + b if kind == "add" else a - b)
        la, lb = _log10(left), _log10(right)
        if kind in ("add", "sub", "mod"):
            return ("mag", max(la, lb) + 0.31)
        return ("mag", la + lb)  # mul, div (a rational's digits are bounded by both)

    def _estimate_pow(self, base: _Estimate, exponent: _Estimate) -> _Estimate:
        if base[0] == "exact" and base[1] in (0, 1, -1):
            return ("mag", 1.0)
        if exponent[0] == "sym":
            return _SYMBOLIC
        exp_value = exponent[1]
        if exponent[0] == "exact" and isinstance(exp_value, int):
            bound = float(abs(exp_value)) if abs(exp_value) < 10**300 else math.inf
        else:
            bound = 10.0 ** min(float(exp_value or 0.0), 400.0)
        if base[0] == "sym":
            return _SYMBOLIC
        digits = bound * max(_log10(base), 0.0)
        if digits > self.limits.max_digits:
            raise self._too_big(digits, "That power")
        b = base[1]
        exact = base[0] == exponent[0] == "exact"
        if exact and isinstance(b, int) and isinstance(exp_value, int) and exp_value >= 0:
            return ("exact", b**exp_value)
        return ("mag", digits + 1.0)

    def _estimate_call(self, name: str, args: list[_Estimate]) -> _Estimate:
        if any(arg[0] == "sym" for arg in args):
            return _SYMBOLIC
        if name in _FACTORIAL_LIKE or name == "binomial":
            n = args[0]
            bound = float(abs(n[1])) if n[0] == "exact" and isinstance(n[1], int) else None
            if bound is None:
                bound = 10.0 ** min(_log10(n), 400.0)
            digits = bound * 0.302 if name == "binomial" else _factorial_digits(bound)
            if digits > self.limits.max_digits:
                raise self._too_big(digits, f"{name}() of that size")
            return ("mag", digits + 1.0)
        if name in ("exp",):
            return _SYMBOLIC  # stays exp(n) symbolically; numeric values are floats
        return ("mag", max((_log10(arg) for arg in args), default=1.0) + 1.0)


def _factorial_digits(n: float) -> float:
    """Digits of ``n!`` (Stirling for huge ``n``)."""
    if n < 2:
        return 1.0
    if n < 1e15:
        return math.lgamma(n + 1.0) / math.log(10.0) + 1.0
    return n * (math.log10(n) - math.log10(math.e))


def _leaf_estimate(ir: IR) -> _Estimate:
    kind = ir[0]
    if kind == "int":
        return ("exact", int(ir[1]))
    if kind == "float":
        return ("mag", math.log10(abs(float(ir[1])) + 1.0))
    return ("mag", 1.0) if kind == "const" else _SYMBOLIC


def _log10(estimate: _Estimate) -> float:
    kind, value = estimate
    if kind == "exact" and isinstance(value, int):
        if value == 0:
            return 0.0
        if value.bit_length() < 1000:
            return math.log10(abs(value))
        return value.bit_length() * 0.30103
    return float(value or 0.0)


def _human(digits: float) -> str:
    if not math.isfinite(digits) or digits > 1e15:
        return "an astronomically large number of"
    return f"{int(digits):,}"


def to_text(ir: IR) -> str:
    """Render the IR back as normalised text (used in steps), fully parenthesised."""
    kind = ir[0]
    if kind in ("int", "float", "sym", "const"):
        return str(ir[1])
    if kind == "eq":
        return f"{to_text(ir[1])} = {to_text(ir[2])}"
    if kind in ("neg", "pos"):
        return ("-" if kind == "neg" else "+") + _wrap(ir[1])
    if kind == "call":
        return f"{ir[1]}({', '.join(to_text(arg) for arg in ir[2])})"
    return f"{_wrap(ir[1])} {_SYMBOLS[kind]} {_wrap(ir[2])}"


def _wrap(ir: IR) -> str:
    text = to_text(ir)
    return text if ir[0] in ("int", "float", "sym", "const", "call") else f"({text})"
