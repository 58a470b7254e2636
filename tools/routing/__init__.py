"""Routing: which tools each agent is shown (DESIGN section 8).

``ToolManual`` describes a tool (category, risk, cost, capabilities); agent profiles allow
categories and deny or require tools; ``ToolRouter`` resolves an agent's tools
deterministically and explains every decision; ``registry.for_agent(agent_type)`` is the
per-agent view that exports and calls only those tools.
"""

from tools.routing.categorize import categorize_tool, derive_manual
from tools.routing.manual import RiskLevel, TokenCost, ToolCategory, ToolManual, ToolSource

__all__ = [
    "RiskLevel",
    "TokenCost",
    "ToolCategory",
    "ToolManual",
    "ToolSource",
    "categorize_tool",
    "derive_manual",
]
