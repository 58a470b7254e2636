"""`OfflineModel`: a deterministic, embedded `ChatModel` that needs no key and no network."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from orchestrator.llm import ChatResponse, Message, ToolChoice, forced_tool
from orchestrator.offline._answers import clip, result_sentence
from orchestrator.offline._intents import Intent, read_message
from orchestrator.offline._planning import offered_schemas, plan

__all__ = ["OfflineModel"]

_EXAMPLES: tuple[tuple[tuple[str, ...], str], ...] = (
    (("math_solver", "calculator"), "math ('What is 12*(3+4)?', 'solve x^2 = 4')"),
    (("store_knowledge",), "remembering facts ('Remember that my dentist is Dr. Lee.')"),
    (("search_knowledge",), "recalling them ('What is my dentist?')"),
    (
        ("user_context", "get_user_context", "get_daily_briefing"),
        "your calendar, weather, commute, spending and daily briefing",
    ),
    (("web", "web_search"), "web search ('Search the web for tooldeck')"),
    (("web", "load_web_page"), "reading web pages ('Open https://example.org')"),
    (("execute_code",), "running code ('Run this python: print(2**10)')"),
    (("module_pipeline", "build_module"), "new data sources ('Build a module for my runs at https://...')"),
)
_KIND_NEEDS = {
    "math": "a math tool",
    "remember": "a knowledge store",
    "recall": "a knowledge store",
    "context": "a user-context tool (set the context service with --context-url or TOOLDECK_CONTEXT_URL)",
    "web_search": "a web search tool (configure BRAVE_API_KEY or SEARXNG_URL)",
    "web_load": "a web page tool",
    "code": "a code execution tool",
    "module": "the module tools (pip install -e '.[modules]')",
}


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return " ".join(p.get("text", "") for p in content if isinstance(p, Mapping))
    return ""


class OfflineModel:
    """A rule-based model: intent patterns -> tool calls -> an answer written from results.

    It understands arithmetic and algebra (``math_solver``), "remember that ..."
    (``store_knowledge``), "what is my ..." / "recall ..." (``search_knowledge``), the user
    context categories - calendar, schedule, weather, commute to X, spending, briefing -
    (``user_context`` or its aliases), "search the web for ..." / "open <url>" (``web``,
    ``web_search``, ``load_web_page``) and "run this python: ..." (``execute_code``). It
    only calls tools present in the ``tools`` it is offered, with arguments shaped to each
    tool's schema, several in one turn when a message asks several things.

    After the tool results come back it writes the answer from them (it reads the ``role:
    tool`` messages answering its last calls). It is honest: a failed call is reported with
    the tool's error; a request it does not recognise, or whose tool is not offered, is
    answered with what it can do instead, never with an invented answer.

    Hostile input: only the first 20,000 characters of a message are read, every pattern
    runs in linear time, and nothing in a message is ever evaluated (math goes to the math
    tool as text, code to the sandboxed code tool).
    """

    @property
    def supports_strict_tools(self) -> bool:
        """The offline model reads any schema; non-strict ones are simpler to fill."""
        return False

    def chat(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        tool_choice: ToolChoice | None = None,
    ) -> ChatResponse:
        """Plan tool calls for the last user message, or answer from the last tool results.

        Args:
            messages: The conversation (OpenAI format).
            tools: The tools it may call; calls are only planned for these.
            tool_choice: ``"none"`` makes it answer without calling tools; a named tool
                (``{"type": "function", "function": {"name": ...}}``) limits it to that
                tool. ``"required"`` changes nothing: it calls tools when the message asks
                for something a tool does, and otherwise says what it can do.

        Returns:
            An assistant turn with ``tool_calls``, or with the final text.
        """
        last = messages[-1] if messages else {}
        if last.get("role") == "tool":
            return self._answer(messages)
        question = _text(last.get("content")) if last.get("role") == "user" else ""
        reading = read_message(question)
        schemas = offered_schemas(tools) if tool_choice != "none" else {}
        forced = forced_tool(tool_choice)
        if forced is not None:  # only that tool may be called
            schemas = {name: schema for name, schema in schemas.items() if name == forced}
        calls, unserved = plan(reading.intents, schemas)
        if not calls:
            return self._reply(self._without_tools(question, reading.intents, unserved, schemas))
        tool_calls = [
            {
                "id": f"call_{len(messages)}_{i}",
                "type": "function",
                "function": {
                    "name": call.tool,
                    "arguments": json.dumps(call.arguments, ensure_ascii=False),
                },
            }
            for i, call in enumerate(calls)
        ]
        message: Message = {"role": "assistant", "content": None, "tool_calls": tool_calls}
        return ChatResponse(message=message, finish_reason="tool_calls", model="offline")

    @staticmethod
    def _reply(text: str) -> ChatResponse:
        message: Message = {"role": "assistant", "content": text}
        return ChatResponse(message=message, finish_reason="stop", model="offline")

    def _answer(self, messages: Sequence[Mapping[str, Any]]) -> ChatResponse:
        results: dict[str, Mapping[str, Any]] = {}
        index = len(messages) - 1
        while index >= 0 and messages[index].get("role") == "tool":
            message = messages[index]
            results[str(message.get("tool_call_id"))] = _parse_result(message.get("content"))
            index -= 1
        calls = messages[index].get("tool_calls") if index >= 0 else None
        question = _last_user_text(messages[: max(index, 0)])
        lines: list[str] = []
        for call in calls if isinstance(calls, list) else []:
            function = call.get("function", {}) if isinstance(call, Mapping) else {}
            name = str(function.get("name", ""))
            arguments = _parse_arguments(function.get("arguments"))
            result = results.get(str(call.get("id")))
            if result is None:
                lines.append(f"I got no result from the {name} tool.")
            else:
                lines.append(result_sentence(name, arguments, result, question))
        if question:
            reading = read_message(question)
            lines += [f"I didn't understand {clip(s, 120)!r}." for s in reading.unmatched]
        return self._reply("\n".join(lines) if lines else "I have no results to report.")

    def _without_tools(
        self,
        question: str,
        intents: Sequence[Intent],
        unserved: Sequence[Intent],
        schemas: Mapping[str, Any],
    ) -> str:
        can = _what_i_can(schemas)
        if any(i.kind == "greeting" for i in intents) and not unserved:
            return "Hello! I'm the offline assistant. " + can
        if unserved:
            needs = sorted({_KIND_NEEDS[i.kind] for i in unserved if i.kind in _KIND_NEEDS})
            return f"I can't do that here: it needs {' and '.join(needs)}, which is not available. " + can
        shown = clip(question, 120) if question.strip() else "(an empty message)"
        return (
            f"I'm the offline assistant and I don't know how to answer {shown!r} without "
            f"making something up. {can} For open-ended questions, point me at a real model "
            "with --base-url."
        )


_KNOWN = frozenset(name for names, _ in _EXAMPLES for name in names)
_LISTED = 20


def _what_i_can(schemas: Mapping[str, Any]) -> str:
    """What the offered tools let it do, naming the tools it has no phrasing for."""
    abilities = [text for names, text in _EXAMPLES if any(n in schemas for n in names)]
    others = [name for name in schemas if name not in _KNOWN]
    parts = ["I can help with " + "; ".join(abilities) + "."] if abilities else []
    if others:
        shown = ", ".join(others[:_LISTED]) + (f" and {len(others) - _LISTED} more" if len(others) > _LISTED else "")
        parts.append(
            f"{'Other tools' if abilities else 'The tools'} offered to me: {shown}. I call those only when a "
            "real model decides to (--base-url and --model), or try each once with --model test."
        )
    return " ".join(parts) if parts else "No tools are offered to me."


def _parse_result(content: Any) -> Mapping[str, Any]:
    try:
        parsed = json.loads(_text(content))
    except ValueError:
        return {"status": "error", "error": "the tool result was not JSON", "error_type": "invalid"}
    return parsed if isinstance(parsed, Mapping) else {"status": "success", "data": parsed}


def _parse_arguments(arguments: Any) -> Mapping[str, Any]:
    if isinstance(arguments, Mapping):
        return arguments
    try:
        parsed = json.loads(arguments) if isinstance(arguments, str) else {}
    except ValueError:
        return {}
    return parsed if isinstance(parsed, Mapping) else {}


def _last_user_text(messages: Sequence[Mapping[str, Any]]) -> str:
    for message in reversed(messages):
        if message.get("role") == "user":
            return _text(message.get("content"))
    return ""
