"""The agent side of tooldeck: chat models, the tools node, the agent loop and the service."""

from orchestrator.llm import (
    ChatModel,
    ChatModelConnectionError,
    ChatModelError,
    ChatModelHTTPError,
    ChatModelResponseError,
    ChatResponse,
)
from orchestrator.openai_client import OpenAIChatModel

__all__ = [
    "ChatModel",
    "ChatModelConnectionError",
    "ChatModelError",
    "ChatModelHTTPError",
    "ChatModelResponseError",
    "ChatResponse",
    "OpenAIChatModel",
]
