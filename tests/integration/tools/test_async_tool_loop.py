"""Async tools that opt into the shared loop keep their loop-bound clients across callers.

A real ``httpx.AsyncClient`` (a connection pool bound to the loop of its first use) talks
to a real local HTTP server; the tool (``run_on_shared_loop = True``) is called alternately
from sync code and from async code, 50 times, and every call must succeed over the same
client. Tools that do not opt in run on their async caller's loop (tests/unit/tools/
test_async_on_caller_loop.py).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest
from pydantic import BaseModel

from tools import BaseTool, LocalToolRegistry


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: the pool reuses its connection

    def do_GET(self) -> None:
        body = self.path.encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def server_url() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


class EchoRequest(BaseModel):
    text: str


class PooledEcho(BaseTool[EchoRequest, str]):
    """Holds one AsyncClient and one asyncio.Lock for its whole life, as real tools do."""

    name = "pooled_echo"
    description = "Echo text through a local HTTP server."
    run_on_shared_loop = True  # its client and lock are bound to one loop

    def __init__(self, base_url: str) -> None:
        self.client = httpx.AsyncClient(base_url=base_url, timeout=5)
        self.lock: asyncio.Lock | None = None
        self.loops: set[int] = set()

    async def execute_internal(self, request: EchoRequest) -> str:
        if self.lock is None:
            self.lock = asyncio.Lock()  # bound to the loop of its first use
        async with self.lock:
            self.loops.add(id(asyncio.get_running_loop()))
            response = await self.client.get(f"/{request.text}")
            return response.text


def test_alternating_sync_and_async_callers_share_one_loop(server_url: str) -> None:
    tool = PooledEcho(server_url)
    registry = LocalToolRegistry()
    registry.register(tool)
    results = []
    for i in range(50):
        if i % 2:
            results.append(registry.call_tool("pooled_echo", text=f"s{i}"))
        else:  # a fresh asyncio.run each time: the caller's loop comes and goes
            results.append(asyncio.run(registry.acall_tool("pooled_echo", text=f"a{i}")))
    failures = [r.to_dict() for r in results if not r.ok]
    assert failures == []
    assert [r.data for r in results] == [f"/{'s' if i % 2 else 'a'}{i}" for i in range(50)]
    assert len(tool.loops) == 1  # every call ran on the one long-lived tool loop


def test_sync_calls_from_inside_a_running_loop_and_direct_execute(server_url: str) -> None:
    tool = PooledEcho(server_url)
    registry = LocalToolRegistry()
    registry.register(tool)

    async def app() -> list[Any]:
        out = []
        for i in range(10):
            out.append(registry.call_tool("pooled_echo", text=f"x{i}"))  # sync API inside async code
            out.append(await tool.aexecute(text=f"y{i}"))
            out.append(tool.execute(text=f"z{i}"))
        return out

    results = asyncio.run(app())
    assert all(r.ok for r in results), [r.to_dict() for r in results if not r.ok]
    assert len(tool.loops) == 1


def test_an_async_tool_timeout_cancels_the_coroutine() -> None:
    cancelled = threading.Event()

    class Slow(BaseTool[EchoRequest, str]):
        name = "slow"
        description = "Never finishes."
        timeout = 0.2

        async def execute_internal(self, request: EchoRequest) -> str:
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                cancelled.set()
                raise
            return "late"

    registry = LocalToolRegistry()
    registry.register(Slow())
    result = registry.call_tool("slow", text="a")
    assert result.error is not None and result.error.type == "timeout"
    assert cancelled.wait(5)  # a coroutine can be stopped: nothing is left running
    cancelled.clear()
    result = asyncio.run(registry.acall_tool("slow", text="b"))
    assert result.error is not None and result.error.type == "timeout"
    assert cancelled.wait(5)
