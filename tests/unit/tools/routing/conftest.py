"""Registries for the routing tests: the fourteen coding tools (stubs with the spec's
manuals) and tooldeck's own builtin tools."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tools import BaseTool, InMemoryMetrics, LocalToolRegistry
from tools.routing import CODING_TOOL_MANUALS


def _stub(name: str, calls: list[str]) -> Callable[..., Any]:
    def run(path: str = "", text: str = "") -> dict[str, Any]:
        """Stand-in for a coding tool.

        Args:
            path: A workspace path.
            text: Some text.
        """
        calls.append(name)
        return {"tool": name, "path": path}

    return run


@pytest.fixture
def calls() -> list[str]:
    """Names of the coding stubs that actually ran, in call order."""
    return []


@pytest.fixture
def metrics() -> InMemoryMetrics:
    return InMemoryMetrics()


@pytest.fixture
def coding_registry(calls: list[str], metrics: InMemoryMetrics) -> LocalToolRegistry:
    """The fourteen coding tools, each with its manual from CODING_TOOL_MANUALS."""
    registry = LocalToolRegistry(metrics=metrics)
    for manual in CODING_TOOL_MANUALS:
        registry.register(_stub(manual.name, calls), name=manual.name, description=manual.description, manual=manual)
    return registry


@pytest.fixture
def builtin_registry(coding_registry: LocalToolRegistry) -> Iterator[LocalToolRegistry]:
    """The coding tools plus tooldeck's builtin tools (and their old-name aliases)."""
    from tools.builtin import (
        CodeExecutorTool,
        ContextBridge,
        KnowledgeSearchTool,
        KnowledgeStoreTool,
        MathSolverTool,
        SqliteKnowledgeStore,
        UserContextTool,
        WebTool,
    )
    from tools.builtin.legacy import legacy_tools

    registry = coding_registry
    math, code = MathSolverTool(), CodeExecutorTool()
    store = SqliteKnowledgeStore(":memory:")
    context = UserContextTool(context_bridge=ContextBridge("http://127.0.0.1:9"))
    web = WebTool()
    tools: list[BaseTool[Any, Any]] = [
        math,
        code,
        web,
        KnowledgeStoreTool(store=store),
        KnowledgeSearchTool(store=store),
        context,
        *legacy_tools(web=web, user_context=context),
    ]
    for tool in tools:
        registry.register(tool)
    yield registry
    math.close()
    code.close()
    store.close()
