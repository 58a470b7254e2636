"""Where a registered tool's calls run: in this process (the registry's worker threads, the
default) or elsewhere (a `RemoteExecutor`, e.g. :class:`~tools.executors.RayExecutor`).

A remote executor takes over one step only: running the tool's lifecycle (validate ->
execute -> format, inside the envelope). Everything around it stays in the process that
called: the approval gate, the circuit breaker, retries, the metrics sink and the trace
span, so a call that runs on a cluster is gated and counted exactly like a local one, and
comes back as the same :class:`~tools.result.ToolResult`.

::

    executor = RayExecutor()                              # or RayExecutor(address="ray://head:10001")
    registry = LocalToolRegistry(executor=executor)       # every registration runs there ...
    registry.register(local_only_tool, executor=None)     # ... except the ones kept here
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from tools.base import Arguments, BaseTool
    from tools.result import ToolResult

#: Attributes every tool may set on itself without holding state (class defaults, overrides
#: of them, and tooldeck's own per-instance caches).
_PLAIN_ATTRIBUTES = frozenset(
    {
        "name",
        "description",
        "version",
        "RequestModel",
        "ResponseModel",
        "parameters",
        "timeout",
        "retry",
        "sequential",
        "run_in_thread",
        "run_on_shared_loop",
        "expose_exceptions",
        "manual",
        "stateful",
    }
)


@runtime_checkable
class RemoteTool(Protocol):
    """One registered tool, placed on a remote executor (what `RemoteExecutor.prepare` returns)."""

    def run(self, arguments: Arguments, timeout: float | None) -> ToolResult:
        """Run one call there and return its envelope; never raises.

        ``timeout`` (seconds, None: no limit) covers waiting for a free worker too; when it
        passes, the remote work is cancelled and a ``timeout`` error comes back.
        """
        ...

    async def arun(self, arguments: Arguments, timeout: float | None) -> ToolResult:
        """Async twin of `run` (awaits without blocking the event loop)."""
        ...


@runtime_checkable
class RemoteExecutor(Protocol):
    """Runs tool calls outside this process; a registry hands it each tool at registration."""

    def prepare(self, tool: BaseTool[Any, Any]) -> RemoteTool:
        """Ship ``tool`` to where its calls will run.

        Raises:
            ToolDefinitionError: the tool cannot run there (it cannot be pickled, say); the
                message names the tool and the fix.
        """
        ...

    def close(self) -> None:
        """Release what the executor holds (workers, actors, a cluster it started)."""
        ...


def is_stateful(tool: BaseTool[Any, Any]) -> bool:
    """Whether ``tool`` holds state that must live in one place (one actor), not be copied
    into every task.

    The tool's own ``stateful`` attribute decides when it is True or False. Otherwise: a
    function tool is stateless when its function is a plain function that captures nothing
    (no closure variables, not a bound method); any other tool is stateless when its
    instance has no attributes of its own beyond the standard ones (name, description,
    timeout ...). A tool built with collaborators (a client, a store, a cache) is stateful.
    """
    declared = getattr(tool, "stateful", None)
    if isinstance(declared, bool):
        return declared
    from tools.function_tool import FunctionTool

    if isinstance(tool, FunctionTool):
        func = tool.func
        return not (inspect.isfunction(func) and not func.__closure__)
    own = {key for key in vars(tool) if key not in _PLAIN_ATTRIBUTES and not key.startswith("_td_")}
    return bool(own)
