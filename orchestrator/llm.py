"""The chat-model seam of the orchestrator: a `ChatModel` protocol and its value types.

Messages are plain dicts in the OpenAI chat format (``role``, ``content``, ``tool_calls``,
``tool_call_id``), because that is what every OpenAI-compatible server, LangGraph and the
project's own `ToolsNode` exchange. A model returns a `ChatResponse` whose ``message`` is
one such assistant dict, ready to be appended to the conversation.

Exceptions (who can fix what):

* `ChatModelError` - base class; every model failure the agent loop does not handle.
  * `ChatModelConnectionError` - the endpoint could not be reached or timed out.
  * `ChatModelHTTPError` - the endpoint answered with an HTTP error status.
  * `ChatModelResponseError` - the endpoint answered 2xx with something that is not a
    chat completion (bad JSON, missing ``choices``, oversized body).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeAlias, runtime_checkable

__all__ = [
    "ChatModel",
    "ChatModelConnectionError",
    "ChatModelError",
    "ChatModelHTTPError",
    "ChatModelResponseError",
    "ChatResponse",
    "Message",
    "StreamingChatModel",
    "ToolChoice",
    "forced_tool",
]

Message: TypeAlias = dict[str, Any]
"""One chat message in the OpenAI format (``role``, ``content``, ``tool_calls`` ...)."""

ToolChoice: TypeAlias = Literal["auto", "none", "required"] | Mapping[str, Any]
"""``"auto"``, ``"none"``, ``"required"`` or ``{"type": "function", "function": {"name": ...}}``."""


def forced_tool(tool_choice: ToolChoice | None) -> str | None:
    """The tool a ``tool_choice`` forces (``{"type": "function", "function": {"name": ...}}``), or None."""
    if not isinstance(tool_choice, Mapping):
        return None
    function = tool_choice.get("function")
    name = function.get("name") if isinstance(function, Mapping) else None
    return name if isinstance(name, str) else None


class ChatModelError(Exception):
    """A chat model could not produce a response; the message names the endpoint and the fix."""


class ChatModelConnectionError(ChatModelError):
    """The model endpoint could not be reached, or did not answer in time.

    Attributes:
        retryable: True when another attempt may succeed (connection refused or reset,
            connect timeout); False for a read timeout, where retrying would only multiply
            the wait.
    """

    def __init__(self, message: str, *, retryable: bool = True) -> None:
        super().__init__(message)
        self.retryable = retryable


class ChatModelHTTPError(ChatModelError):
    """The model endpoint answered with an HTTP error status.

    Attributes:
        status: The HTTP status code.
        endpoint: The URL that was called (never carries credentials).
        server_message: The error text the server sent, if any (cut to 500 characters).
        retry_after: Seconds the server asked to wait (``Retry-After``), if it said.
    """

    def __init__(
        self,
        message: str,
        *,
        status: int,
        endpoint: str,
        server_message: str,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.endpoint = endpoint
        self.server_message = server_message
        self.retry_after = retry_after

    @property
    def retryable(self) -> bool:
        """True for 408, 409, 429 and 5xx: statuses worth another attempt."""
        return self.status in (408, 409, 429) or self.status >= 500


class ChatModelResponseError(ChatModelError):
    """The endpoint answered 2xx but the body is not a usable chat completion."""


@dataclass(frozen=True, slots=True)
class ChatResponse:
    """One model turn.

    Attributes:
        message: The assistant message in OpenAI format: ``role`` is ``"assistant"``,
            ``content`` is a string or None, and ``tool_calls`` (present only when the model
            called tools) is a list of ``{"id", "type": "function", "function": {"name",
            "arguments"}}`` with ``arguments`` as JSON text.
        finish_reason: The server's finish reason (``"stop"``, ``"tool_calls"``, ...), if any.
        usage: Token usage as reported by the server, if any.
        model: The model name the server reports, if any.
    """

    message: Message
    finish_reason: str | None = None
    usage: Mapping[str, Any] | None = None
    model: str | None = None
    raw: Mapping[str, Any] | None = field(default=None, repr=False, compare=False)

    @property
    def tool_calls(self) -> list[dict[str, Any]]:
        """The tool calls of this turn (an empty list when the model answered in text)."""
        calls = self.message.get("tool_calls")
        return list(calls) if isinstance(calls, list) else []

    @property
    def content(self) -> str | None:
        """The text of this turn, or None."""
        content = self.message.get("content")
        return content if isinstance(content, str) else None


@runtime_checkable
class ChatModel(Protocol):
    """What the agent loop needs from a model.

    Implementations: `OpenAIChatModel` (any ``/v1/chat/completions`` server) and
    `OfflineModel` (deterministic, embedded, no network). A test fake is a ten-line class.
    """

    @property
    def supports_strict_tools(self) -> bool:
        """Whether the model accepts OpenAI strict tool schemas (``strict: true``)."""
        ...

    def chat(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        tool_choice: ToolChoice | None = None,
    ) -> ChatResponse:
        """Produce the next assistant turn.

        Args:
            messages: The conversation so far, OpenAI chat format.
            tools: OpenAI tool definitions (``{"type": "function", "function": {...}}``).
            tool_choice: Force or forbid tool use; None leaves it to the model.

        Returns:
            The assistant's turn.

        Raises:
            ChatModelError: When no turn could be produced.
        """
        ...


@runtime_checkable
class StreamingChatModel(ChatModel, Protocol):
    """A `ChatModel` that can pass its answer on piece by piece as it arrives.

    The agent loop passes ``on_delta`` (its hooks' ``on_model_delta``) when ``streams`` is
    True; the returned `ChatResponse` is the same whole turn as without streaming.
    Implementation: `OpenAIChatModel(stream=True)` (server-sent events).
    """

    @property
    def streams(self) -> bool:
        """Whether `chat` streams (and calls ``on_delta``)."""
        ...

    def chat(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        tool_choice: ToolChoice | None = None,
        on_delta: Callable[[str], None] | None = None,
    ) -> ChatResponse:
        """`ChatModel.chat`, telling ``on_delta`` each piece of answer text as it arrives."""
        ...
