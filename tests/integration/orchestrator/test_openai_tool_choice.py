"""tool_choice on the wire: 'required' where the server lacks it, and with a single tool."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from orchestrator import ChatModelHTTPError, OpenAIChatModel

TOOLS = [
    {"type": "function", "function": {"name": "add", "parameters": {"type": "object"}}},
    {"type": "function", "function": {"name": "mul", "parameters": {"type": "object"}}},
]
CALL = {"id": "c1", "type": "function", "function": {"name": "add", "arguments": "{}"}}
USER = [{"role": "user", "content": "2+3?"}]


def completion(message: dict[str, Any]) -> dict[str, Any]:
    return {"choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}]}


def model_for(server: Any) -> OpenAIChatModel:
    return OpenAIChatModel(server.base_url, "m", timeout=5, max_retries=0, sleep=lambda _: None)


def test_a_server_without_required_is_asked_with_auto_and_remembered(
    scripted_server: Any, caplog: pytest.LogCaptureFixture
) -> None:
    # llama-cpp-python's chatml-function-calling handler fails with HTTP 500 on "required".
    scripted_server.add({"detail": "AssertionError"}, status=500)
    scripted_server.add(completion({"role": "assistant", "content": None, "tool_calls": [CALL]}))
    with model_for(scripted_server) as model, caplog.at_level(logging.WARNING):
        first = model.chat(USER, tools=TOOLS, tool_choice="required")
        second = model.chat(USER, tools=TOOLS, tool_choice="required")
    assert [c["function"]["name"] for c in first.tool_calls] == ["add"]
    assert second.tool_calls
    sent = [r.body.get("tool_choice") for r in scripted_server.requests]
    assert sent == ["required", "auto", "auto"]  # asked once, then remembered
    assert "rejected tool_choice='required' (HTTP 500)" in caplog.text
    assert "may answer without calling a tool" in caplog.text


def test_required_with_one_tool_is_sent_by_name(scripted_server: Any) -> None:
    scripted_server.add(completion({"role": "assistant", "content": None, "tool_calls": [CALL]}))
    with model_for(scripted_server) as model:
        model.chat(USER, tools=TOOLS[:1], tool_choice="required")
    assert scripted_server.requests[0].body["tool_choice"] == {"type": "function", "function": {"name": "add"}}


def test_other_errors_are_not_retried_as_auto(scripted_server: Any) -> None:
    scripted_server.add({"error": {"message": "bad key"}}, status=401)
    with model_for(scripted_server) as model, pytest.raises(ChatModelHTTPError) as caught:
        model.chat(USER, tools=TOOLS, tool_choice="required")
    assert caught.value.status == 401
    assert len(scripted_server.requests) == 1
    scripted_server.replies.clear()
    scripted_server.add({"detail": "boom"}, status=500)
    with model_for(scripted_server) as model, pytest.raises(ChatModelHTTPError):
        model.chat(USER, tools=TOOLS, tool_choice="auto")  # a 500 on "auto" is just an error
    assert len(scripted_server.requests) == 2
