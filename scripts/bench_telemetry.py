"""Cost of the learning loop and of tool spans, against baselines measured in the same run.

Run: ``python scripts/bench_telemetry.py [--quick]``. Prints medians and differences; no
assertions.

(a) ``sink.record(result)`` alone: a no-op sink, ``InMemoryMetrics``, ``MetricsStore``
    (background flusher running), per call;
(b) ``registry.call_tool("add", ...)`` with no sink, each sink attached: the cost a user sees;
(c) one tool span: ``ToolTracer.start`` + ``end`` against OpenTelemetry's own
    ``start_as_current_span`` context manager and against no tracing, with the SDK's
    ``TracerProvider`` (recording, no exporter) and with the API's default no-op provider;
(d) ``MetricsStore.flush()`` of one interval's deltas (200 calls over 20 tools) into a file of
    20 and of 10,000 tools (target <= 20 ms at 10,000), against a whole-file rewrite measured in
    the same run (what every flush did before the append log, and what a compaction does now
    and then), with the compaction's share per flush; and ``series()`` / ``summary()`` of one
    tool read back;
(e) ``python -c "import tools.telemetry"``: OpenTelemetry and rich must not be imported.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import timeit
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from tools import InMemoryMetrics, LocalToolRegistry, ToolResult
from tools.telemetry import MetricsStore, ToolTracer


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


class NoOpSink:
    def record(self, result: ToolResult) -> None:
        pass


def per_call_us(fn: Callable[[], Any], number: int, repeat: int) -> float:
    """Median microseconds per call over ``repeat`` runs of ``number`` calls."""
    return statistics.median(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e6


def interleaved(variants: dict[str, Callable[[], float]], rounds: int) -> dict[str, tuple[float, float]]:
    """(median, min) of each variant's timing, the variants taking turns round by round.

    The machine is shared: taking turns spreads drift over every variant alike, and the
    minimum shows the cost without interference.
    """
    samples: dict[str, list[float]] = {label: [] for label in variants}
    for _ in range(rounds):
        for label, timed in variants.items():
            samples[label].append(timed())
    return {label: (statistics.median(values), min(values)) for label, values in samples.items()}


def report(title: str, figures: dict[str, tuple[float, float]], base_label: str) -> None:
    base = figures[base_label][0]
    print(title)
    for label, (median, low) in figures.items():
        print(f"    {label:<34} {median:7.3f} us (min {low:7.3f})   +{median - base:6.3f} us over {base_label}")


def bench_record(number: int, rounds: int, workdir: Path) -> None:
    registry = LocalToolRegistry()
    registry.register(add)
    result = registry.call_tool("add", a=1, b=2)
    noop, memory = NoOpSink(), InMemoryMetrics()
    quiet = MetricsStore(workdir / "quiet.json", flush_interval=None)

    def timed(fn: Callable[[], None]) -> Callable[[], float]:
        return lambda: timeit.timeit(fn, number=number) / number * 1e6

    def store_with_drain() -> float:
        # record() plus this call's share of the background drain into per-tool deltas.
        started = timeit.default_timer()
        for _ in range(number):
            quiet.record(result)
        quiet.all_stats()  # drains the queue into the deltas
        return (timeit.default_timer() - started) / number * 1e6

    def store_record_only() -> float:
        value = timed(lambda: quiet.record(result))()
        quiet.all_stats()  # drains the queue into the deltas
        return value

    figures = interleaved(
        {
            "no-op sink": timed(lambda: noop.record(result)),
            "InMemoryMetrics.record": timed(lambda: memory.record(result)),
            "MetricsStore.record": store_record_only,
            "MetricsStore.record + drain share": store_with_drain,
        },
        rounds,
    )
    quiet.close()
    report("(a) sink.record(result), per call", figures, "no-op sink")


def bench_registry(number: int, rounds: int, workdir: Path) -> None:
    def timed(metrics: Any) -> Callable[[], float]:
        registry = LocalToolRegistry(metrics=metrics)
        registry.register(add)
        call = registry.call_tool
        return lambda: timeit.timeit(lambda: call("add", a=1, b=2), number=number) / number * 1e6

    with MetricsStore(workdir / "registry.json") as store:
        figures = interleaved(
            {
                "no sink": timed(None),
                "no-op sink": timed(NoOpSink()),
                "InMemoryMetrics": timed(InMemoryMetrics()),
                "MetricsStore (flusher running)": timed(store),
            },
            rounds,
        )
    report('(b) registry.call_tool("add", a=1, b=2), per call', figures, "no sink")


def bench_spans(number: int, repeat: int) -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.trace import NoOpTracerProvider, SpanKind

    registry = LocalToolRegistry()
    registry.register(add)
    result = registry.call_tool("add", a=1, b=2)
    print("(c) one tool span, per call")
    for label, provider in (("SDK provider", TracerProvider()), ("no-op provider", NoOpTracerProvider())):
        tracer = ToolTracer(provider)
        otel = provider.get_tracer("bench")

        def pair(tracer: ToolTracer = tracer) -> None:
            tracer.end(tracer.start("add", "Add two integers.", "function", "call_1"), result, "closed")

        def manager(otel: Any = otel) -> None:
            attributes = {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "add",
                "gen_ai.tool.type": "function",
                "gen_ai.tool.description": "Add two integers.",
                "gen_ai.tool.call.id": "call_1",
            }
            with otel.start_as_current_span("execute_tool add", kind=SpanKind.INTERNAL, attributes=attributes) as span:
                span.set_attributes({"tooldeck.request_id": "r", "tooldeck.attempts": 1})

        start_end = per_call_us(pair, number // 4, repeat)
        cm = per_call_us(manager, number // 4, repeat)
        print(f"    {label:<16} ToolTracer.start+end {start_end:7.2f} us | start_as_current_span {cm:7.2f} us")


def bench_flush(workdir: Path, rounds: int) -> None:
    now = datetime.now(timezone.utc).isoformat()
    results = [
        ToolResult.success(3, {"tool_name": f"tool_{i}", "duration_ms": float(i % 300), "started_at": now})
        for i in range(10_000)
    ]
    print("(d) MetricsStore.flush(), 200 calls over 20 tools into a file of N tools")
    for size in (20, 10_000):
        path = workdir / f"flush-{size}.json"
        with MetricsStore(path, flush_interval=None) as store:
            for result in results[:size]:
                store.record(result)
            store.flush()  # the first flush writes the snapshot
            flushes, rewrites = [], []
            for _ in range(rounds):
                for result in results[:20] * 10:
                    store.record(result)
                flushes.append(timeit.timeit(store.flush, number=1) * 1e3)
                for result in results[:20] * 10:
                    store.record(result)
                rewrites.append(timeit.timeit(store.compact, number=1) * 1e3)
            line = len(json.dumps(json.loads(store_line(store, results[:20] * 10))))
            per_compaction = max(1, 1_000_000 // line)  # flushes until the log passes compact_bytes
            started = timeit.default_timer()
            store.series("tool_7")
            store.summary("tool_7")
            reads = (timeit.default_timer() - started) * 1e3
        flush, rewrite = statistics.median(flushes), statistics.median(rewrites)
        kilobytes = path.stat().st_size / 1e3
        target = " (target <= 20 ms)" if size == 10_000 else ""
        print(
            f"    N={size:<6} flush {flush:7.2f} ms{target}; whole-file rewrite (the old flush, a compaction now) "
            f"{rewrite:8.2f} ms, {flush / rewrite:.3f}x; a compaction every ~{per_compaction} flushes: "
            f"+{rewrite / per_compaction:.2f} ms per flush; series+summary of one tool {reads:.1f} ms "
            f"({kilobytes:.0f} kB snapshot)"
        )


def store_line(store: MetricsStore, results: list[ToolResult]) -> bytes:
    """The log line one flush of ``results`` writes (for the compaction interval)."""
    from tools.telemetry._file import Figures, dump_delta

    probe = MetricsStore(store.path.with_name("probe.json"), flush_interval=None)
    for result in results:
        probe.record(result)
    probe._drain()
    line = dump_delta(Figures(probe._deltas, probe._series))
    probe._deltas, probe._series = {}, {}
    probe.close()
    return line


def bench_import() -> None:
    code = "import sys, tools.telemetry; print(any(m.startswith(('opentelemetry', 'rich')) for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    print(f"(e) import tools.telemetry loads opentelemetry or rich: {out.stdout.strip()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer iterations (a smoke run)")
    args = parser.parse_args()
    number, repeat = (20_000, 5) if args.quick else (200_000, 7)
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        bench_record(number // 10, repeat * 3, workdir)
        bench_registry(number // 100, repeat * 3, workdir)
        bench_spans(number, repeat)
        bench_flush(workdir, 5 if args.quick else 15)
    bench_import()


if __name__ == "__main__":
    main()
