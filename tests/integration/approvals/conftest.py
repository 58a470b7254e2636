"""The approvals integration tests reuse the store fixtures (a real weather API on 127.0.0.1,
the real ``tooldeck`` command) and add adopted HTTP tools of each risk."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.integration.store.conftest import SECRET, WORKTREE, base_env, project, tooldeck, weather_api
from tools.routing import RiskLevel
from tools.store import ToolConfig

__all__ = ["SECRET", "WORKTREE", "base_env", "project", "tooldeck", "weather_api"]

RISKS: tuple[RiskLevel, ...] = ("safe", "moderate", "dangerous")


def weather_tool(api_url: str, risk: RiskLevel, *, tool_id: str | None = None, **extra: Any) -> ToolConfig:
    """An HTTP tool over the weather API whose manual says ``risk``."""
    return ToolConfig.model_validate(
        {
            "id": tool_id or f"{risk}_weather",
            "adapter_type": "http",
            "description": "Current weather for a city.",
            "http": {"base_url": api_url, "endpoints": {"current": {"path": "/weather", "query": ["city"]}}},
            "auth": {"env_var": "WEATHER_KEY", "kind": "header", "header": "X-Api-Key"},
            "manual": {"risk": risk},
            **extra,
        }
    )


def project_registry(project: Path) -> Path:
    return project / ".tooldeck" / "registry.json"
