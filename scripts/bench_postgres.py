"""Benchmark the PostgreSQL stores against the embedded file stores they replace.

Run: ``python scripts/bench_postgres.py [--database-url URL] [--rounds 15]``. Without a URL
(and without ``TOOLDECK_DATABASE_URL``) a private cluster is started in a temporary directory
(``initdb`` + ``pg_ctl``, a Unix socket only; as the tests start it) and removed at the end.

Each figure is the median over ``--rounds`` of one operation, the two backends taking turns
round by round (the machine is shared: drift falls on both alike), with the ratio of the
database to the file store measured in the same run:

- a metrics flush of 200 recorded calls over 20 tools (`MetricsStore.flush` /
  `PostgresMetricsStore.flush`), ``record()`` itself being the same queue append in both;
- ``series()`` + ``summary()`` of one tool (what the console's chart of a tool reads);
- ``all_stats()`` with 1,000 tools stored;
- saving one run record, and listing the newest 50 of 200 (``tooldeck runs list``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout's tests/ (the private cluster)

from tools import ToolResult
from tools.runs import FileRunStore, PostgresRunStore, RunRecord
from tools.telemetry import MetricsStore, PostgresMetricsStore

Timed = Callable[[], float]
Metrics = MetricsStore | PostgresMetricsStore
Runs = FileRunStore | PostgresRunStore


@contextmanager
def database(url: str | None) -> Iterator[str]:
    """``url``, or a fresh database of a private cluster started (and stopped) here."""
    if url:
        yield url
        return
    from tests.integration.postgres.cluster import start_cluster

    cluster = start_cluster()
    try:
        yield cluster.new_database()
    finally:
        cluster.stop()


def call(tool: str) -> ToolResult:
    metadata = {"tool_name": tool, "duration_ms": 12.5, "started_at": datetime.now(timezone.utc).isoformat()}
    return ToolResult.success(1, metadata)


def seconds(fn: Callable[[], object]) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def timing(fn: Callable[[], object]) -> Timed:
    return lambda: seconds(fn)


def interleaved(variants: dict[str, Timed], rounds: int) -> dict[str, float]:
    samples: dict[str, list[float]] = {label: [] for label in variants}
    for _ in range(rounds):
        for label, timed in variants.items():
            samples[label].append(timed())
    return {label: statistics.median(values) for label, values in samples.items()}


def report(title: str, figures: dict[str, float]) -> None:
    file_ms, database_ms = figures["file"] * 1e3, figures["postgres"] * 1e3
    print(f"{title:<48} file {file_ms:9.2f} ms   postgres {database_ms:9.2f} ms   ({database_ms / file_ms:5.2f}x)")


def bench_metrics(url: str, workdir: Path, rounds: int) -> None:
    stores: dict[str, Metrics] = {
        "file": MetricsStore(workdir / "metrics.json", flush_interval=None),
        "postgres": PostgresMetricsStore(url, flush_interval=None),
    }
    batch = [call(f"tool_{n % 20}") for n in range(200)]

    def flush(store: Metrics) -> Timed:
        def timed() -> float:
            for result in batch:
                store.record(result)
            store.all_stats()  # the background drain's share, outside the timing
            return seconds(store.flush)

        return timed

    try:
        report("metrics flush, 200 calls over 20 tools", interleaved({k: flush(s) for k, s in stores.items()}, rounds))
        read = {k: timing(lambda s=s: (s.series("tool_3"), s.summary("tool_3"))) for k, s in stores.items()}  # type: ignore[misc]
        report("series() + summary() of one tool", interleaved(read, rounds))
        for store in stores.values():
            for n in range(1000):
                store.record(call(f"many_{n}"))
            store.flush()
        every = {k: timing(s.all_stats) for k, s in stores.items()}
        report("all_stats(), 1,020 tools stored", interleaved(every, rounds))
    finally:
        for store in stores.values():
            store.close()


def bench_runs(url: str, workdir: Path, rounds: int) -> None:
    postgres = PostgresRunStore(url)
    stores: dict[str, Runs] = {"file": FileRunStore(workdir / "runs"), "postgres": postgres}

    def record() -> RunRecord:
        now = datetime.now(timezone.utc)
        run_id = "run_" + uuid.uuid4().hex
        return RunRecord(id=run_id, status="answered", question="What is 2+3?", started_at=now, updated_at=now)

    try:
        for store in stores.values():
            for _ in range(200):
                store.save(record())
        save = {k: timing(lambda s=s: s.save(record())) for k, s in stores.items()}  # type: ignore[misc]
        report("save one run record", interleaved(save, rounds))
        listed = {k: timing(lambda s=s: s.list(limit=50)) for k, s in stores.items()}  # type: ignore[misc]
        report("list the newest 50 of 200+ run records", interleaved(listed, rounds))
    finally:
        postgres.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--database-url", default=os.environ.get("TOOLDECK_DATABASE_URL"))
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    with database(args.database_url) as url, tempfile.TemporaryDirectory() as workdir:
        print(f"medians of {args.rounds} rounds; the ratio is postgres / file, measured in this run")
        bench_metrics(url, Path(workdir), args.rounds)
        bench_runs(url, Path(workdir), args.rounds)


if __name__ == "__main__":
    main()
