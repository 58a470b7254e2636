"""Builtin tools that are safe to hand to a model, each with an embedded default.

``MathSolverTool()``, ``CodeExecutorTool()`` (local sandbox), ``WebTool()`` (page loading;
search needs a backend), ``KnowledgeStoreTool(store=SqliteKnowledgeStore(path))`` /
``KnowledgeSearchTool(...)`` and ``UserContextTool(context_bridge=ContextBridge(url))``;
:func:`legacy_tools` gives the old tool names, with their old arguments, over those tools.
Collaborators arrive by constructor; the orchestrator registers them explicitly.
"""

from tools.builtin.code_executor import (
    CodeExecutionRequest,
    CodeExecutionResponse,
    CodeExecutorTool,
    LocalSandbox,
    SandboxClient,
    SandboxLimits,
    SandboxResult,
)
from tools.builtin.context_bridge import ContextBridge
from tools.builtin.knowledge import (
    KnowledgeHit,
    KnowledgeItem,
    KnowledgeSearchTool,
    KnowledgeStore,
    KnowledgeStoreTool,
    PostgresKnowledgeStore,
    SqliteKnowledgeStore,
    StoreOutcome,
)
from tools.builtin.legacy import (
    LegacyCommuteTime,
    LegacyDailyBriefing,
    LegacyGetUserContext,
    LegacyLoadWebPage,
    LegacyQueryFinance,
    LegacyTool,
    LegacyWebSearch,
    legacy_tools,
)
from tools.builtin.math import MathEngine, MathRequest, MathResponse, MathSolverTool, SympyWorkerPool
from tools.builtin.user_context import UserContextRequest, UserContextTool
from tools.builtin.web import (
    AddressPolicy,
    BraveSearchBackend,
    FetchLimits,
    PageExtractor,
    PageFetcher,
    SearchBackend,
    SearchHit,
    SearxngSearchBackend,
    TrafilaturaExtractor,
    WebTool,
    search_backend_from_env,
)

__all__ = [
    "AddressPolicy",
    "BraveSearchBackend",
    "CodeExecutionRequest",
    "CodeExecutionResponse",
    "CodeExecutorTool",
    "ContextBridge",
    "FetchLimits",
    "KnowledgeHit",
    "KnowledgeItem",
    "KnowledgeSearchTool",
    "KnowledgeStore",
    "KnowledgeStoreTool",
    "LegacyCommuteTime",
    "LegacyDailyBriefing",
    "LegacyGetUserContext",
    "LegacyLoadWebPage",
    "LegacyQueryFinance",
    "LegacyTool",
    "LegacyWebSearch",
    "LocalSandbox",
    "MathEngine",
    "MathRequest",
    "MathResponse",
    "MathSolverTool",
    "PageExtractor",
    "PageFetcher",
    "PostgresKnowledgeStore",
    "SandboxClient",
    "SandboxLimits",
    "SandboxResult",
    "SearchBackend",
    "SearchHit",
    "SearxngSearchBackend",
    "SqliteKnowledgeStore",
    "StoreOutcome",
    "SympyWorkerPool",
    "TrafilaturaExtractor",
    "UserContextRequest",
    "UserContextTool",
    "WebTool",
    "legacy_tools",
    "search_backend_from_env",
]
