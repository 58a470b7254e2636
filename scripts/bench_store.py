"""Benchmark the tool store and the ``tooldeck`` CLI on a registry of N tools.

Run: ``python scripts/bench_store.py [--tools 500] [--repeat 15]``

Prints medians, each with a baseline measured in the same run:

* ``RegistryStore.load_merged()`` of the N-tool project registry vs ``json.loads`` of the same
  file (target: < 20 ms for 500 tools);
* ``RegistryService.build_tools()`` for N tools vs ``load_merged()`` (target: < 200 ms);
* registering the built tools in a ``LocalToolRegistry`` (informative: the registry checks
  every schema against the JSON-schema meta-schema);
* ``tooldeck list`` end to end, piped and ``--json``, vs ``python -c pass`` and vs
  ``python -c "import tools"`` (target: < 1 s for 500 tools).

The machine may be shared: in-process figures are medians of CPU time (``process_time``);
CLI runs print the median wall time with the children's CPU time, so a loaded machine shows
up as wall >> CPU.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tools.registry import LocalToolRegistry  # noqa: E402
from tools.store import Registry, RegistryService, RegistryStore  # noqa: E402


def registry_doc(count: int) -> dict[str, Any]:
    """N tools of every adapter type, with real-sized schemas."""
    tools: dict[str, Any] = {}
    for i in range(count):
        kind = ("http", "cli", "mcp", "binary")[i % 4]
        entry: dict[str, Any] = {
            "adapter_type": kind,
            "description": f"Tool number {i}: looks things up and reports them.",
            "capabilities": [f"cap_{i}", "lookup"],
        }
        schema = {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What to look for."},
                "limit": {"type": "integer", "minimum": 1, "maximum": 100},
                "tags": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["query"],
        }
        if kind == "http":
            entry["http"] = {
                "base_url": "http://127.0.0.1:9",
                "endpoints": {
                    "search": {"path": "/items", "query": ["query", "limit"], "parameters": schema},
                    "get": {"path": "/items/{id}"},
                },
            }
            entry["auth"] = {"env_var": "BENCH_KEY", "kind": "header", "header": "X-Api-Key"}
        elif kind == "cli":
            entry["cli"] = {"command": ["echo"], "actions": {"say": {"args": ["{query}", ["-n", "{limit}"]]}}}
        elif kind == "mcp":
            entry["mcp"] = {"command": ["python", "-m", "some_server"]}
            entry["remote_tool"] = f"tool_{i}"
            entry["parameters"] = schema
        else:
            entry["binary"] = {"path": f"/opt/tools/bin/tool_{i}"}
            entry["parameters"] = schema
        tools[f"tool_{i}"] = entry
    return {"version": 1, "tools": tools}


def median_ms(fn: Callable[[], object], repeat: int) -> float:
    """Median CPU milliseconds of ``fn`` (process time: robust on a shared, loaded machine)."""
    times = []
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        times.append((time.process_time() - t0) * 1000)
    return statistics.median(times)


def run_ms(argv: list[str], cwd: Path, env: dict[str, str], repeat: int) -> tuple[float, float]:
    """Median wall and CPU milliseconds of a subprocess."""
    walls, cpus = [], []
    for _ in range(repeat):
        before = os.times()
        t0 = time.perf_counter()
        subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, check=True)
        walls.append((time.perf_counter() - t0) * 1000)
        after = os.times()
        cpus.append(
            (after.children_user + after.children_system - before.children_user - before.children_system) * 1000
        )
    return statistics.median(walls), statistics.median(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    n, repeat = args.tools, args.repeat
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "project"
        path = project / ".tooldeck" / "registry.json"
        path.parent.mkdir(parents=True)
        text = Registry.from_data(registry_doc(n)).to_json_text()
        path.write_text(text)
        store = RegistryStore(Path(tmp) / "cfg" / "tooldeck" / "registry.json", path)  # the CLI runs see it too
        store.trust_project()  # a project file is used once the user trusts it (tooldeck trust)
        print(f"registry: {n} tools, {len(text) / 1024:.0f} KiB")

        base = median_ms(lambda: json.loads(path.read_text()), repeat)
        load = median_ms(store.load_merged, repeat)
        print(
            f"load_merged():           {load:7.2f} ms cpu  (json.loads of the file: {base:.2f} ms; x{load / base:.1f})"
        )

        service = RegistryService(store, env={"PATH": os.defpath})
        build = median_ms(service.build_tools, repeat)
        print(f"build_tools():           {build:7.2f} ms cpu  (load_merged: {load:.2f} ms; x{build / load:.1f})")

        def register() -> None:
            registry = LocalToolRegistry()
            for tool in service.build_tools():
                registry.register(tool)

        reg = median_ms(register, max(3, repeat // 3))
        print(f"build + register():      {reg:7.2f} ms cpu  (informative: meta-schema check per registration)")
        service.close()

        env = {**os.environ, "PYTHONPATH": str(ROOT), "HOME": tmp, "XDG_CONFIG_HOME": f"{tmp}/cfg"}
        py = sys.executable
        bare, bare_cpu = run_ms([py, "-c", "pass"], project, env, repeat)
        imp, imp_cpu = run_ms([py, "-c", "import tools"], project, env, repeat)
        cli, cli_cpu = run_ms([py, "-m", "tools.cli", "list"], project, env, repeat)
        cli_json, json_cpu = run_ms([py, "-m", "tools.cli", "list", "--json"], project, env, repeat)
        print(f"python -c pass:          {bare:7.1f} ms  (cpu {bare_cpu:.0f} ms)")
        print(f"python -c 'import tools':{imp:7.1f} ms  (cpu {imp_cpu:.0f} ms)")
        print(f"tooldeck list:           {cli:7.1f} ms  (cpu {cli_cpu:.0f} ms; x{cli / bare:.1f} python -c pass)")
        print(f"tooldeck list --json:    {cli_json:7.1f} ms  (cpu {json_cpu:.0f} ms; x{cli_json / bare:.1f} pass)")
        verdicts = {
            "load_merged < 20 ms cpu": load < 20,
            "build_tools < 200 ms cpu": build < 200,
            "tooldeck list < 1 s": cli < 1000,
        }
        print("targets: " + ", ".join(f"{k}: {'ok' if v else 'MISSED'}" for k, v in verdicts.items()))


if __name__ == "__main__":
    main()
