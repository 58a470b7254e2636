"""Graph building blocks: the tools node and the agent loop."""

from orchestrator.graph.tools_node import ToolCallRecord, ToolRunner, ToolsNode

__all__ = ["ToolCallRecord", "ToolRunner", "ToolsNode"]
