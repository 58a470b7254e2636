"""An MCP server (stdio) whose tool reports the trace context it received in ``_meta``.

Run as ``python trace_server.py``.
"""

from __future__ import annotations

import warnings

from mcp.server.mcpserver import Context, MCPServer

warnings.simplefilter("ignore")

server = MCPServer("tooldeck-trace-server", version="1.0.0")


@server.tool()
def trace_context(ctx: Context) -> dict[str, str]:
    """The W3C trace context this request carried in _meta (empty strings when absent)."""
    meta = ctx.request_context.meta or {}
    return {key: str(meta.get(key, "")) for key in ("traceparent", "tracestate")}


if __name__ == "__main__":
    server.run()
