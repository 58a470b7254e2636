"""Sandbox and math parts of ``scripts/bench_builtins.py`` (also runnable on their own).

Run: ``python scripts/_bench_compute.py [--runs 30]``. Prints medians and ratios against
baselines measured in the same run; no assertions.

* sandbox: ``LocalSandbox.run("print(1)")`` round trip (target under 150 ms) with the
  bubblewrap launcher and with the namespaces launcher, against a bare
  ``subprocess.run([python, "-c", "print(1)"])`` of the interpreter the sandbox runs;
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

from tools.builtin.code_executor import LocalSandbox, default_interpreters  # noqa: E402
from tools.builtin.code_executor.local import Launcher  # noqa: E402
from tools.builtin.math import MathSolverTool, SympyWorkerPool  # noqa: E402
from tools.errors import ToolError  # noqa: E402


def _median_ms(func: Callable[[], object], runs: int) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        func()
        samples.append((time.perf_counter() - start) * 1000.0)
    return statistics.median(samples)


def run_sandbox(runs: int = 30) -> dict[str, Any]:
    """Median ms of a sandboxed ``print(1)`` per launcher and of a bare subprocess, and ratios.

    The three are measured round-robin (one sample of each in turn), so that the load of a
    shared machine weighs on all of them alike.
    """
    python = default_interpreters()["python"][0]
    calls: dict[str, Callable[[], object]] = {
        "bare": lambda: subprocess.run([python, "-c", "print(1)"], capture_output=True, check=True, timeout=30)
    }
    figures: dict[str, Any] = {}
    boxes = []
    launchers: tuple[Launcher, ...] = ("bwrap", "namespaces")
    for launcher in launchers:
        box = LocalSandbox(launcher=launcher)
        boxes.append(box)
        try:
            figures[f"{launcher}_isolation"] = box.run("print(1)").isolation  # probe, warm the cache
            calls[launcher] = lambda box=box: box.run("print(1)")  # type: ignore[misc]
        except ToolError as exc:
            figures[f"{launcher}_isolation"] = exc.message
    samples: dict[str, list[float]] = {name: [] for name in calls}
    try:
        for _ in range(runs):
            for name, call in calls.items():
                start = time.perf_counter()
                call()
                samples[name].append((time.perf_counter() - start) * 1000.0)
    finally:
        for box in boxes:
            box.close()
    bare = statistics.median(samples["bare"])
    figures["bare_subprocess_ms"] = round(bare, 2)
    for launcher in ("bwrap", "namespaces"):
        median = statistics.median(samples[launcher]) if launcher in samples else None
        figures[f"{launcher}_print1_ms"] = None if median is None else round(median, 2)
        figures[f"{launcher}_ratio"] = None if median is None else round(median / bare, 2)
    return figures


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
    print(f"sandbox print(1), bare subprocess: {sandbox['bare_subprocess_ms']:.1f} ms median")
    for launcher in ("bwrap", "namespaces"):
        median = sandbox[f"{launcher}_print1_ms"]
        if median is None:
            print(f"sandbox print(1), {launcher}: not available ({sandbox[f'{launcher}_isolation']})")
            continue
        print(
            f"sandbox print(1), {launcher}: {median:.1f} ms median (x{sandbox[f'{launcher}_ratio']} of bare; "
            f"target < 150 ms) isolation={sandbox[f'{launcher}_isolation']}"
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
