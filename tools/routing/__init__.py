"""Routing: which tools each agent is shown (DESIGN section 8).

``ToolManual`` describes a tool (category, risk, cost, capabilities); agent profiles allow
categories and deny or require tools; ``ToolRouter`` resolves an agent's tools
deterministically and explains every decision; ``registry.for_agent(agent_type)`` is the
per-agent view that exports and calls only those tools; ``ToolSearchTool`` lets a view
start small and have the model find the rest.
"""

from tools.manual import RiskLevel, TokenCost, ToolCategory, ToolManual, ToolSource
from tools.routing.categorize import categorize_tool, derive_manual, external_manual
from tools.routing.coding import CODING_TOOL_MANUALS, CODING_TOOL_MANUALS_BY_NAME
from tools.routing.config import AgentToolOverride, ManualOverride, ToolRoutingConfig
from tools.routing.errors import RoutingConfigError
from tools.routing.profiles import DEFAULT_AGENT_PROFILES, AgentToolProfile, permissive_profile
from tools.routing.router import STEP_NUMBERS, ResolutionStep, RoutingDecision, ToolRouter
from tools.routing.search import ToolIndex, ToolSearcher, ToolSearchRequest, ToolSearchTool
from tools.routing.view import ToolView, ViewBoundTool

__all__ = [
    "CODING_TOOL_MANUALS",
    "CODING_TOOL_MANUALS_BY_NAME",
    "DEFAULT_AGENT_PROFILES",
    "STEP_NUMBERS",
    "AgentToolOverride",
    "AgentToolProfile",
    "ManualOverride",
    "ResolutionStep",
    "RiskLevel",
    "RoutingConfigError",
    "RoutingDecision",
    "TokenCost",
    "ToolCategory",
    "ToolIndex",
    "ToolManual",
    "ToolRouter",
    "ToolRoutingConfig",
    "ToolSearchRequest",
    "ToolSearchTool",
    "ToolSearcher",
    "ToolSource",
    "ToolView",
    "ViewBoundTool",
    "categorize_tool",
    "derive_manual",
    "external_manual",
    "permissive_profile",
]
