"""Models for trying tools and agents without a model: `TestModel` and `FunctionModel`.

`TestModel` calls every tool it is offered (or the ones named) once, with arguments
generated from each tool's JSON schema (valid, deterministic for a seed), then answers
with a summary of the results: the quickest way to see that a new tool reaches an agent
and what it answers::

    python -m orchestrator --registry mytools:build --model test "try my tools"

or from Python, with any `ChatModel` seam::

    from orchestrator import AgentGraph
    from orchestrator.testing import TestModel

    run = AgentGraph(TestModel(), registry).run("try my tools")

`FunctionModel(fn)` answers each turn with ``fn(messages, tools)``: write the model's side
of a conversation as a function, to test an agent's behaviour turn by turn.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from orchestrator._openai_wire import tool_calls_of
from orchestrator._schema_values import schema_arguments
from orchestrator.llm import ChatModelResponseError, ChatResponse, Message, ToolChoice, forced_tool

__all__ = ["FunctionModel", "ModelFunction", "TestModel"]

_PREVIEW_CHARS = 300

#: ``fn(messages, tools)`` -> the next assistant message: a dict in the OpenAI format (``role``
#: may be left out; ``tool_calls`` arguments may be dicts), a `ChatResponse`, or a string (the
#: answer text).
ModelFunction = Callable[[Sequence[Mapping[str, Any]], Sequence[Mapping[str, Any]]], "Message | ChatResponse | str"]


class TestModel:
    """A `ChatModel` that calls tools with generated arguments, then summarises what they answered.

    On the first turn after the user's message it calls each offered tool once, all in one
    turn, in the order offered (with ``tool_choice`` naming a tool: only that one; ``"none"``:
    none). Once the results are in, it answers with one line per call: the tool, the
    arguments it sent, and the result or the error. No network, no randomness beyond
    ``seed``: the same tools give the same calls.

    Args:
        call_tools: The tool names to call (None: every offered tool). Names not offered are
            ignored.
        seed: Varies the generated arguments (each seed is deterministic).
        answer: The final answer instead of the summary of results.

    Attributes:
        model: The model's name in traces (``"test"``).
    """

    __test__ = False  # a model, not a pytest test class
    model = "test"

    def __init__(self, *, call_tools: Sequence[str] | None = None, seed: int = 0, answer: str | None = None) -> None:
        self.call_tools = list(call_tools) if call_tools is not None else None
        self.seed = seed
        self.answer = answer

    def __repr__(self) -> str:
        return f"TestModel(call_tools={self.call_tools!r}, seed={self.seed})"

    @property
    def supports_strict_tools(self) -> bool:
        """False: the generated arguments follow the plain schemas."""
        return False

    def chat(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        tool_choice: ToolChoice | None = None,
    ) -> ChatResponse:
        """Call the tools (first turn) or summarise their results (later turns)."""
        answered = _results_since_user(messages)
        if answered is not None:
            return _reply(self.answer if self.answer is not None else _summary(*answered))
        chosen = self._chosen(tools or (), tool_choice)
        if not chosen:
            offered = [_name(tool) for tool in tools or ()]
            said = f"the tools offered are {', '.join(offered)}" if offered else "no tools were offered"
            return _reply(self.answer if self.answer is not None else f"I called no tools: {said}.")
        calls = [
            {
                "id": f"call_test_{index}",
                "type": "function",
                "function": {
                    "name": _name(tool),
                    "arguments": json.dumps(schema_arguments(_parameters(tool), self.seed), ensure_ascii=False),
                },
            }
            for index, tool in enumerate(chosen)
        ]
        message: Message = {"role": "assistant", "content": None, "tool_calls": calls}
        return ChatResponse(message=message, finish_reason="tool_calls", model=self.model)

    def _chosen(self, tools: Sequence[Mapping[str, Any]], tool_choice: ToolChoice | None) -> list[Mapping[str, Any]]:
        if tool_choice == "none":
            return []
        offered = [tool for tool in tools if _name(tool)]
        forced = forced_tool(tool_choice)
        if forced is not None:
            offered = [tool for tool in offered if _name(tool) == forced]
        if self.call_tools is not None:
            wanted = set(self.call_tools)
            offered = [tool for tool in offered if _name(tool) in wanted]
        return offered


class FunctionModel:
    """A `ChatModel` whose every turn is ``fn(messages, tools)`` (see `ModelFunction`).

    The returned message is checked like a server's: tool calls need a function name,
    arguments given as a dict are sent as JSON text, missing call ids are generated.

    Args:
        fn: Makes the next assistant message.
        name: The model's name in traces.
        strict: Whether the agent should send it OpenAI strict schemas.
    """

    def __init__(self, fn: ModelFunction, *, name: str = "function", strict: bool = False) -> None:
        self.fn = fn
        self.model = name
        self._strict = strict
        self._turn = 0

    def __repr__(self) -> str:
        return f"FunctionModel({getattr(self.fn, '__qualname__', self.fn)!r})"

    @property
    def supports_strict_tools(self) -> bool:
        """As given (``strict``)."""
        return self._strict

    def chat(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        tool_choice: ToolChoice | None = None,
    ) -> ChatResponse:
        """The next turn: ``fn(messages, tools)``, checked.

        Raises:
            ChatModelResponseError: ``fn`` returned something that is not an assistant message.
        """
        produced = self.fn(list(messages), list(tools or ()))
        self._turn += 1
        if isinstance(produced, ChatResponse):
            return produced
        if isinstance(produced, str):
            return _reply(produced, self.model)
        if not isinstance(produced, Mapping):
            raise ChatModelResponseError(
                f"FunctionModel: {self!r} returned {type(produced).__name__}; return a message dict "
                '({"content": ...} or {"tool_calls": [...]}), a ChatResponse or a string'
            )
        content = produced.get("content")
        message: Message = {"role": "assistant", "content": content if isinstance(content, str) else None}
        calls = tool_calls_of(produced.get("tool_calls"), self._turn)
        if calls:
            message["tool_calls"] = calls
        return ChatResponse(message=message, finish_reason="tool_calls" if calls else "stop", model=self.model)


def _reply(text: str, model: str = TestModel.model) -> ChatResponse:
    return ChatResponse(message={"role": "assistant", "content": text}, finish_reason="stop", model=model)


def _name(tool: Mapping[str, Any]) -> str:
    function = tool.get("function")
    name = function.get("name") if isinstance(function, Mapping) else tool.get("name")
    return name if isinstance(name, str) else ""


def _parameters(tool: Mapping[str, Any]) -> Mapping[str, Any]:
    function = tool.get("function")
    schema = function.get("parameters") if isinstance(function, Mapping) else tool.get("input_schema")
    return schema if isinstance(schema, Mapping) else {"type": "object", "properties": {}}


def _results_since_user(messages: Sequence[Mapping[str, Any]]) -> tuple[list[Any], dict[str, str]] | None:
    """The calls made since the last user message and their answers (None: none made yet)."""
    calls: list[Any] = []
    answers: dict[str, str] = {}
    for message in reversed(messages):
        role = message.get("role")
        if role == "user":
            break
        if role == "tool":
            content = message.get("content")
            answers[str(message.get("tool_call_id"))] = content if isinstance(content, str) else json.dumps(content)
        elif role == "assistant" and isinstance(message.get("tool_calls"), list):
            calls = list(message["tool_calls"]) + calls
    return (calls, answers) if calls else None


def _summary(calls: list[Any], answers: dict[str, str]) -> str:
    lines = [f"I called {len(calls)} tool(s):"]
    for call in calls:
        function = call.get("function", {}) if isinstance(call, Mapping) else {}
        name = function.get("name", "?")
        arguments = function.get("arguments", "{}")
        answer = answers.get(str(call.get("id")) if isinstance(call, Mapping) else "")
        lines.append(f"- {name}({_clip(arguments, 120)}) -> {_outcome(answer)}")
    return "\n".join(lines)


def _outcome(answer: str | None) -> str:
    if answer is None:
        return "no answer"
    try:
        parsed = json.loads(answer)
    except ValueError:
        return _clip(answer)
    if isinstance(parsed, Mapping) and parsed.get("status") == "error":
        return f"error ({parsed.get('error_type', '?')}): {_clip(str(parsed.get('error', '')))}"
    if isinstance(parsed, Mapping) and "data" in parsed:
        data = parsed["data"]
        return "success: " + _clip(data if isinstance(data, str) else json.dumps(data, ensure_ascii=False))
    return _clip(answer)


def _clip(text: str, limit: int = _PREVIEW_CHARS) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
