"""OpenAIChatModel against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import logging
import socket
from typing import Any

import pytest

from orchestrator import (
    ChatModelConnectionError,
    ChatModelHTTPError,
    ChatModelResponseError,
    OpenAIChatModel,
)

SECRET = "sk-test-SECRET-0123456789"


def completion(message: dict[str, Any], finish_reason: str = "stop") -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "test-model",
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
    }


class Sleeps:
    def __init__(self) -> None:
        self.calls: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


def make_model(server: Any, **kwargs: Any) -> OpenAIChatModel:
    kwargs.setdefault("sleep", Sleeps())
    return OpenAIChatModel(server.base_url, "test-model", timeout=5, **kwargs)


def test_reads_tool_calls_and_ignores_legacy_function_call(scripted_server: Any) -> None:
    scripted_server.add(
        completion(
            {
                "role": "assistant",
                "content": None,
                "function_call": {"name": "wrong_name", "arguments": "{}"},
                "tool_calls": [
                    {
                        "id": "call_a",
                        "type": "function",
                        "function": {"name": "add", "arguments": '{"a": 1, "b": 2}'},
                    }
                ],
            },
            "tool_calls",
        )
    )
    model = make_model(scripted_server)
    tools = [{"type": "function", "function": {"name": "add", "parameters": {"type": "object"}}}]
    choice = {"type": "function", "function": {"name": "add"}}
    response = model.chat([{"role": "user", "content": "1+2"}], tools=tools, tool_choice=choice)

    assert response.message == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_a",
                "type": "function",
                "function": {"name": "add", "arguments": '{"a": 1, "b": 2}'},
            }
        ],
    }
    assert response.finish_reason == "tool_calls"
    assert response.content is None
    sent = scripted_server.requests[0]
    assert sent.path == "/v1/chat/completions"
    assert sent.body == {
        "model": "test-model",
        "messages": [{"role": "user", "content": "1+2"}],
        "tools": tools,
        "tool_choice": choice,
    }


def test_content_null_without_tool_calls_and_no_tools_key(scripted_server: Any) -> None:
    scripted_server.add(completion({"role": "assistant", "content": None}))
    response = make_model(scripted_server).chat([{"role": "user", "content": "hi"}], tools=[])
    assert response.message == {"role": "assistant", "content": None}
    assert response.tool_calls == []
    assert "tools" not in scripted_server.requests[0].body


def test_normalises_object_arguments_missing_ids_and_drops_nameless_calls(
    scripted_server: Any,
) -> None:
    scripted_server.add(
        completion(
            {
                "role": "assistant",
                "content": [{"type": "text", "text": "part "}, {"type": "text", "text": "two"}],
                "tool_calls": [
                    {"function": {"name": "add", "arguments": {"a": 1}}},
                    {"id": "x", "function": {"arguments": "{}"}},
                    "garbage",
                ],
            }
        )
    )
    response = make_model(scripted_server).chat([{"role": "user", "content": "hi"}])
    assert response.message == {
        "role": "assistant",
        "content": "part two",
        "tool_calls": [
            {
                "id": "call_0_0",
                "type": "function",
                "function": {"name": "add", "arguments": '{"a": 1}'},
            }
        ],
    }


def test_api_key_sent_as_bearer_and_never_logged(scripted_server: Any, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    scripted_server.add({"error": {"message": f"bad key {SECRET}"}}, status=503)
    scripted_server.add({"error": {"message": f"invalid key {SECRET}"}}, status=401)
    model = make_model(scripted_server, api_key=SECRET)
    with pytest.raises(ChatModelHTTPError) as info:
        model.chat([{"role": "user", "content": "hi"}])
    assert scripted_server.requests[0].headers["Authorization"] == f"Bearer {SECRET}"
    assert info.value.status == 401
    assert SECRET not in str(info.value)
    assert SECRET not in info.value.server_message
    assert SECRET not in repr(model)
    assert caplog.records  # debug and retry lines were logged ...
    assert SECRET not in caplog.text  # ... without the key


def test_4xx_error_names_endpoint_status_server_message_and_fix(scripted_server: Any) -> None:
    scripted_server.add({"error": {"message": "model 'nope' not found"}}, status=404)
    sleeps = Sleeps()
    model = make_model(scripted_server, sleep=sleeps)
    with pytest.raises(ChatModelHTTPError) as info:
        model.chat([{"role": "user", "content": "hi"}])
    text = str(info.value)
    assert model.endpoint in text
    assert "HTTP 404" in text
    assert "model 'nope' not found" in text
    assert "--base-url" in text
    assert len(scripted_server.requests) == 1  # 4xx is not retried
    assert sleeps.calls == []


def test_retries_429_honouring_retry_after_then_succeeds(scripted_server: Any) -> None:
    scripted_server.add({"error": "slow down"}, status=429, headers={"Retry-After": "7"})
    scripted_server.add("upstream exploded", status=502)
    scripted_server.add(completion({"role": "assistant", "content": "ok"}))
    sleeps = Sleeps()
    model = make_model(scripted_server, sleep=sleeps, initial_backoff=0.25)
    response = model.chat([{"role": "user", "content": "hi"}])
    assert response.content == "ok"
    assert sleeps.calls == [7.0, 0.5]  # Retry-After, then exponential (0.25 * 2**1)
    assert len(scripted_server.requests) == 3


def test_retry_after_is_capped_and_retries_are_bounded(scripted_server: Any) -> None:
    scripted_server.add({"error": "busy"}, status=503, headers={"Retry-After": "3600"})
    sleeps = Sleeps()
    model = make_model(scripted_server, sleep=sleeps, max_retries=2, max_retry_after=30)
    with pytest.raises(ChatModelHTTPError) as info:
        model.chat([{"role": "user", "content": "hi"}])
    assert info.value.status == 503
    assert sleeps.calls == [30.0, 30.0]
    assert len(scripted_server.requests) == 3


def test_non_json_and_choiceless_bodies_are_response_errors(scripted_server: Any) -> None:
    scripted_server.add("<html>hello</html>")
    scripted_server.add({"object": "list", "data": []})
    model = make_model(scripted_server)
    with pytest.raises(ChatModelResponseError, match="not JSON"):
        model.chat([{"role": "user", "content": "hi"}])
    with pytest.raises(ChatModelResponseError, match=r"choices\[0\]\.message"):
        model.chat([{"role": "user", "content": "hi"}])


def test_oversized_body_is_refused(scripted_server: Any) -> None:
    scripted_server.add(b"x" * 300_000)
    model = make_model(scripted_server, max_response_bytes=100_000)
    with pytest.raises(ChatModelResponseError, match="more than 100000 bytes"):
        model.chat([{"role": "user", "content": "hi"}])


def test_connection_refused_is_retried_then_reported() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    sleeps = Sleeps()
    model = OpenAIChatModel(f"http://127.0.0.1:{port}", "m", sleep=sleeps, max_retries=2)
    assert model.endpoint == f"http://127.0.0.1:{port}/v1/chat/completions"
    with pytest.raises(ChatModelConnectionError) as info:
        model.chat([{"role": "user", "content": "hi"}])
    assert str(info.value) == (
        f"chat model endpoint {model.endpoint} could not be reached: connection refused (nothing is listening on "
        "that port); check that the server is running and --base-url is right"
    )  # the URL and the cause, not a page of connection-pool internals
    assert sleeps.calls == [0.5, 1.0]


def test_read_timeout_is_not_retried() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)  # accepts the connection but never answers
        port = listener.getsockname()[1]
        sleeps = Sleeps()
        model = OpenAIChatModel(f"http://127.0.0.1:{port}/v1", "m", timeout=0.2, sleep=sleeps)
        with pytest.raises(ChatModelConnectionError, match=r"did not answer within 0\.2s"):
            model.chat([{"role": "user", "content": "hi"}])
        assert sleeps.calls == []


def test_null_assistant_content_is_sent_the_way_every_server_accepts(
    scripted_server: Any,
) -> None:
    scripted_server.add(completion({"role": "assistant", "content": "fine"}))
    call = {"id": "c", "type": "function", "function": {"name": "add", "arguments": "{}"}}
    conversation: list[dict[str, Any]] = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c", "content": "{}"},
        {"role": "assistant", "content": None},
        {"role": "user", "content": "and?"},
    ]
    make_model(scripted_server).chat(conversation)
    sent = scripted_server.requests[0].body["messages"]
    assert sent[1] == {"role": "assistant", "content": "", "tool_calls": [call]}
    assert sent[3] == {"role": "assistant", "content": ""}
    assert conversation[1]["content"] is None  # the caller's list is untouched
