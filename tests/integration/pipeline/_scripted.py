"""A scripted chat model: answers from a list of turns (tool calls or text)."""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence
from typing import Any

from orchestrator.llm import ChatResponse, ToolChoice

_ids = itertools.count(1)


def call(tool: str, /, **arguments: Any) -> dict[str, Any]:
    """One tool call of a turn."""
    return {
        "id": f"call_{next(_ids)}",
        "type": "function",
        "function": {"name": tool, "arguments": json.dumps(arguments)},
    }


class ScriptedModel:
    """Each ``chat`` returns the next turn: a list of tool calls, or a text answer.

    ``repeat_last`` keeps returning the last turn (a model that never stops)."""

    supports_strict_tools = False

    def __init__(self, turns: Sequence[str | list[dict[str, Any]]], *, repeat_last: bool = False) -> None:
        self.turns = list(turns)
        self.repeat_last = repeat_last
        self.seen: list[list[dict[str, Any]]] = []
        self.offered: list[list[str]] = []

    def chat(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        tool_choice: ToolChoice | None = None,
    ) -> ChatResponse:
        self.seen.append([dict(m) for m in messages])
        self.offered.append([t["function"]["name"] for t in tools or []])
        if not self.turns:
            raise AssertionError("the scripted model ran out of turns")
        turn = self.turns[0] if self.repeat_last and len(self.turns) == 1 else self.turns.pop(0)
        if isinstance(turn, str):
            return ChatResponse({"role": "assistant", "content": turn})
        fresh = [call(c["function"]["name"], **json.loads(c["function"]["arguments"])) for c in turn]
        return ChatResponse({"role": "assistant", "content": None, "tool_calls": fresh})

    def tool_messages(self) -> list[dict[str, Any]]:
        """Every tool answer this model was shown, parsed."""
        out: dict[str, dict[str, Any]] = {}  # by tool_call_id: each answer once, in order
        for conversation in self.seen:
            for message in conversation:
                if message.get("role") == "tool":
                    out.setdefault(str(message.get("tool_call_id")), json.loads(message["content"]))
        return list(out.values())
