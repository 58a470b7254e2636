"""Reading the pending tool calls out of a conversation state.

Accepts OpenAI-format dict messages and, by duck typing (no import), LangChain message
objects such as a LangGraph ``MessagesState`` holds after its ``add_messages`` reducer.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tools.approvals import ApprovedCall

_log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class PendingCall:
    """One tool call to answer.

    Attributes:
        index: Position among the pending calls (answers keep this order).
        id: The ``tool_call_id`` to answer.
        name: The function name the model asked for (may be empty when it sent none).
        arguments: The arguments as sent: JSON text (bytes too), a mapping, or None;
            any other value (a list, a number) is turned into JSON text, so the registry
            answers it with its usual "send a JSON object" validation error.
        approved: A person's approval of exactly this call (its ``arguments`` are then the
            approved ones); the registry runs it despite its policy.
    """

    index: int
    id: str
    name: str
    arguments: Any
    approved: ApprovedCall | None = None


def _field(obj: Any, key: str) -> Any:
    if type(obj) is dict:  # the common case, without the slower ABC check
        return obj.get(key)
    if isinstance(obj, Mapping):
        return obj.get(key)
    return getattr(obj, key, None)


def _role(message: Any) -> str | None:
    role = _field(message, "role")
    if isinstance(role, str):
        return role
    kind = getattr(message, "type", None)  # LangChain: "ai", "tool", "human", "system"
    return {"ai": "assistant", "tool": "tool", "human": "user", "system": "system"}.get(
        kind if isinstance(kind, str) else ""
    )


def messages_of(state: Any) -> Sequence[Any]:
    """The message list of a state (a mapping with ``messages``, or an object with it)."""
    messages = _field(state, "messages")
    if type(messages) is list:
        return messages
    if isinstance(messages, Sequence) and not isinstance(messages, (str, bytes)):
        return messages
    return ()


def pending_calls(messages: Sequence[Any]) -> list[PendingCall]:
    """The tool calls of the last assistant message that no later tool message answered.

    Malformed entries never raise: a call without an id gets a generated one (and a
    warning), a call without a name gets an empty name (answered as an unknown tool).
    """
    answered: set[str] = set()
    for message in reversed(messages):
        role = _role(message)
        if role == "tool":
            call_id = _field(message, "tool_call_id")
            if isinstance(call_id, str):
                answered.add(call_id)
            continue
        if role != "assistant":
            return []
        raw_calls = _field(message, "tool_calls")
        if type(raw_calls) is not list and (not isinstance(raw_calls, Sequence) or isinstance(raw_calls, (str, bytes))):
            return []
        calls = [_call_of(i, raw) for i, raw in enumerate(raw_calls)]
        if not answered:
            return calls
        pending = [call for call in calls if call.id not in answered]
        return [PendingCall(i, c.id, c.name, c.arguments) for i, c in enumerate(pending)]
    return []


def _call_of(index: int, raw: Any) -> PendingCall:
    call_id = _field(raw, "id")
    if not isinstance(call_id, str) or not call_id:
        call_id = f"call_missing_id_{index}"
        _log.warning("tool call #%d has no id; answering it as %s", index, call_id)
    function = _field(raw, "function")
    if function is not None:  # OpenAI: {"function": {"name", "arguments"}}
        name, arguments = _field(function, "name"), _field(function, "arguments")
    else:  # LangChain: {"name", "args"}
        name, arguments = _field(raw, "name"), _field(raw, "args")
    if not (arguments is None or isinstance(arguments, (str, bytes, Mapping))):
        arguments = _as_json_text(arguments)
    return PendingCall(index, call_id, name if isinstance(name, str) else "", arguments)


def _as_json_text(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return json.dumps(type(value).__name__)  # a JSON string: "not an object"
