"""A small MCP server built with the SDK's MCPServer, for tooldeck's MCP client tests.

Run as ``python sdk_server.py``; speaks MCP over stdio, or streamable HTTP on the port
given by ``--http PORT``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
import warnings

import anyio
from mcp.server.mcpserver import Context, Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field

warnings.simplefilter("ignore")  # the SDK flags logging as deprecated in the newest protocol

server = MCPServer("tooldeck-test-server", version="9.9.9")


class Sum(BaseModel):
    total: int = Field(description="The sum")


@server.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool()
def add(a: int, b: int) -> Sum:
    """Add two integers (structured output)."""
    return Sum(total=a + b)


@server.tool(name="weird.name/with spaces")
def weird() -> str:
    """A tool whose name needs sanitising."""
    return "ok"


@server.tool()
def fail(reason: str) -> str:
    """Always fails with the given reason (an isError result carrying the text)."""
    raise ToolError(reason)


@server.tool()
async def hang(seconds: float = 3600) -> str:
    """Sleep for a long time."""
    await anyio.sleep(seconds)
    return "woke"


@server.tool()
def block(seconds: float) -> str:
    """Block the whole server process (not just the task) for a while."""
    time.sleep(seconds)
    return "unblocked"


@server.tool()
async def progress(steps: int, ctx: Context) -> str:
    """Report progress and log at several levels."""
    await ctx.info("starting")
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step}")
    await ctx.warning("almost done")
    await ctx.debug("debug detail")
    return f"did {steps} steps"


@server.tool()
def pid() -> int:
    """This server's process id."""
    return os.getpid()


@server.tool()
def spawn_child() -> int:
    """Start a long-sleeping grandchild process and return its pid."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    return child.pid


@server.tool()
def crash() -> str:
    """Kill this server process abruptly."""
    os._exit(17)


@server.tool()
def picture() -> Image:
    """Return a tiny PNG image."""
    return Image(data=b"\x89PNG\r\n\x1a\n" + b"\x00" * 24, format="png")


@server.tool(structured_output=False)
def mixed() -> list[object]:
    """Return text and an image."""
    return ["first line", Image(data=b"\x00" * 30, format="png")]


@server.tool()
def big(chars: int) -> str:
    """Return a string of the given length."""
    return "x" * chars


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int, default=0)
    args = parser.parse_args()
    if args.http:
        server.run("streamable-http", host="127.0.0.1", port=args.http)
    else:
        server.run("stdio")
