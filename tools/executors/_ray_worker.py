"""What runs inside a Ray worker: the tool's lifecycle, nothing else (no gate, no breaker, no
metrics: those stay in the driver). Plain Python, importable without Ray: Ray wraps these
with ``ray.remote`` in the driver and imports this module by name on its workers (which
therefore need tooldeck installed)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tools.base import Arguments, BaseTool
    from tools.result import ToolResult


def run_tool(tool: BaseTool[Any, Any], arguments: Arguments) -> ToolResult:
    """One call of a stateless tool, as a Ray task (the tool arrives from the object store)."""
    return tool._run(arguments)


class ToolActor:
    """One stateful tool instance, living in one Ray actor for the executor's lifetime.

    The actor is asynchronous: a sync tool's call runs in a worker thread of the actor (as
    it would in the driver's), so ``ray.cancel`` of a timed-out call frees the actor at once
    (the thread finishes in the background, its result dropped), and calls run
    concurrently as they do locally.
    """

    def __init__(self, tool: BaseTool[Any, Any]) -> None:
        self._tool = tool

    async def run(self, arguments: Arguments) -> ToolResult:
        """One call of the tool."""
        return await self._tool._arun(arguments)

    def close(self) -> None:
        """Let the tool release what it created here (worker processes, a sandbox)."""
        close = getattr(self._tool, "close", None)
        if callable(close):
            close()
