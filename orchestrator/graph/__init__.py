"""Graph building blocks: the tools node, the agent loop, and pausing a run for a person's
approval (`AgentGraph.resume`, claim stores)."""

from orchestrator.graph.agent import AgentGraph, ToolRegistry, run_agent
from orchestrator.graph.claims import ClaimStore, ClaimStoreError, FileClaimStore, MemoryClaimStore, claims_beside
from orchestrator.graph.hooks import ModelFinished, ModelStarted, RunHooks, ToolFinished, ToolStarted
from orchestrator.graph.postgres_claims import PostgresClaimStore
from orchestrator.graph.run import AgentRun, RunStatus, StepRecord, StopReason
from orchestrator.graph.state import PausedRun, ResumeError, state_from_json
from orchestrator.graph.tools_node import ToolCallRecord, ToolRunner, ToolsNode

__all__ = [
    "AgentGraph",
    "AgentRun",
    "ClaimStore",
    "ClaimStoreError",
    "FileClaimStore",
    "MemoryClaimStore",
    "ModelFinished",
    "ModelStarted",
    "PausedRun",
    "PostgresClaimStore",
    "ResumeError",
    "RunHooks",
    "RunStatus",
    "StepRecord",
    "StopReason",
    "ToolCallRecord",
    "ToolFinished",
    "ToolRegistry",
    "ToolRunner",
    "ToolStarted",
    "ToolsNode",
    "claims_beside",
    "run_agent",
    "state_from_json",
]
