"""Pins the public import paths: a rename here is a breaking change for users."""

from __future__ import annotations

import importlib

import pytest

PUBLIC = {
    "tools": [
        "ActionStrategy",
        "BaseTool",
        "CircuitBreaker",
        "CompositeTool",
        "ErrorInfo",
        "FunctionTool",
        "InMemoryMetrics",
        "InvalidArgumentsError",
        "LocalToolRegistry",
        "RetryPolicy",
        "ToolError",
        "ToolResult",
        "UpstreamError",
        "UnknownToolError",
        "UnknownActionError",
        "ToolTimeoutError",
        "PermissionDeniedError",
        "ToolDefinitionError",
        "ToolSaturatedError",
        "DataFileError",
        "parse_retry_after",
        "ToolManual",
        "ToolCategory",
        "RiskLevel",
    ],
    "tools.manual": [
        "ToolManual",
        "ToolCategory",
        "RiskLevel",
        "ToolSource",
        "TokenCost",
        "ActionRisk",
        "ManualOrigin",
        "Origin",
        "DECLARED_ORIGINS",
    ],
    "tools.testing": ["schema_drift"],
    "tools.schema": ["to_strict_schema", "NullStripper", "openai_tool", "anthropic_tool", "mcp_tool", "model_schema"],
    "tools.routing": [
        "ToolManual",
        "ToolCategory",
        "RiskLevel",
        "AgentToolProfile",
        "DEFAULT_AGENT_PROFILES",
        "ToolRoutingConfig",
        "ToolRouter",
        "ToolView",
        "RoutingDecision",
        "categorize_tool",
        "ToolSearchTool",
        "CODING_TOOL_MANUALS",
    ],
    "tools.store": [
        "ToolConfig",
        "RegistryStore",
        "RegistryService",
        "ToolCatalog",
        "ExecutionService",
        "ManualOverrides",
        "ToolHints",
    ],
    "tools.approvals": ["FreedomLevel", "ApprovalsStore", "ApprovalPolicy", "ApprovalCheck", "Approve", "Deny"],
    "tools.telemetry": ["MetricsStore", "ToolTracer", "inject_trace_context", "redact_data", "redact_text"],
    "tools.builtin.legacy": ["legacy_tools", "LegacyTool"],
    "tools.builtin": [
        "MathSolverTool",
        "CodeExecutorTool",
        "LocalSandbox",
        "SandboxClient",
        "WebTool",
        "SearchBackend",
        "KnowledgeSearchTool",
        "KnowledgeStoreTool",
        "KnowledgeStore",
        "SqliteKnowledgeStore",
        "ContextBridge",
        "UserContextTool",
    ],
    "tools.external": [
        "ToolAdapter",
        "ToolAdapterRegistry",
        "ToolConfig",
        "HTTPConfig",
        "CLIConfig",
        "MCPConfig",
        "AuthConfig",
        "HTTPAdapter",
        "CLIAdapter",
        "ToolExecutorService",
        "MCPToolset",
        "MCPAdapter",
        "secret_values",
    ],
    "orchestrator": ["ToolsNode", "OpenAIChatModel", "OfflineModel", "OrchestratorService", "ChatModel"],
    "shared.adapters": ["BaseAdapter", "AdapterResult", "AdapterRegistry", "register_adapter"],
}


@pytest.mark.parametrize(("module", "names"), PUBLIC.items())
def test_public_names_importable(module: str, names: list[str]) -> None:
    mod = importlib.import_module(module)
    missing = [n for n in names if not hasattr(mod, n)]
    assert missing == []
    if hasattr(mod, "__all__"):
        assert set(names) <= set(mod.__all__)
