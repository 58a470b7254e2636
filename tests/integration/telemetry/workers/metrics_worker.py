"""A process that records tool calls into a MetricsStore, for the multi-process tests.

Usage: ``python metrics_worker.py MODE PATH [ARGS]``

- ``calls PATH N GO_FILE [COMPACT_BYTES]``: wait for GO_FILE, make N calls through a registry
  (every fifth fails, every tenth goes to an unknown tool), close the store; a small
  COMPACT_BYTES makes compactions interleave with the other processes' appends. A
  ``postgresql://`` URL in place of PATH records into that database instead.
- ``flush-loop PATH``: forever: 10 calls, flush, print the calls flushed so far.
- ``hang-in-rename PATH MARKER``: flush 3 calls, then on a compaction write MARKER and
  sleep just before the temp file is renamed over PATH (waiting to be SIGKILLed).
- ``hang-in-append PATH MARKER before|after``: flush 3 calls, then on the next flush write
  MARKER and sleep just before (or just after) its line is written to the log.
- ``no-close PATH N``: N calls, then exit without closing the store.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

from tools import LocalToolRegistry, ToolError
from tools.metrics import MetricsSink
from tools.telemetry import MetricsStore, open_metrics_store


def work(n: int) -> int:
    """Fails on multiples of five."""
    if n % 5 == 0:
        raise ToolError(f"no multiples of five ({n})")
    return n


def registry_for(store: MetricsSink) -> LocalToolRegistry:
    registry = LocalToolRegistry(metrics=store, failure_threshold=1_000_000)
    registry.register(work)
    return registry


def calls(path: str, count: int, go_file: Path, compact_bytes: int) -> None:
    if path.startswith("postgresql://"):
        store = open_metrics_store(path, database_url=path, flush_interval=0.002)
    else:
        store = MetricsStore(path, flush_interval=0.002, compact_bytes=compact_bytes)
    with store:
        registry = registry_for(store)
        while not go_file.exists():
            time.sleep(0.001)
        for n in range(count):
            if n % 10 == 9:
                registry(f"unknown_{os.getpid()}_{n}")
            else:
                registry("work", n=n)
            if n % 50 == 0:
                time.sleep(0.001)  # let the flusher and the other processes in
    print("done", flush=True)


def flush_loop(path: Path) -> None:
    store = MetricsStore(path, flush_interval=None)
    registry = registry_for(store)
    flushed = 0
    while True:
        for n in range(1, 11):
            registry("work", n=n)
        store.flush()
        flushed += 10
        print(flushed, flush=True)


def hang_in_rename(path: Path, marker: Path) -> None:
    store = MetricsStore(path, flush_interval=None)
    registry = registry_for(store)
    for n in range(1, 4):
        registry("work", n=n)
    store.flush()
    real_replace = os.replace

    def hanging_replace(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        if Path(dst) == path:
            marker.write_text(str(src))
            time.sleep(3600)
        real_replace(src, dst)

    os.replace = hanging_replace  # type: ignore[assignment]  # fault injection: stop before the rename
    for n in range(1, 6):
        registry("work", n=n)
    store.compact()


def hang_in_append(path: Path, marker: Path, when: str) -> None:
    store = MetricsStore(path, flush_interval=None)
    registry = registry_for(store)
    for n in range(1, 4):
        registry("work", n=n)
    store.flush()  # the first flush writes the snapshot; later ones append to its log
    real_write = os.write

    def hanging_write(fd: int, data: Any) -> int:
        if when == "before":
            marker.write_text("in append")
            time.sleep(3600)
        written = real_write(fd, data)
        marker.write_text("in append")
        time.sleep(3600)
        return written

    os.write = hanging_write  # fault injection: stop around the append
    for n in range(1, 6):
        registry("work", n=n)
    store.flush()


def no_close(path: Path, count: int) -> None:
    store = MetricsStore(path, flush_interval=3600)
    registry = registry_for(store)
    for n in range(1, count + 1):
        registry("work", n=n)
    print("exiting", flush=True)


def main() -> None:
    mode, path = sys.argv[1], Path(sys.argv[2])
    if mode == "calls":
        compact_bytes = int(sys.argv[5]) if len(sys.argv) > 5 else 1_000_000
        calls(sys.argv[2], int(sys.argv[3]), Path(sys.argv[4]), compact_bytes)
    elif mode == "flush-loop":
        flush_loop(path)
    elif mode == "hang-in-rename":
        hang_in_rename(path, Path(sys.argv[3]))
    elif mode == "hang-in-append":
        hang_in_append(path, Path(sys.argv[3]), sys.argv[4])
    elif mode == "no-close":
        no_close(path, int(sys.argv[3]))
    else:
        raise SystemExit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    main()
