"""The full MCP client against a real SDK server, over stdio and streamable HTTP: sampling,
elicitation and roots served only when the application passes handlers, and tools the server
marks task-capable called as MCP tasks (polled, progress routed, cancelled on timeout)."""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from tools import LocalToolRegistry
from tools.external.mcp import (
    ElicitationRequest,
    ElicitationResult,
    MCPClientHandlers,
    MCPProgress,
    MCPRequestDeclined,
    MCPToolset,
    SamplingRequest,
    SamplingResult,
)

pytestmark = pytest.mark.mcp

CAPABILITY_TOOLS = {"sample_llm", "ask_name", "show_roots"}


class Recorder:
    """Handlers that answer as told and keep what they were asked."""

    def __init__(self, roots: list[Path]) -> None:
        self.sampled: list[SamplingRequest] = []
        self.elicited: list[ElicitationRequest] = []
        self.sample_reply: SamplingResult | Exception = SamplingResult(text="Lisbon", model="tiny-model")
        self.answer: ElicitationResult | Exception = ElicitationResult("accept", {"name": "Ada"})
        self.roots = roots
        self.threads: set[str] = set()

    def sample(self, request: SamplingRequest) -> SamplingResult:
        self.sampled.append(request)
        self.threads.add(threading.current_thread().name)
        if isinstance(self.sample_reply, Exception):
            raise self.sample_reply
        return self.sample_reply

    def elicit(self, request: ElicitationRequest) -> ElicitationResult:
        self.elicited.append(request)
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer

    def handlers(self) -> MCPClientHandlers:
        return MCPClientHandlers(sampling=self.sample, elicitation=self.elicit, roots=lambda: self.roots)


@pytest.fixture(params=["stdio", "http"])
def server(
    request: pytest.FixtureRequest, servers_dir: Path, mcp_env: dict[str, str], start_http_server: Callable[..., str]
) -> dict[str, Any]:
    """How to reach the features server: a fresh process per test (its task table is per process)."""
    if request.param == "stdio":
        return {"command": [sys.executable, str(servers_dir / "features_server.py")], "env": mcp_env}
    return {"url": start_http_server([sys.executable, str(servers_dir / "features_server.py")])}


@pytest.fixture
def recorder(tmp_path: Path) -> Recorder:
    (tmp_path / "workspace").mkdir()
    return Recorder([tmp_path / "workspace"])


@pytest.fixture
def progress() -> list[MCPProgress]:
    return []


@pytest.fixture
def toolset(server: dict[str, Any], recorder: Recorder, progress: list[MCPProgress]) -> Iterator[MCPToolset]:
    with MCPToolset(
        **server, handlers=recorder.handlers(), call_timeout=30, progress_callback=progress.append
    ) as toolset:
        yield toolset


def test_a_client_without_handlers_declares_nothing_and_is_offered_nothing_extra(server: dict[str, Any]) -> None:
    with MCPToolset(**server, call_timeout=30) as plain:
        assert not CAPABILITY_TOOLS & {tool.name for tool in plain.tools()}


def test_with_handlers_the_capability_tools_are_offered(toolset: MCPToolset) -> None:
    assert {tool.name for tool in toolset.tools()} >= CAPABILITY_TOOLS


def test_sampling_is_answered_by_the_handler_off_the_event_loop(toolset: MCPToolset, recorder: Recorder) -> None:
    result = toolset.call("sample_llm", {"prompt": "Capital of Portugal?"})
    assert result.data == "tiny-model said: Lisbon"
    (asked,) = recorder.sampled
    assert asked.messages == ({"role": "user", "content": "Capital of Portugal?"},)
    assert (asked.system_prompt, asked.max_tokens, asked.model_hints) == ("Answer in one word.", 50, ("small-model",))
    assert asked.server == toolset.label
    assert not any(name.startswith("tooldeck-mcp") for name in recorder.threads)  # not the session's loop


def test_a_declined_sampling_request_reaches_the_server_as_a_rejection(toolset: MCPToolset, recorder: Recorder) -> None:
    recorder.sample_reply = MCPRequestDeclined("not approved at the terminal")
    result = toolset.call("sample_llm", {"prompt": "spend tokens"})
    assert result.error is not None and "User rejected sampling request: not approved" in result.error.message
    recorder.sample_reply = RuntimeError("model endpoint down, key sk-secret")
    failed = toolset.call("sample_llm", {"prompt": "again"})
    assert failed.error is not None and "sk-secret" not in failed.error.message


ANSWERS: list[tuple[ElicitationResult | Exception, dict[str, Any]]] = [
    (ElicitationResult("accept", {"name": "Ada"}), {"action": "accept", "content": {"name": "Ada"}}),
    (ElicitationResult("decline"), {"action": "decline", "content": None}),
    (ElicitationResult("cancel"), {"action": "cancel", "content": None}),
    (ElicitationResult("accept", {"nom": 3}), {"action": "decline", "content": None}),  # not what was asked
    (MCPRequestDeclined("nobody to ask"), {"action": "decline", "content": None}),
]


def test_elicitation_is_routed_to_the_handler(toolset: MCPToolset, recorder: Recorder) -> None:
    for answer, seen in ANSWERS:
        recorder.answer = answer
        assert json.loads(toolset.call("ask_name").data) == seen, answer
    assert len(recorder.elicited) == len(ANSWERS)
    asked = recorder.elicited[0]
    assert (asked.message, asked.mode) == ("What is your name?", "form")
    assert asked.requested_schema["required"] == ["name"]


def test_roots_are_the_workspace_as_file_uris(toolset: MCPToolset, recorder: Recorder, tmp_path: Path) -> None:
    assert json.loads(toolset.call("show_roots").data) == [
        {"uri": (tmp_path / "workspace").as_uri(), "name": "workspace"}
    ]
    recorder.roots = [tmp_path / "workspace", tmp_path]  # read at each roots/list
    assert len(json.loads(toolset.call("show_roots").data)) == 2


def test_a_task_required_tool_runs_as_a_task_with_progress(toolset: MCPToolset, progress: list[MCPProgress]) -> None:
    result = toolset.call("slow_report", {"topic": "sales", "steps": 3})
    assert result.ok and result.data == "report on sales: 3 sections"
    assert [(p.tool, p.progress, p.total, p.message) for p in progress] == [
        ("slow_report", 1.0, 3.0, "section 1"),
        ("slow_report", 2.0, 3.0, "section 2"),
        ("slow_report", 3.0, 3.0, "section 3"),
    ]
    assert toolset.call("maybe_task", {"x": "optional"}).data == "optional ran as a task"
    failed = toolset.call("failing_task")
    assert failed.error is not None and failed.error.message == "the report failed: disk full"
    assert json.loads(toolset.call("task_states").data) == {
        "slow_report": "completed",
        "maybe_task": "completed",
        "failing_task": "failed",
    }


def test_a_task_is_cancelled_on_timeout(toolset: MCPToolset) -> None:
    stuck = toolset.call("stuck_task", timeout=1.5)
    assert stuck.error is not None and stuck.error.type == "timeout"
    assert json.loads(toolset.call("task_states").data) == {"stuck_task": "cancelled"}


def test_a_task_is_cancelled_when_the_caller_is(server: dict[str, Any]) -> None:
    async def main() -> Any:
        async with MCPToolset(**server, call_timeout=60) as toolset:
            await toolset.atools()
            stuck = toolset.tool("stuck_task")
            call = asyncio.ensure_future(stuck.aexecute())
            while not call.done():  # wait for the task to exist on the server, then cancel
                states = json.loads((await toolset.tool("task_states").aexecute()).data)
                if states.get("stuck_task") == "working":
                    call.cancel()
                    break
                await asyncio.sleep(0.01)
            with pytest.raises(asyncio.CancelledError):
                await call
            deadline = time.monotonic() + 60  # a bound, not a timing assertion
            while time.monotonic() < deadline:  # the cancel request is sent as the call unwinds
                states = json.loads((await toolset.tool("task_states").aexecute()).data)
                if states["stuck_task"] != "working":
                    break
                await asyncio.sleep(0.01)
            return states

    assert asyncio.run(main()) == {"stuck_task": "cancelled"}


def test_through_a_registry_every_path_works(toolset: MCPToolset) -> None:
    registry = LocalToolRegistry()
    for tool in toolset.tools():
        registry.register(tool)
    assert registry("slow_report", topic="q3", steps=1)["data"] == "report on q3: 1 sections"
    assert asyncio.run(registry.acall_tool("sample_llm", prompt="hi")).data == "tiny-model said: Lisbon"


def test_spawn_per_call_toolsets_run_tasks_and_serve_callbacks_too(server: dict[str, Any], recorder: Recorder) -> None:
    with MCPToolset(**server, handlers=recorder.handlers(), persistent=False, call_timeout=30) as toolset:
        assert toolset.call("slow_report", {"topic": "fresh", "steps": 2}).data == "report on fresh: 2 sections"
        assert toolset.call("sample_llm", {"prompt": "again"}).data == "tiny-model said: Lisbon"
