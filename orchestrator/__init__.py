"""The agent side of tooldeck: chat models, the tools node, the agent loop and the service.

The names below are the public API; modules starting with ``_`` are private.
"""

import logging

from orchestrator.graph import (
    AgentGraph,
    AgentRun,
    ClaimStore,
    FileClaimStore,
    MemoryClaimStore,
    PausedRun,
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

# The library never prints on its own: without this, Python's last-resort handler writes
# every WARNING (one per failed tool call) to stderr of applications that did not configure
# logging. Applications and the CLIs configure handlers; records then propagate as usual.
logging.getLogger(__name__).addHandler(logging.NullHandler())
