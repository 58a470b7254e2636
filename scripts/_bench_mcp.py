"""MCP part of ``scripts/bench_external.py`` (also runnable on its own).

Run: ``python scripts/_bench_mcp.py [--calls 300] [--spawns 5]``. Prints medians and
ratios against a baseline measured in the same run; no assertions.

* round trip over a persistent stdio session to an SDK-built server (``MCPServer`` with an
  ``echo`` tool): ours (``MCPToolset`` tool ``execute`` -> validation, thread hop to the
  toolset's loop, SDK client, envelope) against the SDK's own ``ClientSession.call_tool``
  awaited directly on a loop (target: ours adds under 10%);
* spawn-per-call (``MCPToolset(persistent=False)``): a fresh server process, handshake,
  call and shutdown per call, against ours over the persistent session.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

from tools.external.mcp import MCPToolset  # noqa: E402

SERVER = '''
from mcp.server.mcpserver import MCPServer

server = MCPServer("bench")


@server.tool()
def echo(text: str) -> str:
    """Return the text."""
    return text


server.run("stdio")
'''


async def _sdk_samples(script: Path, calls: int, warmup: int) -> list[float]:
    params = StdioServerParameters(command=sys.executable, args=[str(script)])
    samples: list[float] = []
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await session.list_tools()
        for i in range(warmup + calls):
            start = time.perf_counter()
            result = await session.call_tool("echo", {"text": f"m{i}"})
            elapsed = (time.perf_counter() - start) * 1000.0
            if result.is_error:
                raise RuntimeError("SDK baseline call failed")
            if i >= warmup:
                samples.append(elapsed)
    return samples


def _ours_samples(script: Path, calls: int, warmup: int) -> list[float]:
    samples: list[float] = []
    with MCPToolset([sys.executable, str(script)]) as toolset:
        echo = toolset.tool("echo")
        for i in range(warmup + calls):
            start = time.perf_counter()
            result = echo.execute(text=f"m{i}")
            elapsed = (time.perf_counter() - start) * 1000.0
            if not result.ok:
                raise RuntimeError(f"tooldeck call failed: {result}")
            if i >= warmup:
                samples.append(elapsed)
    return samples


def _spawn_samples(script: Path, spawns: int) -> list[float]:
    samples: list[float] = []
    with MCPToolset([sys.executable, str(script)], persistent=False) as toolset:
        echo = toolset.tool("echo")  # the listing itself spawns once
        for i in range(spawns):
            start = time.perf_counter()
            result = echo.execute(text=f"s{i}")
            samples.append((time.perf_counter() - start) * 1000.0)
            if not result.ok:
                raise RuntimeError(f"spawn-per-call failed: {result}")
    return samples


def run(calls: int = 300, spawns: int = 5) -> dict[str, float]:
    """Measure and print the MCP figures; return them for the glue script."""
    warmup = max(10, calls // 10)
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "bench_server.py"
        script.write_text(SERVER)
        # Interleave the two sides in rounds so machine noise hits both alike.
        sdk: list[float] = []
        ours: list[float] = []
        rounds = 3
        for _ in range(rounds):
            sdk += asyncio.run(_sdk_samples(script, calls // rounds, warmup))
            ours += _ours_samples(script, calls // rounds, warmup)
        spawn = _spawn_samples(script, spawns)
    figures = {
        "sdk_call_ms": statistics.median(sdk),
        "ours_call_ms": statistics.median(ours),
        "spawn_per_call_ms": statistics.median(spawn),
    }
    figures["overhead_ratio"] = figures["ours_call_ms"] / figures["sdk_call_ms"]
    figures["spawn_ratio"] = figures["spawn_per_call_ms"] / figures["ours_call_ms"]
    print("MCP round trip, persistent stdio session (median of %d calls):" % len(ours))
    print(f"  SDK ClientSession.call_tool      {figures['sdk_call_ms']:8.3f} ms  (baseline)")
    print(
        f"  MCPToolset tool.execute          {figures['ours_call_ms']:8.3f} ms  "
        f"x{figures['overhead_ratio']:.2f} of baseline "
        f"({(figures['overhead_ratio'] - 1) * 100:+.1f}%; target < +10%)"
    )
    print(
        f"  spawn-per-call (median of {len(spawn)})    {figures['spawn_per_call_ms']:8.1f} ms  "
        f"x{figures['spawn_ratio']:.0f} of a persistent call"
    )
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--spawns", type=int, default=5)
    args = parser.parse_args()
    run(args.calls, args.spawns)


if __name__ == "__main__":
    main()
