"""Plain arithmetic, exactly and in process: no worker for ``12*(3+4)``.

An ``evaluate`` whose expression is numbers, ``+ - * / ** %``, parentheses and signs is
computed here with :class:`fractions.Fraction` (decimal literals are taken as the exact
decimals they spell, so ``0.1 + 0.2`` is exactly ``0.3``), within bounds checked *before*
each operation: the size of every operand and result (``max_digits``) and of every
exponent (``max_exponent``). Anything else (a variable, a function, a constant, a
non-integer power, a division or remainder by zero, ``0 ** -1``, a number past the
bounds) is not answered here: the tool then sends it to its sympy worker, which has its
own limits and a wall-clock timeout, so the host never computes anything unbounded.

The answer has the worker's shape (``result``, ``latex``, ``numeric``, ``decimal``,
``steps``): integers as integers, other values as exact decimals when they terminate and
an input had a decimal point (``0.3``), else as fractions (``7/3``); ``decimal`` to 15
significant digits in the same notation as the worker's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from tools.builtin.math.parser import IR


@dataclass(frozen=True, slots=True)
class ArithmeticLimits:
    """Bounds of in-process arithmetic; past them the worker computes (or refuses).

    Attributes:
        max_digits: Most decimal digits of any operand or result (numerator or denominator).
        max_exponent: Largest exponent magnitude of a power (except of 0, 1 and -1).
        max_decimal_chars: Longest exact decimal shown; longer values are shown as fractions.
    """

    max_digits: int = 1_000
    max_exponent: int = 10_000
    max_decimal_chars: int = 40


class _NotPlain(Exception):
    """Not plain arithmetic within the limits: the worker decides."""


_LOG10_2 = math.log10(2)


def _log10(value: int) -> float:
    """log10(|value|), without converting a huge int to float (0 for 0)."""
    value = abs(value)
    if value == 0:
        return 0.0
    if value.bit_length() < 1000:
        return math.log10(value)
    return value.bit_length() * _LOG10_2


def _size(value: Fraction) -> float:
    """Digits of the larger of numerator and denominator (roughly: log10 of it)."""
    return max(_log10(value.numerator), _log10(value.denominator))


class _Evaluator:
    def __init__(self, limits: ArithmeticLimits) -> None:
        self.limits = limits
        self.decimal_input = False

    def value(self, ir: IR) -> Fraction:
        kind = ir[0]
        if kind == "int":
            text = str(ir[1])
            if len(text.lstrip("-")) > self.limits.max_digits:
                raise _NotPlain
            return Fraction(int(text))
        if kind == "float":
            self.decimal_input = True
            return self._decimal(str(ir[1]))
        if kind in ("neg", "pos"):
            inner = self.value(ir[1])
            return -inner if kind == "neg" else inner
        if kind in ("add", "sub", "mul", "div", "mod", "pow"):
            return self._binary(kind, self.value(ir[1]), self.value(ir[2]))
        raise _NotPlain  # a variable, a constant, a function, an equation

    def _decimal(self, text: str) -> Fraction:
        mantissa, _, exponent = text.lower().partition("e")
        if not all(part.lstrip("+-").isdigit() for part in mantissa.split(".") if part) or (
            exponent and not exponent.lstrip("+-").isdigit()
        ):
            raise _NotPlain  # inf, nan: not a decimal
        shift = abs(int(exponent)) if exponent else 0
        if len(mantissa) + shift > self.limits.max_digits:
            raise _NotPlain
        return Fraction(text)

    def _binary(self, kind: str, left: Fraction, right: Fraction) -> Fraction:
        limit = self.limits.max_digits
        if kind == "pow":
            return self._power(left, right)
        if kind in ("div", "mod") and right == 0:
            raise _NotPlain  # complex infinity, nan or an error: the worker's to say
        if _size(left) + _size(right) + 1 > limit:  # what any of these can grow to
            raise _NotPlain
        if kind == "add":
            return left + right
        if kind == "sub":
            return left - right
        if kind == "mul":
            return left * right
        if kind == "div":
            return left / right
        return left % right  # floored, like Python and sympy's Mod

    def _power(self, base: Fraction, exponent: Fraction) -> Fraction:
        if exponent.denominator != 1:
            raise _NotPlain  # a root: irrational or complex, the worker's
        power = exponent.numerator
        if base == 0:
            if power < 0:
                raise _NotPlain  # 0 ** -1: complex infinity
            return Fraction(1 if power == 0 else 0)
        if base in (1, -1):
            return base if power % 2 else Fraction(1)
        if abs(power) > self.limits.max_exponent or abs(power) * _size(base) > self.limits.max_digits:
            raise _NotPlain
        return base**power


def evaluate_plain(ir: IR, limits: ArithmeticLimits | None = None) -> dict[str, Any] | None:
    """The ``evaluate`` answer for plain arithmetic, or None when the worker must decide.

    Args:
        ir: A parsed, size-checked expression (:class:`~tools.builtin.math.parser.MathParser`).
        limits: The bounds (default :class:`ArithmeticLimits`).
    """
    limits = limits or ArithmeticLimits()
    evaluator = _Evaluator(limits)
    try:
        value = evaluator.value(ir)
    except (_NotPlain, RecursionError, ValueError, ZeroDivisionError, OverflowError):
        return None
    text = exact_text(value, decimal=evaluator.decimal_input, max_chars=limits.max_decimal_chars)
    decimal = decimal_text(value)
    try:
        number: float | None = float(value)
    except OverflowError:
        number = None
    return {
        "result": text,
        "latex": _latex(value, text),
        "numeric": number,
        "decimal": decimal,
        "steps": [f"Evaluated exactly: {text}", f"Decimal value: {decimal}"],
    }


def exact_text(value: Fraction, *, decimal: bool, max_chars: int = 40) -> str:
    """``value`` written exactly: an integer, a terminating decimal (when ``decimal`` and it
    fits in ``max_chars``), else ``p/q``."""
    if value.denominator == 1:
        return str(value.numerator)
    if decimal:
        terminating = _terminating(value, max_chars)
        if terminating is not None:
            return terminating
    return f"{value.numerator}/{value.denominator}"


def _terminating(value: Fraction, max_chars: int) -> str | None:
    denominator = value.denominator
    twos = fives = 0
    while denominator % 2 == 0:
        denominator //= 2
        twos += 1
    while denominator % 5 == 0:
        denominator //= 5
        fives += 1
    places = max(twos, fives)
    if denominator != 1 or places + 3 > max_chars:
        return None
    scaled = abs(value.numerator) * 10**places // value.denominator
    digits = str(scaled).rjust(places + 1, "0")
    text = f"{digits[:-places]}.{digits[-places:]}"
    text = ("-" if value < 0 else "") + text
    return text if len(text) <= max_chars else None


def decimal_text(value: Fraction, digits: int = 15) -> str:
    """``value`` to ``digits`` significant digits in the worker's notation: ``84.0000000000000``,
    ``0.00100000000000000``, ``1.00000000000000e+20``, ``1.00000000000000e-5``, ``0``."""
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    magnitude = abs(value)
    exponent = math.floor(_log10(magnitude.numerator) - _log10(magnitude.denominator))
    while True:  # the estimate may be one off either way; rounding may carry into a new digit
        scaled = round(magnitude * Fraction(10) ** (digits - 1 - exponent))  # half to even
        if scaled < 10 ** (digits - 1):
            exponent -= 1
        elif scaled >= 10**digits:
            exponent += 1
        else:
            break
    text = str(scaled)
    if -5 < exponent < digits:
        if exponent >= 0:
            return f"{sign}{text[: exponent + 1]}.{text[exponent + 1 :]}"
        return f"{sign}0.{'0' * (-exponent - 1)}{text}"
    return f"{sign}{text[0]}.{text[1:]}e{'+' if exponent > 0 else '-'}{abs(exponent)}"


def _latex(value: Fraction, text: str) -> str:
    if value.denominator == 1 or "/" not in text:
        return text
    fraction = rf"\frac{{{abs(value.numerator)}}}{{{value.denominator}}}"
    return f"- {fraction}" if value < 0 else fraction
