"""The sympy worker process: builds sympy objects from the checked IR and computes.

Run as ``python -I _worker.py CONFIG_JSON`` by :class:`~tools.builtin.math.engine.SympyWorkerPool`,
never imported by the parent (stdlib and sympy only, so it doesn't depend on ``sys.path``).
It limits its own address space first, then speaks JSON lines: one request per line on
stdin, one answer per line on the original stdout (``sys.stdout`` is pointed at stderr so
stray prints can't corrupt the protocol). The parent enforces the wall-clock limit by
killing this process.
"""

from __future__ import annotations

import json
import math
import os
import resource
import sys
from typing import Any


class Engine:
    """IR -> sympy, and the five operations. ``sympy`` is imported once, at start-up."""

    def __init__(self, max_chars: int) -> None:
        import sympy

        self.sp = sympy
        self.max_chars = max_chars
        self.constants = {"pi": sympy.pi, "e": sympy.E, "E": sympy.E, "I": sympy.I, "oo": sympy.oo}
        f = sympy
        self.functions: dict[str, Any] = {
            "sin": f.sin, "cos": f.cos, "tan": f.tan, "cot": f.cot, "sec": f.sec, "csc": f.csc,
            "asin": f.asin, "acos": f.acos, "atan": f.atan, "acot": f.acot, "atan2": f.atan2,
            "sinh": f.sinh, "cosh": f.cosh, "tanh": f.tanh, "asinh": f.asinh,
            "acosh": f.acosh, "atanh": f.atanh, "exp": f.exp, "log": f.log, "ln": f.log,
            "sqrt": f.sqrt, "cbrt": f.cbrt, "root": f.root, "abs": f.Abs,
            "factorial": f.factorial, "gamma": f.gamma, "binomial": f.binomial,
            "floor": f.floor, "ceiling": f.ceiling, "ceil": f.ceiling, "sign": f.sign,
            "re": f.re, "im": f.im, "conjugate": f.conjugate, "arg": f.arg,
            "min": f.Min, "max": f.Max, "Min": f.Min, "Max": f.Max, "gcd": f.gcd, "lcm": f.lcm,
        }  # fmt: skip

    # -- building -----------------------------------------------------------------

    def build(self, ir: list[Any]) -> Any:
        sp, kind = self.sp, ir[0]
        leaves = {
            "int": lambda: sp.Integer(int(ir[1])),
            "float": lambda: sp.Float(ir[1]),
            "sym": lambda: sp.Symbol(ir[1]),
            "const": lambda: self.constants[ir[1]],
            "neg": lambda: -self.build(ir[1]),
            "pos": lambda: self.build(ir[1]),
            "call": lambda: self.functions[ir[1]](*(self.build(arg) for arg in ir[2])),
        }
        if kind in leaves:
            return leaves[kind]()
        a, b = self.build(ir[1]), self.build(ir[2])
        ops = {
            "eq": lambda: sp.Eq(a, b),
            "add": lambda: a + b,
            "sub": lambda: a - b,
            "mul": lambda: a * b,
            "div": lambda: a / b,
            "pow": lambda: a**b,
            "mod": lambda: sp.Mod(a, b),
        }
        return ops[kind]()

    # -- rendering ----------------------------------------------------------------

    def text(self, value: Any) -> str:
        out = str(value)
        if len(out) > self.max_chars:
            return out[: self.max_chars] + f"... [cut: {len(out)} characters in full]"
        return out

    def numeric(self, value: Any) -> tuple[float | None, str | None]:
        """A float (when real and finite) and a 15-digit decimal text for a number."""
        if not getattr(value, "is_number", False):
            return None, None
        approx = value.evalf(15)
        number: float | None = None
        if approx.is_real:
            try:
                number = float(approx)
            except (TypeError, ValueError, OverflowError):
                number = None
            if number is not None and not math.isfinite(number):
                number = None
        return number, self.text(approx)

    def latex(self, value: Any) -> str | None:
        out = str(self.sp.latex(value))
        return out if len(out) <= self.max_chars else None

    # -- operations ---------------------------------------------------------------

    def variables(self, exprs: list[Any], names: list[str], *, many: bool) -> list[Any]:
        if names:
            return [self.sp.Symbol(name) for name in names]
        free = sorted(set().union(*(e.free_symbols for e in exprs)), key=str)
        if len(free) == 1 or (many and free):
            return free
        if not free:
            raise MathProblem("The expression has no variable; pass 'variable' explicitly.")
        names_text = ", ".join(str(s) for s in free)
        raise MathProblem(f"Several variables ({names_text}); say which one in 'variable'.")

    def evaluate(self, job: dict[str, Any]) -> dict[str, Any]:
        expr = self.build(job["exprs"][0])
        steps = [f"Evaluated exactly: {self.text(expr)}"]
        number, decimal = self.numeric(expr)
        if decimal is not None:
            steps.append(f"Decimal value: {decimal}")
        note = "Division by zero (complex infinity)." if expr is self.sp.zoo else None
        return self._answer(expr, steps, number=number, decimal=decimal, note=note)

    def simplify(self, job: dict[str, Any]) -> dict[str, Any]:
        sp = self.sp
        expr = self.build(job["exprs"][0])
        steps: list[str] = []
        for label, func in (("Expanded", sp.expand), ("Factored", sp.factor)):
            candidate = func(expr) if job.get("show_steps") else expr
            if candidate != expr:
                steps.append(f"{label}: {self.text(candidate)}")
        result = sp.simplify(expr)
        steps.append(f"Simplified: {self.text(result)}")
        number, decimal = self.numeric(result)
        return self._answer(result, steps, number=number, decimal=decimal)

    def solve(self, job: dict[str, Any]) -> dict[str, Any]:
        sp = self.sp
        eqs = [self.build(ir) for ir in job["exprs"]]
        if any(eq is sp.false for eq in eqs):
            return self._answer(sp.EmptySet, ["The equation is never true."], solutions=[])
        eqs = [eq for eq in eqs if eq is not sp.true]
        if not eqs:
            steps = ["Both sides are identical: every value is a solution."]
            return self._answer(sp.S.Reals, steps, solutions=[])
        zeroed = [eq.lhs - eq.rhs if isinstance(eq, sp.Eq) else eq for eq in eqs]
        symbols = self.variables(zeroed, job["variables"], many=len(eqs) > 1)
        steps = [f"Moved everything to one side: {self.text(z)} = 0" for z in zeroed]
        if len(zeroed) == 1 and job.get("show_steps"):
            factored = sp.factor(zeroed[0])
            if factored != zeroed[0]:
                steps.append(f"Factored: {self.text(factored)} = 0")
        try:
            found = sp.solve(zeroed, symbols, dict=True)
        except NotImplementedError:
            raise MathProblem("sympy can't solve this equation in closed form.") from None
        solutions = [{str(k): self.text(v) for k, v in sol.items()} for sol in found]
        numeric = [{str(k): self.numeric(v)[0] for k, v in sol.items()} for sol in found]
        shown = " or ".join(", ".join(f"{k} = {v}" for k, v in sol.items()) for sol in solutions)
        result = shown or "no solution"
        steps.append(f"Solutions: {result}")
        return {
            "result": result,
            "latex": None,
            "solutions": solutions,
            "numeric_solutions": numeric,
            "variable": ", ".join(str(s) for s in symbols),
            "steps": steps,
        }

    def differentiate(self, job: dict[str, Any]) -> dict[str, Any]:
        sp = self.sp
        expr = self.build(job["exprs"][0])
        (var,) = self.variables([expr], job["variables"][:1], many=False)
        order = int(job.get("order") or 1)
        steps: list[str] = []
        if not job.get("show_steps"):
            pass
        elif isinstance(expr, sp.Add) and order == 1:
            for term in expr.args:
                steps.append(f"d/d{var} [{self.text(term)}] = {self.text(sp.diff(term, var))}")
            steps.append("Sum rule: add the derivatives of the terms.")
        elif isinstance(expr, sp.Mul) and order == 1:
            steps.append("Product rule: (f*g)' = f'*g + f*g'.")
        elif expr.is_Pow or isinstance(expr, sp.Function):
            steps.append("Chain rule: differentiate the outer function, times the inner derivative.")
        result = sp.simplify(sp.diff(expr, var, order))
        steps.append(f"Result: {self.text(result)}")
        return self._answer(result, steps, variable=str(var))

    def integrate(self, job: dict[str, Any]) -> dict[str, Any]:
        sp = self.sp
        expr = self.build(job["exprs"][0])
        (var,) = self.variables([expr], job["variables"][:1], many=False)
        steps: list[str] = []
        if isinstance(expr, sp.Add) and job.get("show_steps"):
            for term in expr.args:
                steps.append(f"∫ {self.text(term)} d{var} = {self.text(sp.integrate(term, var))}")
        antiderivative = sp.integrate(expr, var)
        note = None
        if antiderivative.has(sp.Integral):
            note = "sympy found no closed form; the result contains an unevaluated integral."
        if job.get("lower") is None:
            steps.append(f"Antiderivative: {self.text(antiderivative)} + C")
            return self._answer(
                antiderivative,
                steps,
                variable=str(var),
                note=note or ("Indefinite integral: add an arbitrary constant C."),
            )
        lower, upper = self.build(job["lower"]), self.build(job["upper"])
        steps.append(f"Antiderivative F({var}) = {self.text(antiderivative)}")
        result = sp.simplify(sp.integrate(expr, (var, lower, upper)))
        steps.append(f"F({self.text(upper)}) - F({self.text(lower)}) = {self.text(result)}")
        number, decimal = self.numeric(result)
        return self._answer(result, steps, variable=str(var), number=number, decimal=decimal, note=note)

    def _answer(self, value: Any, steps: list[str], **extra: Any) -> dict[str, Any]:
        answer: dict[str, Any] = {
            "result": self.text(value),
            "latex": self.latex(value),
            "steps": steps,
        }
        answer.update({k: v for k, v in extra.items() if v is not None or k == "number"})
        if "number" in answer:
            answer["numeric"] = answer.pop("number")
        return answer


class MathProblem(Exception):
    """A problem with the question (ambiguous variable, unsolvable), shown to the model."""


def handle(engine: Engine, job: dict[str, Any]) -> dict[str, Any]:
    operation = job["operation"]
    try:
        return {"ok": True, "answer": getattr(engine, operation)(job)}
    except MathProblem as exc:
        return {"ok": False, "kind": "math", "error": str(exc)}
    except MemoryError:
        return {"ok": False, "kind": "memory", "error": "The computation ran out of memory."}
    except RecursionError:
        return {"ok": False, "kind": "math", "error": "The expression is too deeply nested."}
    except Exception as exc:  # any sympy failure is an answer, the worker lives on
        text = str(exc)[:300]
        return {"ok": False, "kind": "math", "error": f"sympy failed: {type(exc).__name__}: {text}"}


def main() -> None:
    config: dict[str, Any] = json.loads(sys.argv[1])
    memory = int(config["memory_mb"]) * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if hasattr(sys, "set_int_max_str_digits"):
        sys.set_int_max_str_digits(max(int(config["max_digits"]) * 2, 4300))
    protocol = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    engine = Engine(int(config["max_chars"]))
    protocol.write('{"ready": true}\n')
    protocol.flush()
    for line in sys.stdin:
        job = json.loads(line)
        reply = handle(engine, job)
        reply["id"] = job.get("id")
        protocol.write(json.dumps(reply) + "\n")
        protocol.flush()


if __name__ == "__main__":
    main()
