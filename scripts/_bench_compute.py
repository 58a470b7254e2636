"""Sandbox and math parts of ``scripts/bench_builtins.py`` (also runnable on their own).

Run: ``python scripts/_bench_compute.py [--runs 30]``. Prints medians and ratios against
baselines measured in the same run; no assertions.

* sandbox: ``LocalSandbox.run("print(1)")`` round trip (target under 150 ms) against a bare
  ``subprocess.run([sys.executable, "-c", "print(1)"])``;
* math: ``MathSolverTool`` evaluate ``12*(3+4)`` and solve ``x**2 = 4`` p50 with a warm
  worker, against the same sympy calls made directly in this process; plus the cold start
  of a worker (sympy import).

``run_sandbox(runs)``, ``run_math(runs)`` and ``run(runs)`` return the figures as dicts
for the glue script.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tools.builtin.code_executor import LocalSandbox  # noqa: E402
from tools.builtin.math import MathSolverTool, SympyWorkerPool  # noqa: E402


def _median_ms(func: Callable[[], object], runs: int) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        func()
        samples.append((time.perf_counter() - start) * 1000.0)
    return statistics.median(samples)


def run_sandbox(runs: int = 30) -> dict[str, Any]:
    """Median ms of a sandboxed ``print(1)`` and of a bare subprocess, and their ratio."""
    sandbox = LocalSandbox()
    try:
        sandbox.run("print(1)")  # warm the page cache
        bare = _median_ms(
            lambda: subprocess.run([sys.executable, "-c", "print(1)"], capture_output=True, check=True, timeout=30),
            runs,
        )
        boxed = _median_ms(lambda: sandbox.run("print(1)"), runs)
        isolation = sandbox.run("print(1)").isolation
    finally:
        sandbox.close()
    return {
        "bare_subprocess_ms": round(bare, 2),
        "sandbox_print1_ms": round(boxed, 2),
        "ratio": round(boxed / bare, 2),
        "isolation": isolation,
    }


def run_math(runs: int = 50) -> dict[str, Any]:
    """p50 ms of evaluate/solve through the tool (warm worker) vs direct sympy calls."""
    import sympy

    x = sympy.Symbol("x")
    direct_eval = _median_ms(lambda: sympy.Integer(12) * (sympy.Integer(3) + 4), runs)
    direct_solve = _median_ms(lambda: sympy.solve(sympy.Eq(x**2, 4), x), runs)
    pool = SympyWorkerPool(max_workers=1)
    tool = MathSolverTool(engine=pool)
    try:
        start = time.perf_counter()
        pool.warm_up()
        cold = (time.perf_counter() - start) * 1000.0
        evaluate = _median_ms(lambda: tool.execute(expression="12*(3+4)"), runs)
        solve = _median_ms(lambda: tool.execute(operation="solve", expression="x**2 = 4"), runs)
        hostile = _median_ms(lambda: tool.execute(expression="9**9**9**9"), runs)
    finally:
        pool.close()
    return {
        "worker_cold_start_ms": round(cold, 1),
        "evaluate_p50_ms": round(evaluate, 3),
        "evaluate_direct_sympy_ms": round(direct_eval, 3),
        "evaluate_ratio": round(evaluate / direct_eval, 1),
        "solve_p50_ms": round(solve, 3),
        "solve_direct_sympy_ms": round(direct_solve, 3),
        "solve_ratio": round(solve / direct_solve, 2),
        "reject_9_9_9_9_p50_ms": round(hostile, 3),
    }


def run(runs: int = 30) -> dict[str, dict[str, Any]]:
    """Both parts; prints a short report and returns the figures."""
    sandbox = run_sandbox(runs)
    print(
        f"sandbox print(1): {sandbox['sandbox_print1_ms']:.1f} ms median "
        f"(bare subprocess {sandbox['bare_subprocess_ms']:.1f} ms, x{sandbox['ratio']}; "
        f"target < 150 ms) isolation={sandbox['isolation']}"
    )
    math = run_math(max(runs, 50))
    print(
        f"math evaluate 12*(3+4): p50 {math['evaluate_p50_ms']:.2f} ms "
        f"(direct sympy {math['evaluate_direct_sympy_ms']:.3f} ms, x{math['evaluate_ratio']})"
    )
    print(
        f"math solve x**2 = 4:    p50 {math['solve_p50_ms']:.2f} ms "
        f"(direct sympy {math['solve_direct_sympy_ms']:.2f} ms, x{math['solve_ratio']})"
    )
    print(
        f"math worker cold start: {math['worker_cold_start_ms']:.0f} ms; "
        f"rejecting 9**9**9**9: p50 {math['reject_9_9_9_9_p50_ms']:.3f} ms"
    )
    return {"sandbox": sandbox, "math": math}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    run(parser.parse_args().runs)


if __name__ == "__main__":
    main()
