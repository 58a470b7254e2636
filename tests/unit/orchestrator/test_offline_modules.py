"""The offline model's module requests: reading them, planning the build call, answering."""

from __future__ import annotations

import json
from typing import Any

import pytest

from orchestrator.offline import OfflineModel
from orchestrator.offline._intents import read_message
from orchestrator.offline._modules import read_module_request
from tools.builtin.modules import BuildRequest
from tools.schema import model_schema


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Build a module for my running log at http://127.0.0.1:8000/api/runs",
            {
                "name": "Running log",
                "category": "fitness",
                "api_url": "http://127.0.0.1:8000/api/runs",
                "requires_api_key": False,
                "auth_type": "none",
            },
        ),
        (
            "Please create an adapter for my Steam games from https://api.example.com/games with my api key",
            {
                "name": "Steam games",
                "category": "gaming",
                "api_url": "https://api.example.com/games",
                "requires_api_key": True,
                "auth_type": "api_key",
            },
        ),
        (
            "make a new data source for my sleep tracker, it needs a token",
            {"name": "Sleep tracker, it", "category": "health", "api_url": "", "requires_api_key": True},
        ),
        ("build a connector for my mastodon posts", {"category": "social", "requires_api_key": False}),
    ],
)
def test_module_requests_are_read(text: str, expected: dict[str, Any]) -> None:
    (intent,) = read_message(text).intents
    assert intent.kind == "module"
    assert {k: intent.slots[k] for k in expected} == expected


@pytest.mark.parametrize(
    "text",
    ["build a house", "create a reminder for tomorrow", "what is a module?", "open https://example.com/module"],
)
def test_other_requests_are_not_module_requests(text: str) -> None:
    assert read_module_request(text) is None


def _tool(name: str, parameters: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": "", "parameters": parameters}}


def test_the_build_call_fits_the_offered_tool_and_the_answer_says_what_is_next() -> None:
    flat = {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ["build", "validate"]},
            **model_schema(BuildRequest)["properties"],
        },
        "required": ["action"],
    }
    model = OfflineModel()
    question = {"role": "user", "content": "Build a module for my running log at http://127.0.0.1:8000/api/runs"}
    turn = model.chat([question], tools=[_tool("module_pipeline", flat)])
    (call,) = turn.tool_calls
    assert call["function"]["name"] == "module_pipeline"
    arguments = json.loads(call["function"]["arguments"])
    assert arguments["action"] == "build" and arguments["category"] == "fitness"

    old = model.chat([question], tools=[_tool("build_module", model_schema(BuildRequest))])
    assert old.tool_calls[0]["function"]["name"] == "build_module"

    result = {
        "status": "success",
        "data": {
            "module_id": "running_log",
            "manifest": {"category": "fitness", "api_url": "http://127.0.0.1:8000/api/runs"},
            "next": "Adapt adapter.py to the API with write_code, then validate.",
        },
    }
    answer = model.chat(
        [question, turn.message, {"role": "tool", "tool_call_id": call["id"], "content": json.dumps(result)}]
    )
    assert answer.content == (
        "I built the module 'running_log' (fitness, reading http://127.0.0.1:8000/api/runs) from the template. "
        "Next: Adapt adapter.py to the API with write_code, then validate."
    )


def test_without_module_tools_it_says_what_it_can_do() -> None:
    reply = OfflineModel().chat([{"role": "user", "content": "Build a module for my runs at http://x.example/runs"}])
    assert reply.tool_calls == []
    assert reply.content is not None
    assert reply.content.startswith(
        "I can't do that here: it needs the module tools (pip install -e '.[modules]'), which is not available."
    )


def test_validation_results_are_summarised() -> None:
    from orchestrator.offline._modules import module_sentence

    failed = {
        "module_id": "runs",
        "passed": False,
        "findings": [{"file": "adapter.py", "line": 1, "message": "import of 'os' is not allowed"}],
    }
    assert module_sentence({"action": "validate"}, failed) == (
        "The module 'runs' did not pass validation: adapter.py:1: import of 'os' is not allowed."
    )
    passed = {"module_id": "runs", "passed": True, "next": "Call install."}
    assert module_sentence({"action": "validate"}, passed) == "The module 'runs' passed validation. Next: Call install."
    assert (
        module_sentence({"action": "uninstall"}, {"module_id": "runs"}) == "module_pipeline uninstall for 'runs': done."
    )
