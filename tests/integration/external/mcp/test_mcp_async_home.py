"""MCPToolset used from async code: the session in the application's loop, one session only."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable
from typing import Any

import pytest

pytest.importorskip("mcp")

from orchestrator.graph import ToolsNode
from tools import LocalToolRegistry
from tools.errors import ToolDefinitionError
from tools.external.mcp import MCPTool, MCPToolset

pytestmark = pytest.mark.mcp


def _mcp_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("tooldeck-mcp")]


def _tool(tools: list[MCPTool], name: str) -> MCPTool:
    return next(tool for tool in tools if tool.remote_name == name)


def test_opened_in_the_loop_calls_run_in_place(sdk_server_cmd: list[str], gone: Callable[[int], bool]) -> None:
    async def main() -> tuple[int, list[Any]]:
        async with MCPToolset(sdk_server_cmd, call_timeout=20) as toolset:
            tools = await toolset.atools()
            echo, pid = _tool(tools, "echo"), _tool(tools, "pid")
            registry = LocalToolRegistry()
            registry.register(echo)
            registry.register(pid)
            seen = [
                (await echo.aexecute(text="a")).data["result"],
                (await registry.acall_tool("echo", text="b")).data["result"],
                # a sync caller in another thread hops into this loop: same session, same server
                (await asyncio.to_thread(echo.execute, text="c")).data["result"],
            ]
            async_pid = (await pid.aexecute()).data["result"]
            thread_pid = (await asyncio.to_thread(pid.execute)).data["result"]
            assert async_pid == thread_pid == toolset.server_pid
            assert _mcp_threads() == []  # no private loop thread: the session lives here
            return async_pid, seen

    server_pid, seen = asyncio.run(main())
    assert seen == ["a", "b", "c"]
    assert gone(server_pid)


def test_a_sync_call_on_the_serving_loop_is_refused_not_a_deadlock(sdk_server_cmd: list[str]) -> None:
    async def main() -> Any:
        async with MCPToolset(sdk_server_cmd, call_timeout=20) as toolset:
            echo = _tool(await toolset.atools(), "echo")
            refused = echo.execute(text="x")  # blocks this loop: must answer at once
            assert (await echo.aexecute(text="still fine")).ok
            return refused

    refused = asyncio.run(main())
    assert refused.error is not None
    assert refused.error.type == "execution_error"
    assert "await tool.aexecute" in refused.error.message


def test_tools_node_ainvoke_runs_calls_on_the_loop(sdk_server_cmd: list[str]) -> None:
    async def main() -> dict[str, Any]:
        async with MCPToolset(sdk_server_cmd, call_timeout=20) as toolset:
            registry = LocalToolRegistry()
            for tool in await toolset.atools():
                registry.register(tool)
            calls = [
                {"id": f"c{i}", "type": "function", "function": {"name": "echo", "arguments": f'{{"text": "{i}"}}'}}
                for i in range(3)
            ]
            with ToolsNode(registry) as node:
                return await node.ainvoke({"messages": [{"role": "assistant", "tool_calls": calls}]})

    update = asyncio.run(main())
    contents = [json.loads(m["content"]) for m in update["messages"]]
    assert [(c["status"], c["data"]) for c in contents] == [("success", {"result": str(i)}) for i in range(3)]


def test_opening_in_a_loop_after_sync_use_restarts_the_server_there(
    sdk_server_cmd: list[str], gone: Callable[[int], bool]
) -> None:
    toolset = MCPToolset(sdk_server_cmd, call_timeout=20)
    try:
        pid = toolset.tool("pid")  # listed synchronously: a private loop thread and a server
        first = pid.execute().data["result"]
        assert _mcp_threads()

        async def main() -> int:
            await toolset.aopen()
            return int((await pid.aexecute()).data["result"])

        second = asyncio.run(main())
        assert second != first
        assert gone(first)
        assert not _mcp_threads()
        # that loop has ended, and its session with it; sync calls get a loop thread again
        assert gone(second)
        third = pid.execute().data["result"]
        assert third not in (first, second)
    finally:
        toolset.close()


def test_a_second_loop_cannot_take_a_served_session(sdk_server_cmd: list[str]) -> None:
    async def main() -> None:
        async with MCPToolset(sdk_server_cmd, call_timeout=20) as toolset:
            echo = _tool(await toolset.atools(), "echo")
            other_loop_error: list[BaseException] = []

            def other() -> None:
                async def take() -> None:
                    await toolset.aopen()

                try:
                    asyncio.run(take())
                except ToolDefinitionError as exc:
                    other_loop_error.append(exc)

            await asyncio.to_thread(other)
            assert other_loop_error and "another event loop" in str(other_loop_error[0])
            # a call from another loop hops into the serving loop
            hopped = await asyncio.to_thread(lambda: asyncio.run(echo.aexecute(text="hop")))
            assert hopped.data == {"result": "hop"}

    asyncio.run(main())


def test_without_opening_async_calls_use_the_toolsets_loop(sdk_server_cmd: list[str]) -> None:
    with MCPToolset(sdk_server_cmd, call_timeout=20) as toolset:
        echo = toolset.tool("echo")

        async def main() -> list[Any]:
            sync_on_loop = echo.execute(text="sync")  # not served from this loop: works
            return [(await echo.aexecute(text="async")).data, sync_on_loop.data]

        assert asyncio.run(main()) == [{"result": "async"}, {"result": "sync"}]
        closed_after = toolset.tool("pid").execute()
        assert closed_after.ok
    late = echo.execute(text="late")
    assert late.error is not None and "closed" in late.error.message
