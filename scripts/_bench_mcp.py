"""MCP part of ``scripts/bench_external.py`` (also runnable on its own).

Run: ``python scripts/_bench_mcp.py [--calls 300] [--spawns 5] [--rounds 40]``. Prints medians
and ratios against baselines measured in the same run; no assertions.

Two ways of measuring a call over a persistent stdio session to an SDK-built server
(``MCPServer`` with an ``echo`` tool), each variant with its own server process:

* **Blocks of 50 calls inside one running event loop** (how an application uses it). Every
  round runs one block per variant, in a rotating order; the figure is the median over the
  rounds of the per-call time. Baseline: the SDK's own ``ClientSession.call_tool`` awaited
  in the loop (target: ours within 10%). The variants split the cost:

  - ``mcp.Client.call_tool`` (the SDK client our session uses, over our stdio transport);
  - ``MCPToolset.acall_remote`` on a toolset opened in the loop (``async with``; our
    session wrapper: deadline, reconnect, error mapping) -> the *MCP wrapper* overhead is
    this minus ``mcp.Client``;
  - ``MCPTool.aexecute`` (plus validation against ``inputSchema`` and the envelope) and
    ``LocalToolRegistry.acall_tool`` (plus breaker, retry and metrics) -> the *core*
    overhead is these minus ``acall_remote``;
  - ``acall_tool`` on a toolset *not* opened in the loop (``async with``): every call hops
    to the toolset's own loop thread and back;
  - sync callers in a worker thread (``call_remote``, ``execute``, ``call_tool``) of a
    toolset used the sync way: they hop to its loop thread and back too.

* **One-call alternation** (the older figure): the SDK session is driven with
  ``loop.run_until_complete`` per call from a plain thread, ours with a sync ``execute``;
  calls alternate so machine noise hits both. Starting the SDK loop for every call is what
  makes ours look faster here: it is not how an async application uses either.

Then ``protocol="auto"`` (newest revision, 2026-07-28) and spawn-per-call
(``MCPToolset(persistent=False)``), for information.
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

from tools import LocalToolRegistry  # noqa: E402
from tools.external.mcp import MCPToolset  # noqa: E402
from tools.external.mcp._connect import ClientOptions, MCPServerParams, make_client  # noqa: E402

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


BLOCK = 50


async def _blocks(script: Path, rounds: int) -> dict[str, list[float]]:
    """Per-call milliseconds of each variant, one sample per round (a block of 50 calls)."""
    options = ClientOptions(params=MCPServerParams(command=(sys.executable, str(script))))
    command = [sys.executable, str(script)]
    async with (
        _sdk_session(script) as session,
        make_client(options) as client,
        MCPToolset(command) as here,  # opened in this loop: calls run in place
    ):
        away = MCPToolset(command)  # not opened here: its session lives on its own thread
        try:
            echo = (await here.atools())[0]
            away_echo = (await away.atools())[0]
            registry, away_registry = LocalToolRegistry(), LocalToolRegistry()
            registry.register(echo)
            away_registry.register(away_echo)

            async def sdk(text: str) -> None:
                await session.call_tool("echo", {"text": text})

            async def sdk_client(text: str) -> None:
                await client.call_tool("echo", {"text": text})

            async def wrapper(text: str) -> None:
                await here.acall_remote("echo", {"text": text}, timeout=30)

            async def tool_async(text: str) -> None:
                _check(await echo.aexecute(text=text))

            async def registry_async(text: str) -> None:
                _check(await registry.acall_tool("echo", text=text))

            async def away_async(text: str) -> None:
                _check(await away_registry.acall_tool("echo", text=text))

            def in_thread(call: Any) -> Any:
                async def block(text: str) -> None:
                    def run() -> None:
                        for i in range(BLOCK):
                            call(f"{text}{i}")

                    await asyncio.to_thread(run)

                block.per_block = True  # type: ignore[attr-defined]
                return block

            variants: dict[str, Any] = {
                "SDK ClientSession.call_tool": sdk,
                "SDK mcp.Client.call_tool": sdk_client,
                "MCPToolset.acall_remote": wrapper,
                "MCPTool.aexecute": tool_async,
                "LocalToolRegistry.acall_tool": registry_async,
                "acall_tool, toolset not opened here": away_async,
                "sync MCPToolset.call_remote": in_thread(lambda t: away.call_remote("echo", {"text": t}, timeout=30)),
                "sync MCPTool.execute": in_thread(lambda t: _check(away_echo.execute(text=t))),
                "sync LocalToolRegistry.call_tool": in_thread(
                    lambda t: _check(away_registry.call_tool("echo", text=t))
                ),
            }
            samples: dict[str, list[float]] = {name: [] for name in variants}
            names = list(variants)
            for warm in range(2):
                for name in names:
                    await _block(variants[name], f"w{warm}")
            for r in range(rounds):
                order = names[r % len(names) :] + names[: r % len(names)]
                for name in order:
                    samples[name].append(await _block(variants[name], f"r{r}"))
            return samples
        finally:
            await away.aclose()


async def _block(variant: Any, text: str) -> float:
    start = time.perf_counter()
    if getattr(variant, "per_block", False):
        await variant(text)
    else:
        for i in range(BLOCK):
            await variant(f"{text}{i}")
    return (time.perf_counter() - start) * 1000.0 / BLOCK


def _print_blocks(samples: dict[str, list[float]]) -> dict[str, float]:
    """Print medians, and ratios to the baseline taken per round (paired: blocks of one
    round run back to back, so load from other processes hits them alike)."""
    base_name = "SDK ClientSession.call_tool"
    base = samples[base_name]
    medians = {name: statistics.median(values) for name, values in samples.items()}
    ratios = {
        name: statistics.median(v / b for v, b in zip(values, base, strict=True)) for name, values in samples.items()
    }
    print(
        f"MCP calls in blocks of {BLOCK} inside one running event loop "
        f"({len(base)} rounds; median ms/call, median of the per-round ratios to the baseline):"
    )
    for name, value in medians.items():
        note = "(baseline)" if name == base_name else f"x{ratios[name]:.3f} ({(ratios[name] - 1) * 100:+.1f}%)"
        print(f"  {name:36s} {value:8.3f} ms/call  {note}")

    def paired_us(a: str, b: str) -> float:
        return statistics.median(x - y for x, y in zip(samples[a], samples[b], strict=True)) * 1000

    print(
        "  per-round differences (median, us/call): MCP wrapper (acall_remote - mcp.Client) "
        f"{paired_us('MCPToolset.acall_remote', 'SDK mcp.Client.call_tool'):+.0f}; core: aexecute - "
        f"acall_remote {paired_us('MCPTool.aexecute', 'MCPToolset.acall_remote'):+.0f}, acall_tool - "
        f"acall_remote {paired_us('LocalToolRegistry.acall_tool', 'MCPToolset.acall_remote'):+.0f}; "
        "hop to the toolset's loop thread (not opened here - opened here) "
        f"{paired_us('acall_tool, toolset not opened here', 'LocalToolRegistry.acall_tool'):+.0f}"
    )
    return {**medians, **{f"ratio[{name}]": ratio for name, ratio in ratios.items()}}


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


def run(calls: int = 300, spawns: int = 5, rounds: int = 40) -> dict[str, float]:
    """Measure and print the MCP figures; return them for the glue script."""
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "bench_server.py"
        script.write_text(SERVER)
        blocks = _print_blocks(asyncio.run(_blocks(script, rounds)))
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
    f.update({f"block_ms[{name}]": value for name, value in blocks.items()})
    print(f"MCP one-call alternation, sync callers (medians of {len(ours)} calls):")
    print(f"  SDK ClientSession.call_tool via run_until_complete {f['sdk_call_ms']:8.3f} ms  (baseline)")
    print(
        f"  MCPToolset tool.execute              {f['ours_call_ms']:8.3f} ms  "
        f"x{f['overhead_ratio']:.3f} ({(f['overhead_ratio'] - 1) * 100:+.1f}%)"
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
    parser.add_argument("--rounds", type=int, default=40, help="blocks of 50 calls per variant")
    args = parser.parse_args()
    run(args.calls, args.spawns, args.rounds)


if __name__ == "__main__":
    main()
