"""The agent side of tooldeck: chat models, the tools node, the agent loop and the service.

The names below are the public API; modules starting with ``_`` are private. They are
imported on first use (PEP 562), so ``import orchestrator`` costs almost nothing and a
program pays only for what it touches (``requests`` only with an OpenAI-compatible
endpoint, ``pydantic_settings`` only with ``Settings``).
"""

from __future__ import annotations

import logging as _logging
from typing import TYPE_CHECKING

from shared.lazy import lazy_exports

if TYPE_CHECKING:
    from orchestrator.graph import (
        AgentGraph,
        AgentRun,
        ClaimStore,
        FileClaimStore,
        MemoryClaimStore,
        PausedRun,
        PostgresClaimStore,
        ResumeError,
        RunHooks,
        RunStatus,
        StepRecord,
        StopReason,
        ToolCallRecord,
        ToolRegistry,
        ToolRunner,
        ToolsNode,
        run_agent,
    )
    from orchestrator.llm import (
        ChatModel,
        ChatModelConnectionError,
        ChatModelError,
        ChatModelHTTPError,
        ChatModelResponseError,
        ChatResponse,
        Message,
        StreamingChatModel,
        ToolChoice,
    )
    from orchestrator.offline import OfflineModel
    from orchestrator.openai_client import OpenAIChatModel
    from orchestrator.service import SYSTEM_PROMPT, OrchestratorService, ServiceConfigError
    from orchestrator.settings import Settings, SettingsError

#: Public name -> the module that defines it.
_LAZY = {
    "AgentGraph": "orchestrator.graph",
    "AgentRun": "orchestrator.graph",
    "ClaimStore": "orchestrator.graph",
    "FileClaimStore": "orchestrator.graph",
    "MemoryClaimStore": "orchestrator.graph",
    "PausedRun": "orchestrator.graph",
    "PostgresClaimStore": "orchestrator.graph",
    "ResumeError": "orchestrator.graph",
    "RunHooks": "orchestrator.graph",
    "RunStatus": "orchestrator.graph",
    "StepRecord": "orchestrator.graph",
    "StopReason": "orchestrator.graph",
    "ToolCallRecord": "orchestrator.graph",
    "ToolRegistry": "orchestrator.graph",
    "ToolRunner": "orchestrator.graph",
    "ToolsNode": "orchestrator.graph",
    "run_agent": "orchestrator.graph",
    "ChatModel": "orchestrator.llm",
    "ChatModelConnectionError": "orchestrator.llm",
    "ChatModelError": "orchestrator.llm",
    "ChatModelHTTPError": "orchestrator.llm",
    "ChatModelResponseError": "orchestrator.llm",
    "ChatResponse": "orchestrator.llm",
    "Message": "orchestrator.llm",
    "StreamingChatModel": "orchestrator.llm",
    "ToolChoice": "orchestrator.llm",
    "OfflineModel": "orchestrator.offline",
    "OpenAIChatModel": "orchestrator.openai_client",
    "SYSTEM_PROMPT": "orchestrator.service",
    "OrchestratorService": "orchestrator.service",
    "ServiceConfigError": "orchestrator.service",
    "Settings": "orchestrator.settings",
    "SettingsError": "orchestrator.settings",
}

__all__ = [
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
]


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)


# A library never prints on its own: until the application configures logging, records of
# the "orchestrator" loggers go nowhere (not to logging's last-resort stderr handler).
_logging.getLogger(__name__).addHandler(_logging.NullHandler())
