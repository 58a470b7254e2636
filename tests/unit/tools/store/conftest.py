"""Fixtures for the tool-store unit tests: registry files under tmp_path only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tools.store import RegistryStore, ToolConfig


@pytest.fixture
def store(tmp_path: Path) -> RegistryStore:
    return RegistryStore(tmp_path / "user" / "registry.json", tmp_path / "project" / ".tooldeck" / "registry.json")


def http_config(tool_id: str = "weather", **extra: Any) -> ToolConfig:
    """An HTTP tool config pointing at a closed local port (never called in unit tests)."""
    data: dict[str, Any] = {
        "id": tool_id,
        "adapter_type": "http",
        "description": "Current weather for a city.",
        "http": {
            "base_url": "http://127.0.0.1:9",
            "endpoints": {"current": {"path": "/weather", "query": ["city"]}},
        },
        **extra,
    }
    return ToolConfig.model_validate(data)
