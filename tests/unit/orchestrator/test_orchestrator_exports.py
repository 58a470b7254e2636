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


def test_the_service_import_leaves_the_mcp_sdk_and_the_pipeline_out() -> None:
    """``from orchestrator import OrchestratorService`` imports neither the MCP SDK (its client
    handlers are SDK-free types) nor the implementation pipeline with its sandbox (the service
    needs only the agents' prompts); every name of ``orchestrator.agents`` still resolves."""
    import subprocess
    import sys

    probe = (
        "import sys\n"
        "from orchestrator import OrchestratorService\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'mcp_types'))\n"
        "heavy += [m for m in ('orchestrator.agents.pipeline', 'tools.builtin') if m in sys.modules]\n"
        "assert heavy == [], heavy\n"
        "assert 'orchestrator.agents.prompts' in sys.modules and 'tools.external.mcp.features' in sys.modules\n"
        "import orchestrator.agents as agents\n"
        "assert all(getattr(agents, name) is not None for name in agents.__all__)\n"
        "assert set(agents.__all__) <= set(dir(agents)) and len(dir(agents)) == len(set(dir(agents)))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
