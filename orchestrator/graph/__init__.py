"""Graph building blocks: the tools node and the agent loop."""

from orchestrator.graph.agent import (
    AgentGraph,
    AgentRun,
    StepRecord,
    StopReason,
    ToolRegistry,
    run_agent,
)
from orchestrator.graph.tools_node import ToolCallRecord, ToolRunner, ToolsNode

__all__ = [
    "AgentGraph",
    "AgentRun",
    "StepRecord",
    "StopReason",
    "ToolCallRecord",
    "ToolRegistry",
    "ToolRunner",
    "ToolsNode",
    "run_agent",
]
