"""A ChatModel for the MCP client-handler tests: one fixed reply, every request kept."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from orchestrator.llm import ChatResponse


class RecordingModel:
    """Answers ``reply`` as ``model``; ``seen`` keeps the messages of every request."""

    def __init__(self, reply: str, model: str) -> None:
        self.reply = reply
        self.model = model
        self.seen: list[list[Mapping[str, Any]]] = []

    @property
    def supports_strict_tools(self) -> bool:
        return False

    def chat(
        self, messages: Sequence[Mapping[str, Any]], *, tools: Any = None, tool_choice: Any = None
    ) -> ChatResponse:
        self.seen.append(list(messages))
        return ChatResponse({"role": "assistant", "content": self.reply}, model=self.model)
