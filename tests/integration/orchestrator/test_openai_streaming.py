"""``--stream``: OpenAIChatModel reads server-sent events from a real server on 127.0.0.1 that
streams like OpenAI (HTTP/1.1 chunked, one event per chunk, tool-call deltas split mid-JSON);
text reaches ``on_delta`` while the stream is still open, and tool calls assembled from the
stream are validated exactly as a whole message (issue 21 item 6)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from orchestrator import AgentGraph, ChatModelHTTPError, ChatModelResponseError, OpenAIChatModel, RunHooks
from tests.integration.orchestrator._loopback import end_event_stream, send_event, serving, start_event_stream
from tools import LocalToolRegistry


@dataclass
class Script:
    """One streamed answer: the ``data`` of each event (JSON chunks, or raw text)."""

    events: list[Any]
    status: int = 200
    content_type: str = "text/event-stream"
    wait_for_client: bool = False  # send each text chunk only once the client has seen the last


@dataclass
class SSEServer:
    scripts: list[Script] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    seen: threading.Semaphore = field(default_factory=lambda: threading.Semaphore(0))
    waited: list[bool] = field(default_factory=list)
    base_url: str = ""


def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "model": "stream-model",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        **extra,
    }


def handler(server: SSEServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
            server.requests.append({"body": body, "accept": self.headers.get("Accept")})
            script = server.scripts.pop(0) if len(server.scripts) > 1 else server.scripts[0]
            if script.content_type != "text/event-stream":
                payload = json.dumps(script.events[0]).encode()
                self.send_response(script.status)
                self.send_header("Content-Type", script.content_type)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
                return
            start_event_stream(self, script.status)
            for event in script.events:
                send_event(self, event)
                text = isinstance(event, dict) and event["choices"] and event["choices"][0]["delta"].get("content")
                if script.wait_for_client and text:
                    server.waited.append(server.seen.acquire(timeout=30))  # the client saw it mid-stream
            end_event_stream(self)

    return Handler


@pytest.fixture
def sse() -> Iterator[SSEServer]:
    server = SSEServer()
    with serving(handler(server)) as url:
        server.base_url = f"{url}/v1"
        yield server


def model(server: SSEServer, **options: Any) -> OpenAIChatModel:
    return OpenAIChatModel(server.base_url, "stream-model", timeout=30, stream=True, sleep=lambda s: None, **options)


WEATHER_CALLS = [
    chunk({"role": "assistant", "content": None}),
    chunk({"tool_calls": [{"index": 0, "id": "call_w", "type": "function",
                           "function": {"name": "weather", "arguments": ""}}]}),
    chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"ci'}}]}),
    chunk({"tool_calls": [{"index": 0, "function": {"arguments": 'ty": "Lis'}}]}),
    chunk({"tool_calls": [{"index": 0, "function": {"arguments": 'bon", "days'}}]}),
    chunk({"tool_calls": [{"index": 1, "id": "call_a", "type": "function",
                           "function": {"name": "add", "arguments": '{"a": 2,'}}]}),
    chunk({"tool_calls": [{"index": 0, "function": {"arguments": '": 2}'}}]}),
    chunk({"tool_calls": [{"index": 1, "function": {"arguments": ' "b": 3}'}}]}),
    chunk({}, "tool_calls"),
    chunk({}, None, usage={"prompt_tokens": 9, "completion_tokens": 7, "total_tokens": 16}) | {"choices": []},
]  # fmt: skip


def test_text_reaches_on_delta_while_the_stream_is_open(sse: SSEServer) -> None:
    words = ["The ", "weather ", "is ", "fine."]
    sse.scripts.append(
        Script([chunk({"role": "assistant"}), *(chunk({"content": w}) for w in words), chunk({}, "stop")],
               wait_for_client=True)
    )  # fmt: skip
    pieces: list[str] = []

    def on_delta(text: str) -> None:
        pieces.append(text)
        sse.seen.release()

    response = model(sse).chat([{"role": "user", "content": "weather?"}], on_delta=on_delta)
    assert pieces == words
    assert sse.waited == [True, True, True, True]  # every piece arrived before the server sent the next
    assert response.message == {"role": "assistant", "content": "The weather is fine."}
    assert response.finish_reason == "stop"
    assert response.model == "stream-model"
    assert sse.requests[0]["body"]["stream"] is True
    assert sse.requests[0]["accept"] == "text/event-stream, application/json"


def test_tool_calls_split_mid_json_are_assembled_like_a_whole_message(sse: SSEServer) -> None:
    sse.scripts.append(Script(WEATHER_CALLS))
    streamed = model(sse).chat([{"role": "user", "content": "go"}])
    assert streamed.message == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "call_w", "type": "function",
             "function": {"name": "weather", "arguments": '{"city": "Lisbon", "days": 2}'}},
            {"id": "call_a", "type": "function", "function": {"name": "add", "arguments": '{"a": 2, "b": 3}'}},
        ],
    }  # fmt: skip
    assert streamed.finish_reason == "tool_calls"
    assert streamed.usage == {"prompt_tokens": 9, "completion_tokens": 7, "total_tokens": 16}


def test_the_stream_is_checked_exactly_as_a_whole_message(sse: SSEServer) -> None:
    """The same malformed calls, streamed or whole, give the same turn."""
    nameless_and_idless = [
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]}),  # no name: dropped
        chunk({"tool_calls": [{"index": 1, "function": {"name": "add", "arguments": {"a": 1}}}]}),  # dict args, no id
        chunk({}, "tool_calls"),
    ]
    sse.scripts.append(Script(nameless_and_idless))
    streamed = model(sse).chat([{"role": "user", "content": "go"}])
    whole = {
        "choices": [{
            "message": {"role": "assistant", "content": None, "tool_calls": [
                {"id": None, "type": "function", "function": {"arguments": "{}"}},
                {"id": None, "type": "function", "function": {"name": "add", "arguments": {"a": 1}}},
            ]},
            "finish_reason": "tool_calls",
        }],
        "model": "stream-model",
    }  # fmt: skip
    sse.scripts[:] = [Script([whole], content_type="application/json")]
    plain = OpenAIChatModel(sse.base_url, "stream-model", timeout=30).chat([{"role": "user", "content": "go"}])
    assert streamed.message == plain.message
    assert streamed.message["tool_calls"] == [
        {"id": "call_0_1", "type": "function", "function": {"name": "add", "arguments": '{"a": 1}'}}
    ]


class Deltas(RunHooks):
    def __init__(self) -> None:
        self.pieces: list[str] = []

    def on_model_delta(self, text: str) -> None:
        self.pieces.append(text)


def test_an_agent_runs_streamed_tool_calls_and_truncated_arguments_are_validation_errors(sse: SSEServer) -> None:
    registry = LocalToolRegistry()

    @registry.tool
    def weather(city: str, days: int) -> str:
        """The weather.

        Args:
            city: Where.
            days: How many days.
        """
        return f"{city}: sunny for {days} days"

    @registry.tool
    def add(a: int, b: int) -> int:
        """Add.

        Args:
            a: First.
            b: Second.
        """
        return a + b

    cut = {"index": 0, "id": "call_t", "function": {"name": "add", "arguments": '{"a": 1'}}
    truncated = [chunk({"tool_calls": [cut]}), chunk({}, "tool_calls")]
    answer = [chunk({"content": "Lisbon is "}), chunk({"content": "sunny."}), chunk({}, "stop")]
    sse.scripts.extend([Script(WEATHER_CALLS), Script(truncated), Script(answer)])
    hooks = Deltas()
    graph = AgentGraph(model(sse), registry, hooks=hooks)
    try:
        run = graph.run("weather in Lisbon and 2+3")
    finally:
        graph.tools_node.close()
    assert [(r["name"], r["status"]) for r in run.tool_results] == [
        ("weather", "success"),
        ("add", "success"),
        ("add", "error"),
    ]
    assert run.tool_results[2]["error_type"] == "validation_error"  # as for the same text in a whole message
    assert run.answer == "Lisbon is sunny."
    assert hooks.pieces == ["Lisbon is ", "sunny."]


@pytest.mark.parametrize(
    ("events", "message"),
    [
        (["{not json"], "a streamed chunk is not JSON"),
        ([{"error": {"message": "model overloaded"}}], "the server sent an error mid-stream: model overloaded"),
        ([], "sent an event stream without a chunk"),
        (["[1, 2]"], "a streamed chunk is not a JSON object"),
    ],
)
def test_broken_streams_are_response_errors(sse: SSEServer, events: list[Any], message: str) -> None:
    sse.scripts.append(Script(events))
    with pytest.raises(ChatModelResponseError, match=message):
        model(sse).chat([{"role": "user", "content": "go"}])


def test_errors_and_servers_that_do_not_stream(sse: SSEServer) -> None:
    sse.scripts.append(Script([{"error": {"message": "bad model"}}], status=404, content_type="application/json"))
    with pytest.raises(ChatModelHTTPError, match="HTTP 404: bad model"):
        model(sse).chat([{"role": "user", "content": "go"}])
    ignored = {"choices": [{"message": {"role": "assistant", "content": "whole"}, "finish_reason": "stop"}]}
    sse.scripts[:] = [Script([ignored], content_type="application/json")]
    pieces: list[str] = []
    assert model(sse).chat([{"role": "user", "content": "go"}], on_delta=pieces.append).content == "whole"
    assert pieces == []
    assert model(sse).streams and not OpenAIChatModel(sse.base_url, "m").streams
