"""Benchmark tool calls through ToolsNode on the thread pool and on Ray.

Run: ``python scripts/bench_scale.py [--calls 1000] [--rounds 1] [--ray-address ADDR]``.
Two workloads, each one assistant message of ``--calls`` tool calls run by a `ToolsNode`:

(a) an I/O-bound tool that sleeps ``--io-ms`` (50 ms): with the node's worker threads, and
    with the calls on Ray (tasks of ``--io-cpus`` CPU each, so a core serves several);
(b) a CPU-bound tool that does ``--cpu-ms`` (100 ms, calibrated on one core at the start) of
    pure-Python work: with the threads (one GIL: one core at a time) and on Ray (one process
    per core).

For each, the median wall time over ``--rounds`` and two ratios, both against baselines
measured in the same run: to the ideal (the calls times one direct call's time, divided by
the parallelism the executor can give them: the node's ``--parallel`` calls at once for
I/O, the cores for CPU work, one core for threads held by the GIL; 1.0 is perfect), and to
the same calls made without tooldeck (a bare thread pool of ``--parallel`` threads, or bare
Ray tasks), which is what tooldeck adds. Ray's workers are warmed up before timing; the
local Ray (without an address) is started with this machine's cores and stopped at the end.
On a busy machine the figures move with its load: compare the rows of one run.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from orchestrator import ToolsNode
from tools import LocalToolRegistry
from tools.executors import RayExecutor


def wait_io(milliseconds: int = 50) -> int:
    """Wait as an I/O-bound tool would.

    Args:
        milliseconds: How long.
    """
    time.sleep(milliseconds / 1000)
    return milliseconds


def compute(iterations: int = 1000) -> int:
    """Pure-Python work, as a CPU-bound tool does: a fixed number of loop iterations.

    Args:
        iterations: How much work.
    """
    total = 0
    for i in range(iterations):
        total += i * i % 7
    return total


def calibrate(milliseconds: int) -> int:
    """The iterations of `compute` that take ``milliseconds`` on one core here (median of 5)."""
    probe = 200_000
    return max(1, round(probe * (milliseconds / 1000) / direct_seconds(lambda: compute(probe))))


def turn(name: str, calls: int, **arguments: int) -> dict[str, Any]:
    encoded = json.dumps(arguments)
    tool_calls = [
        {"id": f"c{i}", "type": "function", "function": {"name": name, "arguments": encoded}} for i in range(calls)
    ]
    return {"messages": [{"role": "assistant", "content": None, "tool_calls": tool_calls}]}


def timed(node: ToolsNode, state: dict[str, Any]) -> float:
    start = time.perf_counter()
    update = node(state)
    elapsed = time.perf_counter() - start
    failed = [m for m in update["messages"] if json.loads(m["content"])["status"] != "success"]
    if failed:
        raise SystemExit(f"{len(failed)} calls failed, e.g. {failed[0]['content'][:300]}")
    return elapsed


def direct_seconds(call: Callable[[], object]) -> float:
    """Median seconds of one direct call (of 5), in this process."""
    samples = []
    for _ in range(5):
        start = time.perf_counter()
        call()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def parallel_capacity(workers: int, iterations: int) -> float:
    """How many times faster ``workers`` processes do ``workers`` pieces of pure-Python work
    than one process does them in turn, right now (a shared machine may give less than its
    core count)."""
    start = time.perf_counter()
    for _ in range(workers):
        compute(iterations)
    serial = time.perf_counter() - start
    with concurrent.futures.ProcessPoolExecutor(workers) as pool:
        list(pool.map(compute, [1] * workers))  # start the processes first
        start = time.perf_counter()
        list(pool.map(compute, [iterations] * workers))
        parallel = time.perf_counter() - start
    return serial / parallel


def warm_up(node: ToolsNode, name: str, calls: int, **arguments: int) -> None:
    """Start Ray's workers for this workload just before it is timed (Ray stops idle extra
    workers after a second, so a warm-up long before would be lost)."""
    for _ in range(3):
        timed(node, turn(name, calls, **arguments))


def median_of(rounds: int, run: Callable[[], float]) -> float:
    return statistics.median(run() for _ in range(rounds))


@dataclass
class Row:
    """One measured line: a workload on one executor."""

    workload: str
    executor: str
    wall: float  # through ToolsNode and the registry
    raw: float  # the same calls without tooldeck (a thread pool, or bare Ray tasks)
    ideal: float


def raw_threads(fn: Callable[..., object], calls: int, parallel: int, arguments: dict[str, int]) -> float:
    start = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(parallel) as pool:
        list(pool.map(lambda _: fn(**arguments), range(calls)))
    return time.perf_counter() - start


def raw_ray(remote: Any, calls: int, arguments: dict[str, int]) -> float:
    import ray

    start = time.perf_counter()
    ray.get([remote.remote(**arguments) for _ in range(calls)])
    return time.perf_counter() - start


def measure(args: argparse.Namespace, cluster: RayExecutor, io_cluster: RayExecutor) -> tuple[list[Row], int, float]:
    """Both workloads on both executors, each with its raw baseline; Ray's CPUs; and the
    parallel capacity the machine gave that many processes during the CPU-bound rows."""
    import ray

    ray_api: Any = ray  # ray's own functions are untyped
    ray_cpus = int(ray_api.cluster_resources().get("CPU", 1))
    threads = LocalToolRegistry()
    threads.register(wait_io)
    threads.register(compute)
    on_ray = LocalToolRegistry(executor=cluster)
    on_ray.register(wait_io, executor=io_cluster)
    on_ray.register(compute)
    io_args, cpu_args = {"milliseconds": args.io_ms}, {"iterations": calibrate(args.cpu_ms)}
    io_total = args.calls * direct_seconds(lambda: wait_io(**io_args))  # one direct call, times the calls
    cpu_total = args.calls * direct_seconds(lambda: compute(**cpu_args))
    io_remote = ray.remote(wait_io).options(num_cpus=args.io_cpus)
    cpu_remote = ray.remote(compute)
    rounds = args.rounds
    with (
        ToolsNode(threads, max_parallel=args.parallel) as local,
        ToolsNode(on_ray, max_parallel=args.parallel) as remote,
    ):
        io_state, cpu_state = turn("wait_io", args.calls, **io_args), turn("compute", args.calls, **cpu_args)
        rows = [
            Row("io", "threads", median_of(rounds, lambda: timed(local, io_state)),
                median_of(rounds, lambda: raw_threads(wait_io, args.calls, args.parallel, io_args)),
                io_total / args.parallel),
        ]  # fmt: skip
        warm_up(remote, "wait_io", 4 * args.parallel, **io_args)
        rows.append(
            Row("io", "ray", median_of(rounds, lambda: timed(remote, io_state)),
                median_of(rounds, lambda: raw_ray(io_remote, args.calls, io_args)),
                io_total / min(args.parallel, int(ray_cpus / args.io_cpus)))
        )  # fmt: skip
        rows.append(
            Row("cpu", "threads", median_of(rounds, lambda: timed(local, cpu_state)),
                median_of(rounds, lambda: raw_threads(compute, args.calls, args.parallel, cpu_args)), cpu_total)
        )  # fmt: skip
        warm_up(remote, "compute", 4 * ray_cpus, iterations=1)
        rows.append(
            Row("cpu", "ray", median_of(rounds, lambda: timed(remote, cpu_state)),
                median_of(rounds, lambda: raw_ray(cpu_remote, args.calls, cpu_args)), cpu_total / ray_cpus)
        )  # fmt: skip
    capacity = parallel_capacity(ray_cpus, 5 * cpu_args["iterations"])
    return rows, ray_cpus, capacity


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--parallel", type=int, default=16, help="ToolsNode max_parallel (default 16)")
    parser.add_argument("--io-ms", type=int, default=50)
    parser.add_argument("--cpu-ms", type=int, default=100)
    parser.add_argument("--io-cpus", type=float, default=0.125, help="CPUs Ray reserves per I/O call")
    parser.add_argument("--ray-address", default=None, help="join this cluster (default: a local Ray)")
    args = parser.parse_args()
    cluster = RayExecutor(address=args.ray_address)
    io_cluster = RayExecutor(task_options={"num_cpus": args.io_cpus})  # the same Ray, lighter I/O tasks
    try:
        rows, ray_cpus, capacity = measure(args, cluster, io_cluster)
    finally:
        io_cluster.close()
        cluster.close()
    names = {"io": f"{args.calls} x {args.io_ms} ms I/O", "cpu": f"{args.calls} x {args.cpu_ms} ms CPU"}
    print(f"ToolsNode(max_parallel={args.parallel}); this machine: {os.cpu_count()} cores; Ray: {ray_cpus} CPUs; "
          f"median of {args.rounds} round(s); raw = the same calls without tooldeck")  # fmt: skip
    print(f"{'workload':<20} {'executor':<8} {'wall s':>7} {'raw s':>7} {'ideal s':>7} {'/ideal':>7} {'/raw':>6}")
    for row in rows:
        print(f"{names[row.workload]:<20} {row.executor:<8} {row.wall:>7.2f} {row.raw:>7.2f} {row.ideal:>7.2f} "
              f"{row.wall / row.ideal:>7.2f} {row.wall / row.raw:>6.2f}")  # fmt: skip
    by = {(row.workload, row.executor): row.wall for row in rows}
    print(f"CPU-bound: Ray runs at {by['cpu', 'threads'] / by['cpu', 'ray']:.2f}x the thread pool's speed; "
          f"I/O-bound: {by['io', 'threads'] / by['io', 'ray']:.2f}x")  # fmt: skip
    print(f"parallel capacity: {ray_cpus} processes did pure-Python work {capacity:.2f}x as fast as one "
          f"(the most Ray can gain over the thread pool on this machine now)")  # fmt: skip


if __name__ == "__main__":
    main()
