"""Streamed chat completions (server-sent events) put back together as one completion.

An OpenAI-compatible server asked for ``"stream": true`` answers ``text/event-stream``:
``data: {chunk}`` events, each with a ``choices[0].delta`` (a piece of ``content``, or
pieces of ``tool_calls`` by ``index``: the ``id`` and ``function.name`` once, the
``function.arguments`` JSON text cut anywhere, even mid-string), then ``data: [DONE]``.
`StreamAssembler` joins the pieces into the body a non-streaming request would have had,
so the client validates it exactly as a whole message (`OpenAIChatModel._parse`): a tool
call assembled from a stream is checked like any other.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from typing import Any

__all__ = ["StreamAssembler", "StreamError", "sse_data"]

#: Most tool calls one streamed turn may make.
MAX_STREAMED_CALLS = 128


class StreamError(ValueError):
    """The stream is not a chat-completion stream (a chunk that is not JSON, an error event)."""


def sse_data(lines: Iterable[bytes]) -> Iterator[str]:
    """The ``data`` of each server-sent event, until ``[DONE]`` (comments and other fields skipped).

    Lines of one event's ``data`` are joined with newlines, as the SSE specification says.
    """
    pending: list[str] = []
    for raw in lines:
        line = raw.decode("utf-8", errors="replace").rstrip("\r")
        if not line:  # an event ends
            if pending:
                data = "\n".join(pending)
                pending = []
                if data.strip() == "[DONE]":
                    return
                yield data
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        if field == "data":
            pending.append(value[1:] if value.startswith(" ") else value)
    if pending:
        data = "\n".join(pending)
        if data.strip() != "[DONE]":
            yield data


class StreamAssembler:
    """Joins streamed chunks into one ``chat.completion`` body.

    Args:
        on_delta: Told each piece of answer text as it arrives.
    """

    def __init__(self, on_delta: Callable[[str], None] | None = None) -> None:
        self._on_delta = on_delta
        self._content: list[str] = []
        self._calls: dict[int, dict[str, Any]] = {}
        self._finish: str | None = None
        self._usage: dict[str, Any] | None = None
        self._model: str | None = None
        self.chunks = 0

    def feed(self, data: str) -> None:
        """One event's data (a JSON chunk).

        Raises:
            StreamError: not JSON, not an object, or an error the server sent mid-stream.
        """
        try:
            chunk = json.loads(data)
        except ValueError:
            raise StreamError(f"a streamed chunk is not JSON ({data[:120]!r})") from None
        if not isinstance(chunk, dict):
            raise StreamError(f"a streamed chunk is not a JSON object ({data[:120]!r})")
        if "error" in chunk:
            error = chunk["error"]
            said = error.get("message", error) if isinstance(error, dict) else error
            raise StreamError(f"the server sent an error mid-stream: {str(said)[:300]}")
        self.chunks += 1
        if isinstance(chunk.get("model"), str):
            self._model = chunk["model"]
        if isinstance(chunk.get("usage"), dict):
            self._usage = chunk["usage"]
        choices = chunk.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            return
        choice = choices[0]
        if isinstance(choice.get("finish_reason"), str):
            self._finish = choice["finish_reason"]
        delta = choice.get("delta")
        if isinstance(delta, dict):
            self._delta(delta)

    def _delta(self, delta: dict[str, Any]) -> None:
        text = delta.get("content")
        if isinstance(text, str) and text:
            self._content.append(text)
            if self._on_delta is not None:
                self._on_delta(text)
        calls = delta.get("tool_calls")
        for piece in calls if isinstance(calls, list) else ():
            if isinstance(piece, dict):
                self._call_piece(piece)

    def _call_piece(self, piece: dict[str, Any]) -> None:
        index = piece.get("index")
        if not isinstance(index, int) or isinstance(index, bool):
            index = len(self._calls) - 1 if self._calls and not piece.get("id") else len(self._calls)
        if index not in self._calls and len(self._calls) >= MAX_STREAMED_CALLS:
            raise StreamError(f"the stream made more than {MAX_STREAMED_CALLS} tool calls in one turn")
        call = self._calls.setdefault(index, {"id": None, "name": "", "arguments": []})
        if isinstance(piece.get("id"), str) and piece["id"]:
            call["id"] = piece["id"]
        function = piece.get("function")
        if not isinstance(function, dict):
            return
        name = function.get("name")
        if isinstance(name, str) and name and name != call["name"]:
            call["name"] += name  # the name comes once; a server that repeats it whole is not doubled
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            call["arguments"].append(arguments)
        elif isinstance(arguments, dict):  # some servers send the object whole
            call["arguments"].append(json.dumps(arguments, ensure_ascii=False))

    def completion(self) -> dict[str, Any]:
        """The body a non-streaming request would have answered."""
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self._content) or None}
        if self._calls:
            message["tool_calls"] = [
                {
                    "id": call["id"],
                    "type": "function",
                    "function": {"name": call["name"], "arguments": "".join(call["arguments"])},
                }
                for _, call in sorted(self._calls.items())
            ]
        body: dict[str, Any] = {"choices": [{"index": 0, "message": message, "finish_reason": self._finish}]}
        if self._usage is not None:
            body["usage"] = self._usage
        if self._model is not None:
            body["model"] = self._model
        return body
