"""The public import paths of the orchestrator package are pinned."""

from __future__ import annotations

import orchestrator
import orchestrator.graph
import orchestrator.offline

EXPECTED = {
    "SYSTEM_PROMPT",
    "AgentGraph",
    "AgentRun",
    "ChatModel",
    "ChatModelConnectionError",
    "ChatModelError",
    "ChatModelHTTPError",
    "ChatModelResponseError",
    "ChatResponse",
    "ClaimStore",
    "FileClaimStore",
    "MemoryClaimStore",
    "Message",
    "OfflineModel",
    "OpenAIChatModel",
    "OrchestratorService",
    "PausedRun",
    "PostgresClaimStore",
    "ResumeError",
    "RunStatus",
    "ServiceConfigError",
    "Settings",
    "SettingsError",
    "StepRecord",
    "StopReason",
    "ToolCallRecord",
    "ToolChoice",
    "ToolRegistry",
    "ToolRunner",
    "ToolsNode",
    "run_agent",
}


def test_public_names() -> None:
    assert set(orchestrator.__all__) == EXPECTED
    for name in EXPECTED:
        assert getattr(orchestrator, name) is not None
    assert orchestrator.graph.ToolsNode is orchestrator.ToolsNode
    assert orchestrator.offline.OfflineModel is orchestrator.OfflineModel


def test_graph_package_does_not_import_concrete_tools() -> None:
    import ast
    import pathlib

    root = pathlib.Path(orchestrator.graph.__file__).parent
    for path in root.glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not node.module.startswith("tools.builtin"), path.name


GRAPH = {
    "AgentGraph",
    "AgentRun",
    "ClaimStore",
    "ClaimStoreError",
    "FileClaimStore",
    "MemoryClaimStore",
    "PausedRun",
    "PostgresClaimStore",
    "ResumeError",
    "RunStatus",
    "StepRecord",
    "StopReason",
    "ToolCallRecord",
    "ToolRegistry",
    "ToolRunner",
    "ToolsNode",
    "claims_beside",
    "run_agent",
    "state_from_json",
}


def test_graph_public_names() -> None:
    assert set(orchestrator.graph.__all__) == GRAPH
    for name in GRAPH:
        assert getattr(orchestrator.graph, name) is not None
    assert orchestrator.graph.AgentRun is orchestrator.AgentRun
