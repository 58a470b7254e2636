"""Workspace tools figures, measured in one run: ``patch`` on a 5 MB file, ``grep`` engines.

Run: ``python scripts/bench_workspace.py [--runs N]``. Prints medians and ratios against
baselines measured in the same run; no assertions.

(a) ``patch`` through the registry on a 5 MB file (100,000 lines): hunks at their stated
    lines, hunks stated 50 lines off, and a hostile file of identical lines. Baselines:
    the I/O floor (read, split, join and write the same file in Python) and the former
    algorithm (a slice comparison at every position, the list spliced per hunk), timed
    on a 500 kB file because it is quadratic.
(b) ``grep`` over a generated tree (400 files, 2.4 MB): the RE2 worker and ripgrep (when
    installed) against Python's ``re`` over the same files in-process, and a bare
    ``python -I -S -c pass`` (the worker's process start).
(c) ``grep`` with ``(a+)+$`` on a 1 MB line (exponential for a backtracking engine:
    ``re`` is not run) and the time to stop ``(.*){1000}$`` at a 1 s limit.
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tools import LocalToolRegistry
from tools.builtin.workspace import GrepTool, PatchTool, Workspace, WorkspaceLimits

LINES = 100_000


def median_ms(work: Callable[[], Any], runs: int) -> float:
    """The median wall time of ``work`` in milliseconds."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def _big_lines(count: int) -> list[str]:
    return [f"line {i:07d} " + "x" * 36 for i in range(count)]


def _diff(name: str, lines: list[str], targets: list[int], off: int) -> str:
    diff = f"--- a/{name}\n+++ b/{name}\n"
    for t in targets:
        diff += (
            f"@@ -{t + 1 + off},3 +{t + 1 + off},3 @@\n {lines[t - 1]}\n-{lines[t]}\n+{lines[t]}!\n {lines[t + 1]}\n"
        )
    return diff


def _former_apply(text: str, hunks: list[tuple[int, list[str], list[str]]]) -> str:
    """The algorithm ``patch`` used before: every position compared, the list spliced per hunk."""
    lines, offset = text.splitlines(), 0
    for start, old, new in hunks:
        want = start - 1 + offset
        found = [at for at in range(len(lines) - len(old) + 1) if lines[at : at + len(old)] == old]
        at = min(found, key=lambda a: abs(a - want))
        lines[at : at + len(old)] = new
        offset += len(new) - len(old)
    return "\n".join(lines) + "\n"


def bench_patch(root: Path, runs: int) -> None:
    lines = _big_lines(LINES)
    text = "\n".join(lines) + "\n"
    registry = LocalToolRegistry()
    registry.register(PatchTool(Workspace(root)))
    targets = list(range(50, LINES - 50, LINES // 20))
    cases = {
        "20 hunks at their lines": _diff("big.txt", lines, targets, 0),
        "20 hunks stated 50 lines off": _diff("big.txt", lines, targets, 50),
    }

    def floor() -> None:
        data = (root / "big.txt").read_text()
        (root / "big.txt").write_text("\n".join(data.splitlines()) + "\n")

    (root / "big.txt").write_text(text)
    base = median_ms(floor, runs)
    print(f"(a) patch, 5 MB file ({len(text) / 1e6:.1f} MB, {LINES:,} lines); I/O floor {base:.1f} ms")
    for label, diff in cases.items():

        def once(diff: str = diff) -> None:
            (root / "big.txt").write_text(text)
            result = registry.call_tool("patch", diff=diff)
            if result.status != "success":
                raise SystemExit(f"patch failed: {result.error}")

        took = median_ms(once, runs) - median_ms(lambda: (root / "big.txt").write_text(text), runs)
        print(f"    {label:<34} {took:8.1f} ms  ({took / base:.1f}x the I/O floor)")
    same = "same line\n" * LINES  # every line equal: the worst case for a position-by-position search
    hostile = "--- a/same.txt\n+++ b/same.txt\n@@ -99000,3 +99000,3 @@\n same line\n-same line\n+changed\n same line\n"

    def worst() -> None:
        (root / "same.txt").write_text(same)
        result = registry.call_tool("patch", diff=hostile)
        if result.status != "success":
            raise SystemExit(f"patch failed: {result.error}")

    print(f"    {'identical lines, hunk near the end':<34} {median_ms(worst, runs):8.1f} ms")
    small = _big_lines(10_000)
    hunks = [(t + 1, small[t - 1 : t + 2], [small[t - 1], small[t] + "!", small[t + 1]]) for t in range(50, 9950, 500)]
    small_text = "\n".join(small) + "\n"
    former = median_ms(lambda: _former_apply(small_text, hunks), max(3, runs // 3))
    (root / "small.txt").write_text(small_text)
    diff = _diff("small.txt", small, [h[0] - 1 for h in hunks], 0)

    def now() -> None:
        (root / "small.txt").write_text(small_text)
        result = registry.call_tool("patch", diff=diff)
        if result.status != "success":
            raise SystemExit(f"patch failed: {result.error}")

    current = median_ms(now, runs)
    print(
        f"    500 kB file, 20 hunks: former algorithm {former:.1f} ms, now {current:.1f} ms ({former / current:.1f}x)"
    )
    same_small = ["same line"] * 20_000
    block = ["same line"] * 50
    hunks = [(5_000, block, [*block[:-1], "changed"]) for _ in range(20)]
    former = median_ms(lambda: _former_apply("\n".join(same_small) + "\n", hunks), max(3, runs // 3))
    diff = "--- a/same.txt\n+++ b/same.txt\n" + "".join(
        f"@@ -{start},50 +{start},50 @@\n" + "".join(f" {x}\n" for x in block[:-1]) + "-same line\n+changed\n"
        for start, _, _ in hunks
    )

    def hostile_now() -> None:
        (root / "same.txt").write_text("\n".join(same_small) + "\n")
        result = registry.call_tool("patch", diff=diff)
        if result.status != "success":
            raise SystemExit(f"patch failed: {result.error}")

    current = median_ms(hostile_now, runs)
    print(
        f"    20,000 identical lines, 20 hunks of 50: former algorithm {former:.1f} ms, now {current:.1f} ms "
        f"({former / current:.0f}x)"
    )


def _tree(root: Path) -> None:
    for i in range(400):
        folder = root / "src" / f"pkg{i % 20}"
        folder.mkdir(parents=True, exist_ok=True)
        body = "".join(f"def func_{i}_{j}(a, b):\n    return a + b  # line {j}\n" for j in range(100))
        (folder / f"mod{i}.py").write_text(body + ("TOTAL_MARKER = 1\n" if i % 50 == 0 else ""))


def _python_re(root: Path, pattern: str) -> int:
    compiled, hits = re.compile(pattern), 0
    for path in sorted(root.rglob("*.py")):
        for line in path.read_text().splitlines():
            hits += compiled.search(line) is not None
    return hits


def _grep(registry: LocalToolRegistry, **arguments: str) -> Callable[[], Any]:
    return lambda: registry.call_tool("grep", **arguments)


def bench_grep(root: Path, runs: int) -> None:
    _tree(root)
    rg = shutil.which("rg", path="/usr/local/bin:/usr/bin:/bin")
    engines: dict[str, LocalToolRegistry] = {}
    for name, choice in (("re2 worker", False), ("ripgrep", rg)):
        if choice is None:
            continue
        registry = LocalToolRegistry()
        registry.register(GrepTool(Workspace(root, limits=WorkspaceLimits(grep_timeout_s=30)), ripgrep=choice))
        engines[name] = registry
    start = median_ms(lambda: subprocess.run([sys.executable, "-I", "-S", "-c", "pass"], check=True), runs)
    base = median_ms(lambda: _python_re(root, r"TOTAL_\w+"), runs)
    print(f"(b) grep 'TOTAL_\\w+' over 400 files (2.4 MB): Python re in-process {base:.1f} ms, ", end="")
    print(f"process start {start:.1f} ms")
    for name, registry in engines.items():
        took = median_ms(_grep(registry, pattern=r"TOTAL_\w+"), runs)
        print(f"    {name:<12} {took:8.1f} ms  ({took / base:.2f}x Python re)")
    if rg is None:
        print("    ripgrep: not installed (apt-get install ripgrep)")
    (root / "long.txt").write_text("a" * 1_000_000 + "!\n")
    print("(c) '(a+)+$' on a 1 MB line (Python re: exponential, not run)")
    for name, registry in engines.items():
        took = median_ms(_grep(registry, pattern="(a+)+$", path="long.txt"), runs)
        print(f"    {name:<12} {took:8.1f} ms")
    (root / "slow.txt").write_text("ab" * 1_000_000 + "\n")
    registry = LocalToolRegistry()
    registry.register(GrepTool(Workspace(root, limits=WorkspaceLimits(grep_timeout_s=1)), ripgrep=False))
    took = median_ms(lambda: registry.call_tool("grep", pattern="(.*){1000}$", path="slow.txt"), max(3, runs // 3))
    print(f"    '(.*){{1000}}$' on a 2 MB line, 1 s limit: stopped after {took:.0f} ms (RE2 alone: minutes)")


def main() -> None:
    """Run both parts."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=9, help="repetitions per figure (median)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as patch_dir, tempfile.TemporaryDirectory() as grep_dir:
        bench_patch(Path(patch_dir), args.runs)
        bench_grep(Path(grep_dir), args.runs)


if __name__ == "__main__":
    main()
