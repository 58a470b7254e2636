"""``BoundTool``: a registered tool bound to its registry (what ``registry.get(name)`` returns)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tools._runner import ToolEntry
    from tools.base import BaseTool
    from tools.registry import LocalToolRegistry
    from tools.result import ToolResult


class BoundTool:
    """A registered tool bound to its registry: calling it goes through the full call path."""

    __slots__ = ("_entry", "_registry")

    def __init__(self, entry: ToolEntry, registry: LocalToolRegistry) -> None:
        self._entry = entry
        self._registry = registry

    @property
    def name(self) -> str:
        """The registered name."""
        return self._entry.name

    @property
    def tool(self) -> BaseTool[Any, Any]:
        """The tool instance behind the registration."""
        return self._entry.tool

    def __call__(self, /, **arguments: Any) -> dict[str, Any]:
        """Call the tool; returns the result dict (``ToolResult.to_dict()``)."""
        return self.call(**arguments).to_dict()

    def call(self, /, **arguments: Any) -> ToolResult:
        """Call the tool; returns the :class:`~tools.result.ToolResult`."""
        gate = self._registry._gate
        if gate is None:
            return self._entry.call(arguments)
        return self._registry._gated(self._entry, arguments, None, None, gate)

    async def acall(self, /, **arguments: Any) -> ToolResult:
        """Async twin of :meth:`call`."""
        gate = self._registry._gate
        if gate is None:
            return await self._entry.acall(arguments)
        return await self._registry._agated(self._entry, arguments, None, None, gate)

    def __repr__(self) -> str:
        return f"BoundTool({self.name!r})"
