"""Sandbox and math parts of ``scripts/bench_builtins.py`` (also runnable on their own).

Run: ``python scripts/_bench_compute.py [--runs 30]``. Prints medians and ratios against
baselines measured in the same run; no assertions.

* sandbox: ``LocalSandbox.run("print(1)")`` round trip (target under 150 ms) with the
  bubblewrap launcher and with the namespaces launcher, against a bare
  ``subprocess.run([python, "-c", "print(1)"])`` of the interpreter the sandbox runs;
* math: ``MathSolverTool`` evaluate ``12*(3+4)`` in process (plain arithmetic, no worker)
  and through a warm worker, and solve ``x**2 = 4`` p50 with a warm worker, against the
  same sympy calls made directly in this process; the cold start of a worker (sympy
  import: what an arithmetic question used to wait for); and the main job
  (``python -m orchestrator "What is 12*(3+4)? Remember that my dentist is Dr. Lee."``):
  its tool time, target under 50 ms.

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
from tools.builtin.code_executor.local import LauncherChoice  # noqa: E402
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
    launchers: tuple[LauncherChoice, ...] = ("bwrap", "namespaces")
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
    """p50 ms of evaluate (in process and through a warm worker) and solve vs direct sympy calls."""
    import sympy

    x = sympy.Symbol("x")
    direct_eval = _median_ms(lambda: sympy.Integer(12) * (sympy.Integer(3) + 4), runs)
    direct_solve = _median_ms(lambda: sympy.solve(sympy.Eq(x**2, 4), x), runs)
    pool = SympyWorkerPool(max_workers=1)
    in_process = MathSolverTool(engine=pool)
    via_worker = MathSolverTool(engine=pool, arithmetic=None)
    try:
        plain = _median_ms(lambda: in_process.execute(expression="12*(3+4)"), runs)
        started_by_arithmetic = bool(pool._idle or pool._busy)
        start = time.perf_counter()
        via_worker.execute(expression="12*(3+4)")  # the first call starts the worker
        cold = (time.perf_counter() - start) * 1000.0
        evaluate = _median_ms(lambda: via_worker.execute(expression="12*(3+4)"), runs)
        solve = _median_ms(lambda: via_worker.execute(operation="solve", expression="x**2 = 4"), runs)
        hostile = _median_ms(lambda: via_worker.execute(expression="9**9**9**9"), runs)
    finally:
        pool.close()
    return {
        "worker_cold_start_ms": round(cold, 1),
        "evaluate_in_process_p50_ms": round(plain, 3),
        "evaluate_in_process_started_worker": started_by_arithmetic,
        "evaluate_p50_ms": round(evaluate, 3),
        "evaluate_direct_sympy_ms": round(direct_eval, 3),
        "evaluate_ratio": round(evaluate / direct_eval, 1),
        "solve_p50_ms": round(solve, 3),
        "solve_direct_sympy_ms": round(direct_solve, 3),
        "solve_ratio": round(solve / direct_solve, 2),
        "reject_9_9_9_9_p50_ms": round(hostile, 3),
        **main_job(3),
    }


MAIN_JOB = "What is 12*(3+4)? Remember that my dentist is Dr. Lee."


def main_job(runs: int) -> dict[str, Any]:
    """The main job end to end in fresh processes: its tool time and the math call's (medians)."""
    import json
    import os
    import tempfile

    tools: list[float] = []
    maths: list[float] = []
    walls: list[float] = []
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as data:
            start = time.perf_counter()
            out = subprocess.run(
                [sys.executable, "-m", "orchestrator", "--json", "--data-dir", data, MAIN_JOB],
                capture_output=True,
                text=True,
                check=True,
                timeout=300,
                env=env,
                cwd=data,
            )
            walls.append((time.perf_counter() - start) * 1000.0)
        run = json.loads(out.stdout)
        tools.append(run["timings"]["tools_ms"])
        maths.extend(r["duration_ms"] for r in run["tool_results"] if r["name"] == "math_solver")
    return {
        "main_job_tools_ms": round(statistics.median(tools), 2),
        "main_job_math_ms": round(statistics.median(maths), 2),
        "main_job_wall_ms": round(statistics.median(walls), 1),
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
        f"math evaluate 12*(3+4) in process: p50 {math['evaluate_in_process_p50_ms']:.3f} ms "
        f"(worker started: {math['evaluate_in_process_started_worker']}); through a warm worker: "
        f"p50 {math['evaluate_p50_ms']:.2f} ms (direct sympy {math['evaluate_direct_sympy_ms']:.3f} ms, "
        f"x{math['evaluate_ratio']}); through a cold worker (what it used to wait for): "
        f"{math['worker_cold_start_ms']:.0f} ms"
    )
    print(
        f"main job {MAIN_JOB!r}: tool time {math['main_job_tools_ms']:.1f} ms (target < 50 ms; "
        f"math_solver {math['main_job_math_ms']:.2f} ms), {math['main_job_wall_ms']:.0f} ms end to end"
    )
    print(
        f"math solve x**2 = 4:    p50 {math['solve_p50_ms']:.2f} ms "
        f"(direct sympy {math['solve_direct_sympy_ms']:.2f} ms, x{math['solve_ratio']})"
    )
    print(f"rejecting 9**9**9**9: p50 {math['reject_9_9_9_9_p50_ms']:.3f} ms")
    return {"sandbox": sandbox, "math": math}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    run(parser.parse_args().runs)


if __name__ == "__main__":
    main()
