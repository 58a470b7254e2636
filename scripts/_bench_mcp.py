"""MCP part of ``scripts/bench_external.py`` (also runnable on its own).

Run: ``python scripts/_bench_mcp.py [--calls 300] [--spawns 5]``. Prints medians and
ratios against a baseline measured in the same run; no assertions.

* round trip over a persistent stdio session to an SDK-built server (``MCPServer`` with an
  ``echo`` tool): ours (``MCPToolset`` tool ``execute``: validation, hop to the toolset's
  loop thread, SDK client, envelope) against the SDK's own ``ClientSession.call_tool``
  awaited directly on a loop in this thread (target: ours adds under 10%). Both speak
  the same protocol revision (the ``initialize`` handshake), each to its own server
  process from the same script, and their calls alternate so machine noise hits both;
* the same with ``protocol="auto"`` (newest revision, 2026-07-28), for information;
* spawn-per-call (``MCPToolset(persistent=False)``): a fresh server, handshake, call and
  shutdown per call, against a persistent call.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

from tools.external.mcp import MCPToolset  # noqa: E402

SERVER = '''
import logging
from mcp.server.mcpserver import MCPServer

server = MCPServer("bench")


@server.tool()
def echo(text: str) -> str:
    """Return the text."""
    return text


logging.disable(logging.INFO)
server.run("stdio")
'''


@asynccontextmanager
async def _sdk_session(script: Path) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=sys.executable, args=[str(script)])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await session.list_tools()
        yield session


class _HeldSession:
    """The SDK session kept open by a task on ``loop``; calls run with run_until_complete."""

    def __init__(self, loop: asyncio.AbstractEventLoop, script: Path) -> None:
        self._loop = loop
        self._stop = asyncio.Event()
        self._ready = asyncio.Event()
        self.session: Any = None
        self._task = loop.create_task(self._own(script))
        loop.run_until_complete(self._ready.wait())

    async def _own(self, script: Path) -> None:
        async with _sdk_session(script) as session:
            self.session = session
            self._ready.set()
            await self._stop.wait()

    def call(self, text: str) -> None:
        result = self._loop.run_until_complete(self.session.call_tool("echo", {"text": text}))
        if result.is_error:
            raise RuntimeError("SDK baseline call failed")

    def close(self) -> None:
        self._stop.set()
        self._loop.run_until_complete(self._task)


def _timed(func: Any, *args: Any) -> float:
    start = time.perf_counter()
    func(*args)
    return (time.perf_counter() - start) * 1000.0


def _interleaved(script: Path, calls: int, protocol: Literal["auto", "legacy"]) -> tuple[list[float], list[float]]:
    """(SDK samples, ours samples), alternating one call each."""
    loop = asyncio.new_event_loop()
    held = _HeldSession(loop, script)
    sdk: list[float] = []
    ours: list[float] = []
    try:
        with MCPToolset([sys.executable, str(script)], protocol=protocol) as toolset:
            echo = toolset.tool("echo")

            def call_ours(text: str) -> None:
                if not echo.execute(text=text).ok:
                    raise RuntimeError("tooldeck call failed")

            warmup = max(10, calls // 10)
            for i in range(warmup + calls):
                first, second = (held.call, call_ours) if i % 2 else (call_ours, held.call)
                a, b = _timed(first, f"m{i}"), _timed(second, f"m{i}")
                if i >= warmup:
                    sdk.append(a if first is held.call else b)
                    ours.append(b if first is held.call else a)
    finally:
        held.close()
        loop.close()
    return sdk, ours


def _check(result: Any) -> None:
    if not result.ok:
        raise RuntimeError(f"tooldeck call failed: {result}")


def _spawn_samples(script: Path, spawns: int) -> list[float]:
    samples: list[float] = []
    with MCPToolset([sys.executable, str(script)], persistent=False) as toolset:
        echo = toolset.tool("echo")  # the listing itself spawns once
        for _ in range(spawns):
            samples.append(_timed(lambda: _check(echo.execute(text="spawn"))))
    return samples


def run(calls: int = 300, spawns: int = 5) -> dict[str, float]:
    """Measure and print the MCP figures; return them for the glue script."""
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "bench_server.py"
        script.write_text(SERVER)
        sdk, ours = _interleaved(script, calls, "legacy")
        sdk_modern, ours_modern = _interleaved(script, calls // 2, "auto")
        spawn = _spawn_samples(script, spawns)
    f = {
        "sdk_call_ms": statistics.median(sdk),
        "ours_call_ms": statistics.median(ours),
        "sdk_call_ms_2": statistics.median(sdk_modern),
        "ours_auto_call_ms": statistics.median(ours_modern),
        "spawn_per_call_ms": statistics.median(spawn),
    }
    f["overhead_ratio"] = f["ours_call_ms"] / f["sdk_call_ms"]
    f["auto_ratio"] = f["ours_auto_call_ms"] / f["sdk_call_ms_2"]
    f["spawn_ratio"] = f["spawn_per_call_ms"] / f["ours_call_ms"]
    print(f"MCP round trip over a persistent stdio session (medians of {len(ours)} calls):")
    print(f"  SDK ClientSession.call_tool          {f['sdk_call_ms']:8.3f} ms  (baseline)")
    print(
        f"  MCPToolset tool.execute              {f['ours_call_ms']:8.3f} ms  "
        f"x{f['overhead_ratio']:.3f} ({(f['overhead_ratio'] - 1) * 100:+.1f}%; target < +10%)"
    )
    print(
        f"  MCPToolset protocol='auto'           {f['ours_auto_call_ms']:8.3f} ms  "
        f"x{f['auto_ratio']:.3f} of its own baseline run ({f['sdk_call_ms_2']:.3f} ms)"
    )
    print(
        f"  spawn-per-call (median of {len(spawn)})       {f['spawn_per_call_ms']:8.1f} ms  "
        f"x{f['spawn_ratio']:.0f} of a persistent call"
    )
    return f


def main() -> None:
    parser = argparse.ArgumentParser(description="MCP client benchmark.")
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--spawns", type=int, default=5)
    args = parser.parse_args()
    run(args.calls, args.spawns)


if __name__ == "__main__":
    main()
