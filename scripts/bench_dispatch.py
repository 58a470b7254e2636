"""Dispatch overhead of the registry against a bare pydantic baseline, measured in one run.

Run: ``python scripts/bench_dispatch.py [--quick]``. Prints medians and ratios; no assertions.

(a) baselines: ``AddRequest.model_validate_json(payload)`` + the call; for the async tool a
    bare ``await`` of validate + coroutine + dump (``to_jsonable_python``); for the strict-mode
    call, the nested model validated bare from the same payload without its nulls; for the
    invalid payload, bare pydantic's error path (``ValidationError.errors()``);
(b) ``add(a: int, b: int)`` and a nested-model tool through ``registry.call_tool_raw`` from
    the JSON text an LLM sends, full envelope and ``to_dict()`` included; the same ``add``
    through ``registry(name, **kwargs)`` and ``acall_tool_raw`` inside a running loop (inline,
    as an ``async def`` on the caller's loop, and in a worker thread); the strict-mode form
    of the nested call;
(c) an invalid payload through the registry (the failure log line has no handler to show it);
(d) ``to_openai_tools()`` for 200 registered tools: cold (a fresh registry each, so the
    strict figure is measured on its own) and cached (strict and not);
(e) ``python -c "import tools"`` wall time against ``import pydantic`` and an empty interpreter.
Export at 10,000 tools, registration and ``import orchestrator``: ``scripts/bench_scale.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import itertools
import os
import statistics
import subprocess
import sys
import time
import timeit
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Field, ValidationError
from pydantic_core import to_jsonable_python

from tools import BaseTool, LocalToolRegistry


class AddRequest(BaseModel):
    a: int
    b: int


async def async_add(a: int, b: int) -> int:
    """Add two integers, asynchronously."""
    return a + b


def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: First addend.
        b: Second addend.
    """
    return a + b


class Point(BaseModel):
    x: float
    y: float


class RouteRequest(BaseModel):
    origin: Point
    destination: Point
    waypoints: list[Point] = []
    mode: str = Field(default="driving", description="driving|walking")


class RouteTool(BaseTool[RouteRequest, dict[str, Any]]):
    name = "route"
    description = "Distance of a route."

    def execute_internal(self, request: RouteRequest) -> dict[str, Any]:
        points = [request.origin, *request.waypoints, request.destination]
        distance = sum(abs(p.x - q.x) + abs(p.y - q.y) for p, q in itertools.pairwise(points))
        return {"distance": distance, "mode": request.mode}


def per_call_us(fn: Callable[[], Any], number: int, repeat: int) -> float:  # for the export figures
    """Median microseconds per call over ``repeat`` runs of ``number`` calls."""
    runs = timeit.repeat(fn, number=number, repeat=repeat)
    return statistics.median(runs) / number * 1e6


def wall_ms(code: str, repeat: int) -> float:
    """Median wall time in ms of ``python -c code`` in a fresh interpreter.

    Bytecode caching is allowed (as on a user's machine: PYTHONDONTWRITEBYTECODE, set on
    some CI images, would make every import compile from source) and one warm-up run fills it.
    """
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, env=env)
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def make_tools(count: int) -> LocalToolRegistry:
    """A registry of ``count`` distinct tools with small nested schemas."""
    registry = LocalToolRegistry()
    for i in range(count):
        fields: dict[str, Any] = {
            "query": (str, Field(description=f"Query {i}.")),
            "limit": (int, Field(default=10, description="Maximum hits.")),
            "origin": (Point | None, None),
        }
        from pydantic import create_model

        model = create_model(f"Req{i}", **fields)

        def body(ns: dict[str, Any], i: int = i) -> None:
            ns["name"] = f"tool_{i}"
            ns["description"] = f"Tool number {i}."
            ns["execute_internal"] = lambda self, request: request

        import types

        cls = types.new_class(f"Tool{i}", (BaseTool[model, Any],), {}, body)
        registry.register(cls())
    return registry


Block = Callable[[int], float]


def sync_block(fn: Callable[[], Any]) -> Block:
    """Seconds for ``n`` calls of ``fn``."""

    def run(n: int) -> float:
        return timeit.timeit(fn, number=n)

    return run


def bare_async_block(loop: asyncio.AbstractEventLoop, payload: str) -> Block:
    """Seconds for ``n`` bare awaits of validate + coroutine + dump inside one running loop."""

    async def calls(n: int) -> float:
        start = time.perf_counter()
        for _ in range(n):
            request = AddRequest.model_validate_json(payload)
            to_jsonable_python(await async_add(request.a, request.b))
        return time.perf_counter() - start

    return lambda n: loop.run_until_complete(calls(n))


def error_block(payload: str) -> Block:
    """Seconds for ``n`` runs of bare pydantic's error path on an invalid payload."""

    def once() -> Any:
        try:
            AddRequest.model_validate_json(payload)
        except ValidationError as exc:
            return exc.errors()
        raise AssertionError("the payload was meant to be invalid")  # pragma: no cover

    return sync_block(once)


def async_block(loop: asyncio.AbstractEventLoop, registry: LocalToolRegistry, name: str, payload: str) -> Block:
    """Seconds for ``n`` ``acall_tool_raw`` calls awaited inside one running loop."""

    async def calls(n: int) -> float:
        start = time.perf_counter()
        for _ in range(n):
            (await registry.acall_tool_raw(name, payload)).to_dict()
        return time.perf_counter() - start

    return lambda n: loop.run_until_complete(calls(n))


def paired(base: Block, candidate: Block, number: int, repeat: int) -> tuple[float, float, float]:
    """Baseline and candidate measured in alternating blocks (so load drift hits both alike).

    Returns the median microseconds per call of each and the median of the per-round ratios.
    """
    base(max(number // 10, 1))
    candidate(max(number // 10, 1))  # warm-up: caches, worker threads, the tool loop
    bases, candidates, ratios = [], [], []
    for _ in range(repeat):
        b = base(number) / number * 1e6
        c = candidate(number) / number * 1e6
        bases.append(b)
        candidates.append(c)
        ratios.append(c / b)
    return statistics.median(bases), statistics.median(candidates), statistics.median(ratios)


def line(label: str, figures: tuple[float, float, float], target: float | None = None, note: str = "") -> str:
    base, value, ratio = figures
    text = f"  {label:<46} {value:8.2f} us  {ratio:5.2f}x  (baseline {base:.2f} us"
    text += f"; target <= {target:g}x)" if target else ")"
    return text + (f"  {note}" if note else "")


def main() -> None:
    """Run every measurement and print a report."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer repeats (a smoke run)")
    args = parser.parse_args()
    number, repeat = (2_000, 5) if args.quick else (20_000, 9)
    # Failed calls log a WARNING line; with no handler to show it (the library's loggers
    # carry only a NullHandler until the application configures logging) it costs nothing.

    registry = LocalToolRegistry()
    registry.register(add)
    registry.register(add, name="add_inline", replace=True)
    registry.get_tool("add_inline").run_in_thread = False  # type: ignore[union-attr]
    registry.register(async_add)
    registry.register(RouteTool())
    payload = '{"a": 1, "b": 2}'
    nested = (
        '{"origin": {"x": 0, "y": 0}, "destination": {"x": 3, "y": 4},'
        ' "waypoints": [{"x": 1, "y": 1}, {"x": 2, "y": 2}]}'
    )
    invalid = '{"a": "one", "c": 3}'
    nested_baseline = RouteRequest.model_validate_json
    # What a strict-mode model sends: every argument, null for the ones it leaves at default.
    strict_call = '{"origin": {"x": 0, "y": 0}, "destination": {"x": 3, "y": 4}, "waypoints": null, "mode": null}'
    without_nulls = '{"origin": {"x": 0, "y": 0}, "destination": {"x": 3, "y": 4}}'
    assert registry.call_tool_raw("add", payload).data == 3
    assert registry.call_tool_raw("add", invalid).error is not None
    assert registry.call_tool_raw("route", strict_call).data == {"distance": 7.0, "mode": "driving"}

    base = sync_block(lambda: add(**AddRequest.model_validate_json(payload).__dict__))
    nested_base = sync_block(lambda: RouteTool().execute_internal(nested_baseline(nested)))
    strict_base = sync_block(lambda: RouteTool().execute_internal(nested_baseline(without_nulls)))
    loop = asyncio.new_event_loop()
    await_base = bare_async_block(loop, payload)
    rows = [
        ("(b) flat add, call_tool_raw, JSON in, dict out", base, "add", payload, 3.0, "", None),
        ("    flat add, registry(name, **kwargs)", base, "add", None, 3.5, "", None),
        (
            "    flat add, acall_tool_raw in a running loop",
            base,
            "add_inline",
            payload,
            3.5,
            "run_in_thread=False",
            loop,
        ),
        (
            "    async def add, acall_tool_raw",
            await_base,
            "async_add",
            payload,
            4.0,
            "on the caller's loop; baseline: bare await of validate + coroutine + dump",
            loop,
        ),
        ("    sync add, acall_tool_raw", base, "add", payload, None, "default: a worker thread", loop),
        ("    nested-model tool, call_tool_raw", nested_base, "route", nested, 3.0, "", None),
        (
            "    same, strict-mode call with nulls",
            strict_base,
            "route",
            strict_call,
            3.5,
            "baseline: the same payload without its nulls, bare",
            None,
        ),
        (
            "(c) invalid payload to model-facing error",
            error_block(invalid),
            "add",
            invalid,
            6.0,
            "baseline: bare pydantic's error path (.errors())",
            None,
        ),
    ]
    print("dispatch (median per call; ratio = median of alternating baseline/candidate rounds)")
    for label, baseline, name, arguments, target, note, running in rows:
        if running is not None:
            candidate = async_block(running, registry, name, arguments or "{}")
            count = number if target else number // 10
        elif arguments is None:
            candidate = sync_block(lambda: registry("add", a=1, b=2))
            count = number
        else:
            candidate = sync_block(
                functools.partial(lambda n, a: registry.call_tool_raw(n, a).to_dict(), name, arguments)
            )
            count = number // 4 if "invalid" in label else number
        print(line(label, paired(baseline, candidate, count, repeat), target, note))
    loop.close()

    observed(number, repeat, payload)

    cold_plain = cold_export_ms(strict=False)
    cold_strict = cold_export_ms(strict=True)
    big = make_tools(200)
    for strict, cold in ((False, cold_plain), (True, cold_strict)):
        big.to_openai_tools(strict=strict)
        cached = per_call_us(functools.partial(big.to_openai_tools, strict=strict), 50, repeat) / 1e3
        label = "strict" if strict else "plain "
        print(
            f"  (d) to_openai_tools {label} 200 tools: cold {cold:7.2f} ms (fresh registry), "
            f"cached {cached:6.3f} ms (target <= 1 ms)"
        )

    imports = 3 if args.quick else 9
    empty = wall_ms("pass", imports)
    pyd = wall_ms("from pydantic import BaseModel", imports)
    ours = wall_ms("import tools", imports)
    print(
        f"  (e) import tools: {ours - empty:6.1f} ms over a bare interpreter (target <= 100 ms); "
        f"from pydantic import BaseModel alone: {pyd - empty:.1f} ms; tools adds {ours - pyd:.1f} ms "
        f"({(ours - empty) / max(pyd - empty, 1e-9):.2f}x pydantic's import)"
    )


def observed(number: int, repeat: int, payload: str) -> None:
    """What the learning loop and tracing add to one call (deltas against the same registry
    without them, alternating rounds)."""
    import tempfile

    from tools.telemetry import MetricsStore

    plain = LocalToolRegistry()
    plain.register(add)
    base = sync_block(lambda: plain.call_tool_raw("add", payload).to_dict())
    with tempfile.TemporaryDirectory() as tmp, MetricsStore(f"{tmp}/metrics.json") as store:
        stored = LocalToolRegistry(metrics=store)
        stored.register(add)
        b, c, _ = paired(base, sync_block(lambda: stored.call_tool_raw("add", payload).to_dict()), number, repeat)
        print(f"  (f) with a MetricsStore attached: {c - b:+.2f} us per call (target <= +1 us)")
    try:
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.trace import NoOpTracerProvider

        from tools.telemetry import ToolTracer
    except ImportError:
        print("  (g) tracing: not measured (install the otel extra and opentelemetry-sdk)")
        return
    for label, provider in (("a no-op provider", NoOpTracerProvider()), ("the SDK's provider", TracerProvider())):
        traced = LocalToolRegistry(tracer=ToolTracer(provider))
        traced.register(add)
        b, c, _ = paired(base, sync_block(functools.partial(_call_dict, traced, payload)), number, repeat)
        print(f"  (g) with a ToolTracer on {label}: {c - b:+.2f} us per call (without a tracer: +0)")


def _call_dict(registry: LocalToolRegistry, payload: str) -> dict[str, Any]:
    return registry.call_tool_raw("add", payload).to_dict()


def cold_export_ms(*, strict: bool) -> float:
    """A truly cold export: a fresh registry of fresh tool classes, nothing cached yet."""
    registry = make_tools(200)
    start = time.perf_counter()
    registry.to_openai_tools(strict=strict)
    return (time.perf_counter() - start) * 1e3


if __name__ == "__main__":
    main()
