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
    "RunHooks",
    "RunStatus",
    "ServiceConfigError",
    "Settings",
    "SettingsError",
    "StepRecord",
    "StopReason",
    "StreamingChatModel",
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
}


def test_graph_public_names() -> None:
    assert set(orchestrator.graph.__all__) == GRAPH
    for name in GRAPH:
        assert getattr(orchestrator.graph, name) is not None
    assert orchestrator.graph.AgentRun is orchestrator.AgentRun


def test_import_orchestrator_stays_cheap_and_every_public_name_resolves_on_first_use() -> None:
    """``import orchestrator`` imports no HTTP client, event loop or settings library (PEP 562
    lazy names); every public name, the merged ones included, then resolves from its module."""
    import subprocess
    import sys

    probe = (
        "import sys, orchestrator; "
        "heavy = [m for m in ('requests', 'asyncio', 'pydantic_settings') if m in sys.modules]; "
        "assert heavy == [], heavy; "
        "from orchestrator.graph.hooks import RunHooks; from orchestrator.llm import StreamingChatModel; "
        "assert orchestrator.RunHooks is RunHooks and orchestrator.StreamingChatModel is StreamingChatModel; "
        "assert all(getattr(orchestrator, name) is not None for name in orchestrator.__all__); "
        "assert sorted(dir(orchestrator)) == sorted(orchestrator.__all__)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
