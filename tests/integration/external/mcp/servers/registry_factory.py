"""A small tooldeck registry served over MCP by ``python -m tools.external.mcp``."""

from __future__ import annotations

from pydantic import BaseModel, Field

from tools import BaseTool, LocalToolRegistry, ToolError
from tools.routing import ToolCategory, ToolManual


class Forecast(BaseModel):
    city: str = Field(description="City name, e.g. 'Lisbon'")
    days: int = Field(default=1, ge=1, le=7, description="Days ahead, 1-7")


class Report(BaseModel):
    city: str
    days: int
    summary: str


class ForecastTool(BaseTool[Forecast, Report]):
    name = "forecast"
    description = "Weather forecast for a city."
    version = "2.0.0"

    def execute_internal(self, request: Forecast) -> Report:
        if request.city == "Atlantis":
            raise ToolError("No forecast for 'Atlantis': it is not a real city; pick another.")
        return Report(city=request.city, days=request.days, summary="sunny")


class SecretFailure(BaseModel):
    pass


class BrokenTool(BaseTool[SecretFailure, Report]):
    name = "broken"
    description = "Always fails with an internal error."

    def execute_internal(self, request: SecretFailure) -> Report:
        raise RuntimeError("database password=hunter2 rejected")


def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: First addend.
        b: Second addend.
    """
    return a + b


def shout(text: str) -> str:
    """Upper-case the text and print it (stdout must not corrupt the MCP stream).

    Args:
        text: What to shout.
    """
    print("SHOUTING", text)
    return text.upper()


def build() -> LocalToolRegistry:
    """The registry: forecast (models, output schema), broken, add, shout; the operator
    declares them safe, so they run at the default freedom level (medium)."""
    registry = LocalToolRegistry()
    for tool in (ForecastTool(), BrokenTool(), add, shout):
        name = str(getattr(tool, "name", None) or getattr(tool, "__name__", ""))
        registry.register(tool, manual=ToolManual(name=name, category=ToolCategory.COMPUTE, risk="safe"))
    return registry


def not_a_registry() -> int:
    """A factory returning the wrong thing, for CLI error tests."""
    return 42
