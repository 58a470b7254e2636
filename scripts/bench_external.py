"""Benchmark subprocess tool binaries and the executor service.

Run: ``python scripts/bench_external.py [--calls 30] [--binaries 100]``

Prints medians and ratios against a baseline measured in the same run:

* spawn overhead of a trivial Python binary: ``ToolExecutorService.execute`` vs a bare
  ``subprocess.run`` of the same script (target: under 100 ms per call in total);
* spawn-per-call cost through a ``LocalToolRegistry``, and for a binary built with
  ``tools.external.binary.serve`` (which imports tooldeck in the child);
* cold scan of N binaries (target under 5 s) and a scan with a warm schema cache (< 100 ms);
* hot-add detection latency with the default 0.5 s poll (target under 2 s).

At the end it calls ``scripts/_bench_mcp.py``'s ``run()`` when that module is importable.
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

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tools import LocalToolRegistry  # noqa: E402
from tools.external import ToolExecutorService  # noqa: E402

TRIVIAL = """
import json, sys
if sys.argv[1:] == ["--schema"]:
    print(json.dumps({"description": "Add one.", "input_schema": {"type": "object",
        "properties": {"n": {"type": "integer"}}, "required": ["n"]}}))
    sys.exit(0)
print(json.dumps({"n": json.load(sys.stdin)["n"] + 1}))
"""

SERVED = f"""
import sys
sys.path.insert(0, {str(ROOT)!r})
from typing import Any
from tools import BaseTool
from tools.external.binary import serve

class AddOne(BaseTool[dict[str, Any], Any]):
    name = "served"
    description = "Add one."
    parameters = {{
        "type": "object", "properties": {{"n": {{"type": "integer"}}}}, "required": ["n"]
    }}
    def execute_internal(self, request: dict[str, Any]) -> Any:
        return {{"n": request["n"] + 1}}

sys.exit(serve(AddOne()))
"""


def _write(path: Path, body: str, flags: str = "") -> Path:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(f"#!{sys.executable}{' ' + flags if flags else ''}\n{body}")
    tmp.chmod(0o755)
    os.replace(tmp, path)
    return path


def _median_ms(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def bench_spawn(work: Path, calls: int) -> None:
    bin_dir = work / "spawn"
    bin_dir.mkdir()
    script = _write(bin_dir / "trivial", TRIVIAL)
    _write(bin_dir / "served", SERVED)
    payload = json.dumps({"n": 1}).encode()

    def bare() -> None:
        subprocess.run([str(script)], input=payload, capture_output=True, timeout=30, check=True)

    with ToolExecutorService(bin_dir, env=dict(os.environ), poll_interval=0) as service:
        registry = LocalToolRegistry()
        for tool in service.tools():
            registry.register(tool)
        for _ in range(3):  # warm the page cache
            bare()
            service.execute("trivial", None, {"n": 1})
        base = _median_ms(bare, calls)
        ours = _median_ms(lambda: service.execute("trivial", None, {"n": 1}), calls)
        reg = _median_ms(lambda: registry.call_tool("trivial", n=1), calls)
        served = _median_ms(lambda: registry.call_tool("served", n=1), max(5, calls // 3))
    print(f"spawn per call (trivial Python binary, median of {calls}):")
    print(f"  baseline subprocess.run        {base:8.1f} ms")
    print(
        f"  ToolExecutorService.execute    {ours:8.1f} ms  ratio {ours / base:5.2f}  "
        f"overhead {ours - base:+6.1f} ms  (target total < 100 ms)"
    )
    print(f"  registry.call_tool             {reg:8.1f} ms  ratio {reg / base:5.2f}")
    print(f"  serve()-built binary (imports tooldeck) {served:8.1f} ms  ratio {served / base:5.2f}")


def bench_scan(work: Path, count: int) -> None:
    bin_dir = work / "many"
    bin_dir.mkdir()
    for i in range(count):
        _write(bin_dir / f"tool_{i:03d}", TRIVIAL.replace("Add one.", f"Tool {i}."), flags="-S")
    cache = work / "schemas.json"
    # Baseline: asking every binary for --schema one after the other.
    t0 = time.perf_counter()
    for path in sorted(bin_dir.iterdir())[:10]:
        subprocess.run([str(path), "--schema"], capture_output=True, timeout=30, check=True)
    serial_each = (time.perf_counter() - t0) / 10
    t0 = time.perf_counter()
    with ToolExecutorService(bin_dir, cache_path=cache, poll_interval=0) as service:
        cold = time.perf_counter() - t0
        assert len(service.tools()) == count
    t0 = time.perf_counter()
    with ToolExecutorService(bin_dir, cache_path=cache, poll_interval=0) as service:
        warm = time.perf_counter() - t0
        assert len(service.tools()) == count
    print(f"scan of {count} binaries:")
    print(f"  baseline serial --schema (extrapolated) {serial_each * count * 1000:8.1f} ms")
    print(
        f"  cold scan (thread pool)         {cold * 1000:8.1f} ms  ratio "
        f"{cold / (serial_each * count):5.2f}  (target < 5000 ms)"
    )
    print(f"  warm schema cache               {warm * 1000:8.1f} ms  (target < 100 ms)")


def bench_hot_add(work: Path, rounds: int = 5) -> None:
    bin_dir = work / "hot"
    bin_dir.mkdir()
    latencies = []
    with ToolExecutorService(bin_dir, poll_interval=0.5) as service:
        for i in range(rounds):
            name = f"hot_{i}"
            t0 = time.perf_counter()
            _write(bin_dir / name, TRIVIAL, flags="-S")
            while service.tool(name) is None:
                time.sleep(0.005)
                if time.perf_counter() - t0 > 10:
                    raise SystemExit(f"{name} was not detected within 10 s")
            latencies.append((time.perf_counter() - t0) * 1000)
    print(
        f"hot-add detection (poll 0.5 s, {rounds} adds): "
        f"median {statistics.median(latencies):.0f} ms, max {max(latencies):.0f} ms"
        "  (target < 2000 ms)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--binaries", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tooldeck-bench-") as tmp:
        work = Path(tmp)
        bench_spawn(work, args.calls)
        bench_scan(work, args.binaries)
        bench_hot_add(work)
    try:
        import _bench_mcp  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        print("(MCP benchmark skipped: scripts/_bench_mcp.py is not importable)")
    else:
        _bench_mcp.run()


if __name__ == "__main__":
    main()
