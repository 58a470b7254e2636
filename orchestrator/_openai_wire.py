"""Wire-format helpers of `OpenAIChatModel`: URLs, headers, request and response bodies."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

_log = logging.getLogger(__name__)

SERVER_MESSAGE_CHARS = 500


def endpoint_for(base_url: str) -> str:
    parts = urlsplit(base_url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(
            f"base_url {base_url!r} is not an http(s) URL; pass e.g. "
            "'http://127.0.0.1:8000/v1' or 'https://api.openai.com/v1'"
        )
    if parts.username or parts.password:
        raise ValueError(
            "base_url must not carry credentials; pass the key with api_key "
            "(read from the environment variable named by --api-key-env)"
        )
    path = parts.path.rstrip("/")
    if path.endswith("/chat/completions"):
        path = path[: -len("/chat/completions")]
    if not path:
        path = "/v1"
    return urlunsplit((parts.scheme, parts.netloc, path + "/chat/completions", "", ""))


def wire_messages(messages: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Messages as every server accepts them: an assistant ``content: null`` is sent as "".

    OpenAI accepts both; llama.cpp-based servers reject null (pydantic) and their chat
    templates read ``message.content`` even beside tool calls, so it cannot be left out.
    """
    return [
        {**message, "content": ""}
        if message.get("role") == "assistant" and message.get("content", "") is None
        else message
        for message in messages
    ]


def server_message(raw: bytes) -> str:
    text = raw.decode("utf-8", errors="replace").strip()
    try:
        data = json.loads(text)
    except ValueError:
        return " ".join(text.split())
    if isinstance(data, dict):
        error = data.get("error", data.get("detail", data.get("message")))
        if isinstance(error, dict):
            error = error.get("message", error)
        if error is not None:
            return error if isinstance(error, str) else json.dumps(error)[:SERVER_MESSAGE_CHARS]
    return json.dumps(data)[:SERVER_MESSAGE_CHARS]


def text_of(content: Any) -> str | None:
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts: [{"type": "text", "text": ...}]
        texts = [p.get("text") for p in content if isinstance(p, dict)]
        return "".join(t for t in texts if isinstance(t, str))
    return str(content)


def tool_calls_of(calls: Any, turn: int) -> list[dict[str, Any]]:
    if not isinstance(calls, list):
        return []
    out: list[dict[str, Any]] = []
    for index, call in enumerate(calls):
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            _log.warning("dropping a malformed tool call without a function name: %.200r", call)
            continue
        name: str = function["name"]
        if not name:
            _log.warning("dropping a tool call with an empty function name")
            continue
        arguments = function.get("arguments")
        if arguments is None:
            arguments = "{}"
        elif not isinstance(arguments, str):
            arguments = json.dumps(arguments, ensure_ascii=False)
        call_id = call.get("id")
        if not isinstance(call_id, str) or not call_id:
            call_id = f"call_{turn}_{index}"
        out.append({"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}})
    return out
