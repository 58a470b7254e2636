"""Benchmark ToolsNode: parallel wall time, per-call overhead, and a 1,000-call message.

Run: ``python scripts/bench_graph.py [--repeat N]``. Every figure is a median over N runs
and is compared with a baseline measured in the same run:

(a) 10 calls that each sleep 200 ms, through the node (target < 260 ms wall), against one
    direct 200 ms call and against the 10 calls made one after another.
(b) per-call overhead of the node over a direct ``registry.call_tool`` for a trivial tool
    (target < 30 us), for a one-call message and per call in a 100-call message.
(c) 1,000 calls in one message: wall time against 1,000 direct calls, and peak traced
    memory (tracemalloc, measured in a separate pass so it does not skew the timing).
(d) tool message size: what the model is shown (status and data, or status, error and
    error_type) against the whole envelope with its metadata, over the offline demo's real
    tool calls (the builtin tools, a temporary data directory, the context service down)
    and a few typical errors; tokens estimated as characters / 4.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

from orchestrator import AgentGraph, OfflineModel, OrchestratorService, Settings, ToolsNode
from orchestrator.graph._content import model_view
from orchestrator.graph._truncate import dumps
from tools import LocalToolRegistry, ToolResult


def median_seconds(fn: Callable[[], object], repeat: int, number: int = 1) -> float:
    """Median wall time of ``number`` calls of ``fn``, over ``repeat`` runs, per call."""
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        samples.append((time.perf_counter() - start) / number)
    return statistics.median(samples)


def interleaved(
    first: Callable[[], object], second: Callable[[], object], repeat: int, number: int
) -> tuple[list[float], list[float]]:
    """Per-call times of two functions measured in alternation, so load hits both alike."""
    a, b = [], []
    for _ in range(repeat):
        a.append(median_seconds(first, 1, number))
        b.append(median_seconds(second, 1, number))
    return a, b


def make_registry() -> LocalToolRegistry:
    registry = LocalToolRegistry()

    def sleepy(ms: int) -> int:
        """Sleep a while.

        Args:
            ms: Milliseconds.
        """
        time.sleep(ms / 1000)
        return ms

    def noop(x: int) -> int:
        """Return x.

        Args:
            x: A number.
        """
        return x

    registry.register(sleepy)
    registry.register(noop)
    return registry


def state(name: str, arguments: dict[str, Any], count: int) -> dict[str, Any]:
    text = json.dumps(arguments)
    calls = [{"id": f"c{i}", "type": "function", "function": {"name": name, "arguments": text}} for i in range(count)]
    return {"messages": [{"role": "assistant", "content": None, "tool_calls": calls}]}


def bench_parallel(node: ToolsNode, registry: LocalToolRegistry, repeat: int) -> None:
    ten = state("sleepy", {"ms": 200}, 10)
    node_s = median_seconds(lambda: node(ten), repeat)
    one_s = median_seconds(lambda: registry.call_tool("sleepy", ms=200), repeat)
    print("(a) 10 calls x 200 ms sleep through ToolsNode")
    print(f"    node wall time        {node_s * 1000:8.1f} ms   (target < 260 ms)")
    print(f"    one direct call       {one_s * 1000:8.1f} ms   ratio node/one    {node_s / one_s:5.2f}")
    print(f"    10 direct, in a row   {one_s * 10000:8.1f} ms   speed-up          {one_s * 10 / node_s:5.1f}x")


def bench_overhead(node: ToolsNode, registry: LocalToolRegistry, repeat: int) -> None:
    single = state("noop", {"x": 1}, 1)
    direct_runs, node_runs = interleaved(
        lambda: registry.call_tool("noop", x=1), lambda: node(single), repeat * 4, 1000
    )
    direct_s, node_s = statistics.median(direct_runs), statistics.median(node_runs)
    direct_best, node_best = min(direct_runs), min(node_runs)
    batch = state("noop", {"x": 1}, 100)
    batch_s = median_seconds(lambda: node(batch), repeat, 10) / 100
    print("(b) per-call overhead over a direct registry.call_tool (trivial tool)")
    print(f"    direct call_tool      {direct_s * 1e6:8.1f} us   (best run {direct_best * 1e6:.1f} us)")
    print(
        f"    node, 1-call message  {node_s * 1e6:8.1f} us   overhead {(node_s - direct_s) * 1e6:6.1f} us"
        f"   ratio {node_s / direct_s:5.2f}   (target overhead < 30 us)"
    )
    print(
        f"    node, best run        {node_best * 1e6:8.1f} us   overhead {(node_best - direct_best) * 1e6:6.1f} us"
        "   (least disturbed by other load)"
    )
    print(
        f"    node, 100-call msg    {batch_s * 1e6:8.1f} us   overhead {(batch_s - direct_s) * 1e6:6.1f} us"
        f"   ratio {batch_s / direct_s:5.2f}   (per call, run on worker threads)"
    )


def bench_thousand(node: ToolsNode, registry: LocalToolRegistry, repeat: int) -> None:
    big = state("noop", {"x": 1}, 1000)

    def direct() -> None:
        for _ in range(1000):
            registry.call_tool_raw("noop", '{"x": 1}')

    node_s = median_seconds(lambda: node(big), repeat)
    direct_s = median_seconds(direct, repeat)
    peaks = []
    for _ in range(max(1, repeat // 2)):
        tracemalloc.start()
        update = node(big)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
        assert len(update["messages"]) == 1000
    tracemalloc.start()
    direct()
    direct_peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    peak = statistics.median(peaks)
    print("(c) 1,000 calls in one message")
    print(f"    node wall time        {node_s * 1000:8.1f} ms   ({node_s * 1e6 / 1000:.1f} us per call)")
    print(f"    1,000 direct calls    {direct_s * 1000:8.1f} ms   ratio node/direct {node_s / direct_s:5.2f}")
    print(f"    node peak memory      {peak / 1024:8.0f} KiB ({peak / 1000:.0f} bytes per call)")
    print(f"    direct peak memory    {direct_peak / 1024:8.0f} KiB   ratio {peak / max(direct_peak, 1):5.1f}")


class Recording:
    """A registry wrapper that keeps every result it hands to the node."""

    def __init__(self, registry: LocalToolRegistry) -> None:
        self.registry = registry
        self.results: list[ToolResult] = []

    def call_tool_raw(self, name: str, arguments: Any, /, *, call_id: str | None = None) -> ToolResult:
        result = self.registry.call_tool_raw(name, arguments, call_id=call_id)
        self.results.append(result)
        return result

    async def acall_tool_raw(self, name: str, arguments: Any, /, *, call_id: str | None = None) -> ToolResult:
        result = await self.registry.acall_tool_raw(name, arguments, call_id=call_id)
        self.results.append(result)
        return result

    def get_tool(self, name: str, /) -> Any:
        return self.registry.get_tool(name)

    def to_openai_tools(self, *, strict: bool = False) -> list[dict[str, Any]]:
        return self.registry.to_openai_tools(strict=strict)


DEMO = [
    "What is 12*(3+4)? Remember that my dentist is Dr. Lee.",
    "Who is my dentist?",
    "What is 2/3?",
    "solve x^2 = 4",
    "What's the weather?",
]


def bench_message_size() -> None:
    with tempfile.TemporaryDirectory() as folder:
        settings = Settings(data_dir=Path(folder), context_url="http://127.0.0.1:9")  # nothing listens there
        with OrchestratorService(settings) as service:
            recording = Recording(service.registry)
            with ToolsNode(recording) as node:
                graph = AgentGraph(OfflineModel(), recording, tools_node=node)
                for question in DEMO:
                    graph.run(question)
            demo = len(recording.results)
            recording.call_tool_raw("math_solver", '{"expresion": "2+2"}')  # a validation error
            recording.call_tool_raw("calculator", '{"expression": "2+2"}')  # an unknown tool
    old = [len(dumps(r.to_dict())) for r in recording.results]
    new = [len(dumps(model_view(r))) for r in recording.results]
    saved = [o - n for o, n in zip(old, new, strict=True)]
    print("(d) tool message size: model view against the whole envelope")
    print(f"    messages              {len(old):8d}   ({demo} from the offline demo, 2 typical errors)")
    print(f"    envelope, mean        {statistics.mean(old):8.0f} chars")
    print(f"    model view, mean      {statistics.mean(new):8.0f} chars")
    print(
        f"    saved per message     {statistics.mean(saved):8.0f} chars  ~{statistics.mean(saved) / 4:.0f} tokens"
        f"   (median {statistics.median(saved) / 4:.0f}, min {min(saved) / 4:.0f}, max {max(saved) / 4:.0f} tokens;"
        f" {sum(saved) / sum(old):.0%} of the envelope)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs per figure (median)")
    args = parser.parse_args()
    registry = make_registry()
    with ToolsNode(registry) as node:
        node(state("noop", {"x": 1}, 16))  # warm up: worker threads, schema caches
        bench_parallel(node, registry, args.repeat)
        bench_overhead(node, registry, args.repeat)
        bench_thousand(node, registry, args.repeat)
    bench_message_size()


if __name__ == "__main__":
    main()
