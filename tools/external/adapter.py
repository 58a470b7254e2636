"""The :class:`ToolAdapter` protocol and :class:`ToolAdapterRegistry`.

An adapter runs external tools of one kind (``adapter_type``: ``"http"``, ``"cli"``, ``"mcp"``,
``"binary"``, ...). It knows its tools by :attr:`ToolConfig.id` and returns a
:class:`~tools.result.ToolResult` for every call; it never raises for a failing call.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Protocol, runtime_checkable

from tools.errors import ToolDefinitionError
from tools.external.config import ActionSpec, ToolConfig
from tools.result import ToolResult


@runtime_checkable
class ToolAdapter(Protocol):
    """Runs external tools of one kind and answers with a :class:`ToolResult`.

    Attributes:
        adapter_type: The kind of tool this adapter runs; the key in a
            :class:`ToolAdapterRegistry` and the value of :attr:`ToolConfig.adapter_type`.
    """

    adapter_type: str

    def execute(
        self,
        tool_id: str,
        action: str | None,
        params: Mapping[str, Any],
        timeout: float | None = None,
    ) -> ToolResult:
        """Run one call of tool ``tool_id``; failures become error results, never exceptions.

        Args:
            tool_id: The :attr:`ToolConfig.id` of a tool known to this adapter.
            action: The action to run, or None when the tool has a single action.
            params: The model's arguments (already JSON-decoded).
            timeout: Seconds for the whole call; None means the tool's configured default.
        """
        ...

    def is_available(self, config: ToolConfig) -> bool:
        """Whether this adapter can run ``config`` right now (command found, secret set, ...)."""
        ...


@runtime_checkable
class ConfigurableAdapter(Protocol):
    """An adapter that is told its tools' configs (HTTP, CLI, MCP): it knows a tool by
    :attr:`ToolConfig.id` only after :meth:`add_tool`. :class:`ExternalTool` calls it."""

    def add_tool(self, config: ToolConfig) -> None:
        """Know ``config`` under its id (an equal config already known is kept as is)."""
        ...


@runtime_checkable
class DiscoveringAdapter(Protocol):
    """An adapter that learns a tool's actions from the tool itself (an MCP server's
    ``tools/list``, a binary's ``--schema``) rather than from its config."""

    def action_specs(self, config: ToolConfig) -> list[ActionSpec]:
        """The actions of ``config``'s tool.

        Raises:
            ToolDefinitionError: the tool cannot be reached or described (the message says
                why and what to do).
        """
        ...


class UnknownAdapterError(ToolDefinitionError, LookupError):
    """No adapter is registered for the requested ``adapter_type``."""


class ToolAdapterRegistry:
    """Adapters by ``adapter_type``; build one per application (no process-wide registry).

    Example:
        >>> adapters = ToolAdapterRegistry()
        >>> adapters.register_adapter(HTTPAdapter(env=os.environ))
        >>> adapters.get_adapter("http").execute("weather", "current", {"city": "Lisbon"})
    """

    def __init__(self, adapters: list[ToolAdapter] | None = None) -> None:
        self._adapters: dict[str, ToolAdapter] = {}
        for adapter in adapters or []:
            self.register_adapter(adapter)

    def register_adapter(self, adapter: ToolAdapter, *, replace: bool = False) -> None:
        """Register ``adapter`` under its ``adapter_type``.

        Raises:
            ToolDefinitionError: ``adapter`` does not implement :class:`ToolAdapter`, or its type
                is already registered and ``replace`` is False.
        """
        if not isinstance(adapter, ToolAdapter) or not isinstance(getattr(adapter, "adapter_type", None), str):
            raise ToolDefinitionError(
                f"{type(adapter).__name__} is not a ToolAdapter: it needs a str 'adapter_type', "
                "execute(tool_id, action, params, timeout) and is_available(config)"
            )
        kind = adapter.adapter_type
        if kind in self._adapters and not replace:
            raise ToolDefinitionError(f"an adapter for {kind!r} is already registered; pass replace=True to swap it")
        self._adapters[kind] = adapter

    def unregister_adapter(self, adapter_type: str) -> None:
        """Remove the adapter for ``adapter_type`` (no error when absent)."""
        self._adapters.pop(adapter_type, None)

    def get_adapter(self, adapter_type: str) -> ToolAdapter:
        """The adapter for ``adapter_type``.

        Raises:
            UnknownAdapterError: none registered; the message lists the known types.
        """
        try:
            return self._adapters[adapter_type]
        except KeyError:
            known = ", ".join(sorted(self._adapters)) or "none"
            raise UnknownAdapterError(
                f"no adapter registered for adapter_type {adapter_type!r}; known: {known}"
            ) from None

    def list_adapters(self) -> list[str]:
        """The registered adapter types, sorted."""
        return sorted(self._adapters)

    def __contains__(self, adapter_type: object) -> bool:
        return adapter_type in self._adapters

    def __iter__(self) -> Iterator[str]:
        return iter(self.list_adapters())

    def __len__(self) -> int:
        return len(self._adapters)
