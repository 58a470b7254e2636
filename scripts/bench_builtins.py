"""Builtin tools benchmark: knowledge store, sandbox round trip, math and web page loads, in one run.

Run: ``python scripts/bench_builtins.py [--docs N] [--runs N]``. Each figure is printed with
a baseline measured in the same run (raw SQLite FTS5, a bare ``subprocess.run``, in-process
sympy, ``requests.get`` of the same plain and gzipped page). Targets: knowledge search p50 <
10 ms over 100,000 documents, store > 2,000 docs/s batched, sandbox ``print(1)`` < 150 ms.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the private bench modules beside this script

from _bench_compute import run as run_compute  # type: ignore[import-not-found]
from _bench_knowledge import print_knowledge_report, run_knowledge_benchmarks  # type: ignore[import-not-found]
from _bench_web import run as run_web  # type: ignore[import-not-found]


def main() -> None:
    """Run every part and print their reports."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, default=100_000, help="documents in the knowledge store")
    parser.add_argument("--queries", type=int, default=300, help="search queries to time")
    parser.add_argument("--runs", type=int, default=30, help="sandbox and math repetitions")
    args = parser.parse_args()
    print_knowledge_report(run_knowledge_benchmarks(args.docs, args.queries, rounds=2))
    run_compute(args.runs)
    run_web(max(args.runs, 30))


if __name__ == "__main__":
    main()
