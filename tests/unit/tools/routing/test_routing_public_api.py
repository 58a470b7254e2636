"""Pins the public names of tools.routing (DESIGN section 8): a rename is a breaking change."""

from __future__ import annotations

import importlib

PUBLIC = [
    "ToolCategory",
    "ToolManual",
    "AgentToolProfile",
    "DEFAULT_AGENT_PROFILES",
    "ToolRoutingConfig",
    "AgentToolOverride",
    "categorize_tool",
    "ToolRouter",
    "RoutingDecision",
    "ToolView",
    "ToolSearchTool",
    "CODING_TOOL_MANUALS",
    "RoutingConfigError",
    "ManualOverride",
    "derive_manual",
    "external_manual",
]


def test_public_names_importable_from_tools_routing() -> None:
    module = importlib.import_module("tools.routing")
    assert [n for n in PUBLIC if not hasattr(module, n)] == []
    assert set(PUBLIC) <= set(module.__all__)
    assert sorted(module.__all__) == sorted(set(module.__all__))


def test_registry_for_agent_returns_a_view() -> None:
    from tools import LocalToolRegistry
    from tools.routing import ToolView

    assert isinstance(LocalToolRegistry().for_agent("main"), ToolView)


def test_importing_routing_does_not_import_the_ranking_library() -> None:
    import subprocess
    import sys

    code = "import sys, tools.routing; print('bm25s' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "False"
