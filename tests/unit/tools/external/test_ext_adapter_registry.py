"""ToolAdapterRegistry: instance-based, clear errors for unknown and duplicate types."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from tools import ToolDefinitionError, ToolResult
from tools.external import ToolAdapter, ToolAdapterRegistry, ToolConfig, UnknownAdapterError


class EchoAdapter:
    adapter_type = "echo"

    def execute(
        self,
        tool_id: str,
        action: str | None,
        params: Mapping[str, Any],
        timeout: float | None = None,
    ) -> ToolResult:
        return ToolResult.success({"tool": tool_id, "action": action, **params})

    def is_available(self, config: ToolConfig) -> bool:
        return True


def test_register_get_list() -> None:
    registry = ToolAdapterRegistry()
    adapter = EchoAdapter()
    registry.register_adapter(adapter)
    assert isinstance(adapter, ToolAdapter)
    assert registry.get_adapter("echo") is adapter
    assert registry.list_adapters() == ["echo"]
    assert "echo" in registry
    assert len(registry) == 1
    assert list(registry) == ["echo"]


def test_unknown_type_lists_known_ones() -> None:
    registry = ToolAdapterRegistry([EchoAdapter()])
    with pytest.raises(UnknownAdapterError, match=r"'http'.*known: echo"):
        registry.get_adapter("http")
    with pytest.raises(LookupError):
        ToolAdapterRegistry().get_adapter("x")


def test_duplicate_needs_replace() -> None:
    registry = ToolAdapterRegistry([EchoAdapter()])
    with pytest.raises(ToolDefinitionError, match="replace=True"):
        registry.register_adapter(EchoAdapter())
    other = EchoAdapter()
    registry.register_adapter(other, replace=True)
    assert registry.get_adapter("echo") is other
    registry.unregister_adapter("echo")
    assert registry.list_adapters() == []


def test_non_adapter_is_refused() -> None:
    with pytest.raises(ToolDefinitionError, match="not a ToolAdapter"):
        ToolAdapterRegistry().register_adapter(object())  # type: ignore[arg-type]


def test_registries_are_independent() -> None:
    first = ToolAdapterRegistry([EchoAdapter()])
    assert ToolAdapterRegistry().list_adapters() == []
    assert first.list_adapters() == ["echo"]
