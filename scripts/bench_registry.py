"""The registry at scale: registration, exports of 10,000 tools, import times, in one run.

Run: ``python scripts/bench_registry.py [--quick]``. Prints medians and ratios against
baselines measured in the same run (alternating rounds where load drifts); no assertions.

(a) ``registry.register(func)`` for 1,000 plain functions against pydantic's
    ``TypeAdapter(func)`` for the same functions (target <= 1.2x); and 1,000 ``BaseTool``
    instances against ``TypeAdapter(RequestModel)``;
(b) a cached ``to_openai_tools()`` (plain and strict) for 100, 1,000 and 10,000 tools, with
    garbage collection enabled (target <= 10 ms at 10,000, linear), against a deep copy of the
    same definitions (what every cached export did before: a marshal round trip); a name set
    of 8 tools out of 10,000 (tool search);
(c) ``import orchestrator`` and ``import tools`` in a fresh interpreter (bytecode cache
    allowed, ``PYTHONDONTWRITEBYTECODE`` removed) against ``import pydantic``
    (target <= 3x), net of the bare interpreter's start.
"""

from __future__ import annotations

import argparse
import gc
import marshal
import os
import statistics
import subprocess
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_dispatch import Point, make_tools  # type: ignore[import-not-found]
from pydantic import BaseModel, Field, TypeAdapter, create_model

from tools import BaseTool, LocalToolRegistry

ROOT = Path(__file__).resolve().parent.parent


def functions(count: int, tag: str) -> list[Callable[..., Any]]:
    """``count`` distinct plain functions with three typed, documented parameters."""
    made = []
    for i in range(count):
        namespace: dict[str, Any] = {"Point": Point}
        source = f'''
def tool_{tag}_{i}(query: str, limit: int = 10, origin: Point | None = None) -> str:
    """Search things, kind {i}.

    Args:
        query: What to look for.
        limit: How many hits at most.
        origin: Where to start from.
    """
    return query
'''
        # Our own source text (distinct function objects), with annotations evaluated at
        # definition as in a module without ``from __future__ import annotations``.
        exec(compile(source, "<bench>", "exec", dont_inherit=True), namespace)
        made.append(namespace[f"tool_{tag}_{i}"])
    return made


def tool_instances(count: int, tag: str) -> list[BaseTool[Any, Any]]:
    """``count`` distinct ``BaseTool`` instances whose request models are already built."""
    made = []
    for i in range(count):
        model = create_model(
            f"Req{tag}{i}",
            query=(str, Field(description="What to look for.")),
            limit=(int, 10),
            origin=(Point | None, None),
        )

        def body(namespace: dict[str, Any], i: int = i) -> None:
            namespace["name"] = f"tool_{tag}_{i}"
            namespace["description"] = f"Search things, kind {i}."
            namespace["execute_internal"] = lambda self, request: request.query

        made.append(types.new_class(f"Tool{tag}{i}", (BaseTool[model, Any],), {}, body)())
    return made


def bench_registration(count: int, rounds: int) -> None:
    print(f"(a) registering {count:,} tools (median of {rounds} alternating rounds, fresh objects each)")
    ours, theirs, ratios = [], [], []
    instance_ours, instance_theirs = [], []
    for round_ in range(rounds):
        first, second = functions(count, f"a{round_}"), functions(count, f"b{round_}")
        start = time.perf_counter()
        for func in first:
            TypeAdapter(func)  # type: ignore[arg-type]  # pydantic validates calls of a function
        adapter = time.perf_counter() - start
        registry = LocalToolRegistry()
        start = time.perf_counter()
        for func in second:
            registry.register(func)
        registered = time.perf_counter() - start
        ours.append(registered)
        theirs.append(adapter)
        ratios.append(registered / adapter)
        instances = tool_instances(count, f"i{round_}")
        start = time.perf_counter()
        for instance in instances:
            TypeAdapter(instance.RequestModel)  # type: ignore[arg-type]  # set: built from the generic
        instance_theirs.append(time.perf_counter() - start)
        registry = LocalToolRegistry()
        start = time.perf_counter()
        for instance in instances:
            registry.register(instance)
        instance_ours.append(time.perf_counter() - start)
    print(
        f"    plain functions: register {statistics.median(ours) * 1e3:7.1f} ms, TypeAdapter(func) "
        f"{statistics.median(theirs) * 1e3:7.1f} ms: {statistics.median(ratios):.2f}x (target <= 1.2x)"
    )
    print(
        f"    BaseTool instances (models built beforehand): register "
        f"{statistics.median(instance_ours) / count * 1e6:.1f} us per tool, TypeAdapter(model) "
        f"{statistics.median(instance_theirs) / count * 1e6:.1f} us"
    )


def per_call_ms(fn: Callable[[], Any], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1e3)
    return statistics.median(samples)


def bench_exports(sizes: list[int], repeat: int) -> None:
    assert gc.isenabled()
    print(f"(b) cached to_openai_tools(), garbage collection enabled (median of {repeat})")
    registries: dict[int, LocalToolRegistry] = {}
    for size in sizes:
        registry = registries[size] = make_tools(size)
        for strict in (False, True):
            start = time.perf_counter()
            exported = registry.to_openai_tools(strict=strict)
            cold = (time.perf_counter() - start) * 1e3
            blob = marshal.dumps([_plain(d) for d in exported])
            cached = per_call_ms(lambda r=registry, s=strict: r.to_openai_tools(strict=s), repeat)  # type: ignore[misc]
            copied = per_call_ms(lambda b=blob: marshal.loads(b), max(3, repeat // 4))  # type: ignore[misc]
            label = "strict" if strict else "plain "
            target = "; target <= 10 ms" if size == 10_000 else ""
            print(
                f"    {size:>6,} tools {label}: cached {cached:8.3f} ms "
                f"({cached / size * 1e3:6.3f} us per tool{target}); deep copy of the same "
                f"(the old cached export) {copied:8.2f} ms; cold {cold:8.1f} ms"
            )
    largest = registries[sizes[-1]]
    names = [f"tool_{i}" for i in range(0, sizes[-1], max(1, sizes[-1] // 8))][:8]
    largest.to_openai_tools(names=names)
    subset = per_call_ms(lambda: largest.to_openai_tools(names=names), repeat)
    print(f"    8 tools out of {sizes[-1]:,} by name (tool search): cached {subset * 1e3:.1f} us")


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


IMPORTS = {
    "bare interpreter": "pass",
    "import pydantic": "import pydantic",
    "from pydantic import BaseModel": "from pydantic import BaseModel",
    "import tools": "import tools",
    "import orchestrator": "import orchestrator",
    "from orchestrator import OrchestratorService": "from orchestrator import OrchestratorService",
}


def bench_imports(rounds: int) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(ROOT)
    for code in IMPORTS.values():  # fill the bytecode caches once, as a user's first run does
        subprocess.run([sys.executable, "-c", code], check=True, env=env)
    samples: dict[str, list[float]] = {label: [] for label in IMPORTS}
    for _ in range(rounds):
        for label, code in IMPORTS.items():
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True, env=env)
            samples[label].append((time.perf_counter() - start) * 1e3)
    wall = {label: statistics.median(values) for label, values in samples.items()}
    bare, pydantic = wall["bare interpreter"], wall["import pydantic"]
    print(f"(c) imports in a fresh interpreter (median of {rounds} alternating rounds; bare interpreter {bare:.1f} ms)")
    for label in list(IMPORTS)[1:]:
        net = wall[label] - bare
        ratio = net / max(pydantic - bare, 1e-9)
        target = " (target <= 3x)" if label == "import orchestrator" else ""
        print(
            f"    {label:<46} {wall[label]:7.1f} ms wall, {net:7.1f} ms over the bare interpreter: "
            f"{ratio:5.2f}x import pydantic{target}"
        )


class _Probe(BaseModel):
    """Keeps pydantic's BaseModel imported here (the baselines import it too)."""


def main() -> None:
    """Run every measurement and print a report."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="smaller sizes, fewer repeats (a smoke run)")
    args = parser.parse_args()
    bench_registration(200 if args.quick else 1_000, 3 if args.quick else 5)
    bench_exports([100, 1_000] if args.quick else [100, 1_000, 10_000], 5 if args.quick else 21)
    bench_imports(3 if args.quick else 9)


if __name__ == "__main__":
    main()
