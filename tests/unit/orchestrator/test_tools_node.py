"""ToolsNode: every call answered once, in order, whatever happens."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel, Field
from pytest_mock import MockerFixture

from orchestrator.graph import RunHooks, ToolFinished, ToolsNode
from tools import BaseTool, LocalToolRegistry, ToolError


class AddRequest(BaseModel):
    a: int = Field(description="First addend")
    b: int = Field(description="Second addend")


class AddTool(BaseTool[AddRequest, int]):
    name = "add"
    description = "Add two integers."

    def execute_internal(self, request: AddRequest) -> int:
        return request.a + request.b


def call(call_id: str, name: str, arguments: Any) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def state_with(*calls: Any) -> dict[str, Any]:
    return {
        "messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": None, "tool_calls": list(calls)},
        ]
    }


def contents(update: dict[str, Any]) -> list[dict[str, Any]]:
    return [json.loads(message["content"]) for message in update["messages"]]


@pytest.fixture
def registry() -> LocalToolRegistry:
    registry = LocalToolRegistry()
    registry.register(AddTool())

    def boom(reason: str) -> str:
        """Fail on purpose.

        Args:
            reason: Why.
        """
        raise ToolError(f"cannot do it: {reason}")

    def crash() -> str:
        """Crash with an internal error."""
        raise RuntimeError("password=hunter2")

    registry.register(boom)
    registry.register(crash)
    return registry


@pytest.fixture
def node(registry: LocalToolRegistry) -> Iterator[ToolsNode]:
    with ToolsNode(registry) as node:
        yield node


def test_answers_each_call_in_order_with_compact_json(node: ToolsNode) -> None:
    update = node(state_with(call("c1", "add", '{"a": 1, "b": 2}'), call("c2", "add", {"a": 5, "b": 5})))
    assert [m["role"] for m in update["messages"]] == ["tool", "tool"]
    assert [m["tool_call_id"] for m in update["messages"]] == ["c1", "c2"]
    assert contents(update) == [{"status": "success", "data": 3}, {"status": "success", "data": 10}]
    for message in update["messages"]:
        parsed = json.loads(message["content"])
        assert message["content"] == json.dumps(parsed, separators=(",", ":"), ensure_ascii=False)
    assert all(r["metadata"]["tool_name"] == "add" for r in update["tool_results"])
    records = update["tool_results"]
    assert [(r["tool_call_id"], r["name"], r["arguments"], r["status"]) for r in records] == [
        ("c1", "add", {"a": 1, "b": 2}, "success"),
        ("c2", "add", {"a": 5, "b": 5}, "success"),
    ]
    assert all(r["error_type"] is None and r["duration_ms"] >= 0 for r in records)
    assert not any(r["truncated"] for r in records)


def test_every_failure_becomes_an_error_message(node: ToolsNode) -> None:
    update = node(
        state_with(
            call("u", "nope", "{}"),
            call("j", "add", "{not json"),
            call("l", "add", "[1, 2]"),
            call("v", "add", '{"a": "x"}'),
            call("t", "boom", '{"reason": "no account"}'),
            call("x", "crash", None),
            call("ok", "add", '{"a": 2, "b": 2}'),
        )
    )
    assert [m["tool_call_id"] for m in update["messages"]] == ["u", "j", "l", "v", "t", "x", "ok"]
    types = [(r["status"], r["error_type"]) for r in update["tool_results"]]
    assert types == [
        ("error", "unknown_tool"),
        ("error", "validation_error"),
        ("error", "validation_error"),
        ("error", "validation_error"),
        ("error", "execution_error"),
        ("error", "execution_error"),
        ("success", None),
    ]
    bodies = contents(update)
    assert "Available tools" in bodies[0]["error"]
    assert bodies[4]["error"] == "cannot do it: no account"
    assert "hunter2" not in update["messages"][5]["content"]
    assert update["tool_results"][1]["arguments"] == "{not json"


@pytest.mark.parametrize("entry", ["sync", "async"])
def test_exception_escaping_the_registry_is_answered(
    registry: LocalToolRegistry, mocker: MockerFixture, entry: str
) -> None:
    real_sync, real_async = registry.call_tool_raw, registry.acall_tool_raw

    def sync_fault(name: str, arguments: Any, *, call_id: str | None = None) -> Any:
        if name == "crash":
            raise MemoryError("escaped")  # an Exception the tool's own handling let through
        return real_sync(name, arguments, call_id=call_id)

    async def async_fault(name: str, arguments: Any, *, call_id: str | None = None) -> Any:
        if name == "crash":
            raise KeyError("escaped")
        return await real_async(name, arguments, call_id=call_id)

    mocker.patch.object(registry, "call_tool_raw", side_effect=sync_fault)
    mocker.patch.object(registry, "acall_tool_raw", side_effect=async_fault)
    node = ToolsNode(registry)
    state = state_with(call("a", "crash", "{}"), call("b", "add", '{"a": 1, "b": 1}'))
    single = state_with(call("a", "crash", "{}"))
    if entry == "sync":
        updates = [node(state), node(single)]
    else:
        updates = [asyncio.run(node.ainvoke(state)), asyncio.run(node.ainvoke(single))]
    for update in updates:
        first = contents(update)[0]
        assert first["error_type"] == "execution_error"
        assert "escaped" not in first["error"]
    assert contents(updates[0])[1] == {"status": "success", "data": 2}


def test_call_timeout_answers_timeout_and_keeps_the_others(registry: LocalToolRegistry) -> None:
    release = threading.Event()

    def hang() -> str:
        """Wait until released."""
        release.wait(10)
        return "late"

    registry.register(hang)
    node = ToolsNode(registry, call_timeout=0.05)
    try:
        update = node(state_with(call("h", "hang", "{}"), call("a", "add", '{"a": 1, "b": 1}')))
    finally:
        release.set()
    assert [(r["tool_call_id"], r["error_type"]) for r in update["tool_results"]] == [
        ("h", "timeout"),
        ("a", None),
    ]
    assert "0.05 seconds" in contents(update)[0]["error"]


def test_cancelled_run_answers_unfinished_calls_as_cancelled(registry: LocalToolRegistry) -> None:
    started = asyncio.Event()

    async def forever() -> str:
        """Never finish."""
        started.set()
        await asyncio.sleep(3600)
        return "never"

    class QuickCallDone(RunHooks):
        def __init__(self) -> None:
            self.done = threading.Event()

        def on_tool_end(self, event: ToolFinished) -> None:
            if event.call_id == "a":
                self.done.set()

    registry.register(forever)
    hooks = QuickCallDone()
    node = ToolsNode(registry, hooks=hooks)
    state = state_with(call("f", "forever", "{}"), call("a", "add", '{"a": 1, "b": 1}'))

    async def main() -> dict[str, Any]:
        task = asyncio.create_task(node.ainvoke(state))
        await started.wait()
        assert await asyncio.to_thread(hooks.done.wait, 60)  # the quick call has finished (no sleep as a guess)
        task.cancel()
        return await task

    update = asyncio.run(main())
    assert [(r["tool_call_id"], r["status"], r["error_type"]) for r in update["tool_results"]] == [
        ("f", "error", "cancelled"),
        ("a", "success", None),
    ]


def test_sync_tools_run_concurrently_and_within_max_parallel(registry: LocalToolRegistry) -> None:
    barrier = threading.Barrier(2, timeout=5)
    lock = threading.Lock()
    active = [0, 0]  # current, peak

    def meet(n: int) -> int:
        """Wait for a partner call.

        Args:
            n: Call number.
        """
        with lock:
            active[0] += 1
            active[1] = max(active[1], active[0])
        barrier.wait()  # raises BrokenBarrierError (-> error) unless two run at once
        with lock:
            active[0] -= 1
        return n

    registry.register(meet)
    node = ToolsNode(registry, max_parallel=2)
    update = node(state_with(*(call(f"m{i}", "meet", {"n": i}) for i in range(6))))
    assert contents(update) == [{"status": "success", "data": i} for i in range(6)]
    assert active[1] == 2


def test_async_tools_run_concurrently_on_the_loop(registry: LocalToolRegistry) -> None:
    arrived: list[int] = []
    everyone = asyncio.Event()

    async def gather_up(n: int) -> int:
        """Wait until all three calls arrived.

        Args:
            n: Call number.
        """
        arrived.append(n)
        if len(arrived) == 3:
            everyone.set()
        await asyncio.wait_for(everyone.wait(), 5)
        return n

    registry.register(gather_up)
    node = ToolsNode(registry)
    state = state_with(*(call(f"g{i}", "gather_up", {"n": i}) for i in range(3)))
    update = asyncio.run(node.ainvoke(state))
    assert contents(update) == [{"status": "success", "data": i} for i in range(3)]


class Log:
    def __init__(self) -> None:
        self.events: list[str] = []
        self.lock = threading.Lock()

    def add(self, event: str) -> None:
        with self.lock:
            self.events.append(event)


class SeqRequest(BaseModel):
    tag: str


class SequentialTool(BaseTool[SeqRequest, str]):
    name = "seq"
    description = "Runs alone."
    sequential = True

    def __init__(self, log: Log) -> None:
        self.log = log

    def execute_internal(self, request: SeqRequest) -> str:
        self.log.add(f"start {request.tag}")
        self.log.add(f"end {request.tag}")
        return request.tag


def test_sequential_tool_runs_alone_between_its_neighbours(registry: LocalToolRegistry) -> None:
    log = Log()

    def par(tag: str) -> str:
        """Parallel step.

        Args:
            tag: Label.
        """
        log.add(f"start {tag}")
        log.add(f"end {tag}")
        return tag

    registry.register(par)
    registry.register(SequentialTool(log))
    node = ToolsNode(registry)
    calls = [call("1", "par", {"tag": "p1"}), call("2", "par", {"tag": "p2"})]
    calls += [call("3", "seq", {"tag": "s"}), call("4", "par", {"tag": "p3"})]
    update = node(state_with(*calls))
    assert [b["data"] for b in contents(update)] == ["p1", "p2", "s", "p3"]
    events = log.events
    s_start, s_end = events.index("start s"), events.index("end s")
    assert s_end == s_start + 1  # nothing interleaved
    assert {"end p1", "end p2"} <= set(events[:s_start])
    assert events[s_end + 1 :] == ["start p3", "end p3"]


def test_oversized_output_is_cut_to_valid_json_with_a_note(registry: LocalToolRegistry) -> None:
    def many() -> list[str]:
        """Many rows."""
        return [f"row {i:05d}" for i in range(5000)]

    def long_text() -> str:
        """One long text."""
        return "é" * 100_000

    registry.register(many)
    registry.register(long_text)
    node = ToolsNode(registry, max_output_chars=2000)
    update = node(state_with(call("m", "many", "{}"), call("t", "long_text", "{}")))
    for message, record in zip(update["messages"], update["tool_results"], strict=True):
        assert len(message["content"]) <= 2000
        body = json.loads(message["content"])
        assert body["status"] == "success"
        assert body["truncated"]["omitted_chars"] > 0
        assert "2000 characters" in body["truncated"]["note"]
        assert record["truncated"] is True
    rows = json.loads(update["messages"][0]["content"])
    assert rows["data"] == [f"row {i:05d}" for i in range(len(rows["data"]))]
    assert rows["truncated"]["items_total"] == 5000
    assert rows["truncated"]["items_shown"] == len(rows["data"]) > 50
    text = json.loads(update["messages"][1]["content"])["data"]
    assert set(text) == {"é"}
    assert len(text) > 1000


def test_sync_call_works_inside_a_running_loop(node: ToolsNode) -> None:
    state = state_with(call("a", "add", '{"a": 1, "b": 2}'), call("b", "add", '{"a": 3, "b": 4}'))

    async def main() -> dict[str, Any]:
        return node(state)  # a sync node called from async code (e.g. a sync graph in a loop)

    assert [b["data"] for b in contents(asyncio.run(main()))] == [3, 7]


def test_nothing_pending_gives_an_empty_update(node: ToolsNode) -> None:
    empty: dict[str, Any] = {"messages": [], "tool_results": []}
    assert node({}) == empty
    assert node({"messages": "garbage"}) == empty
    assert node({"messages": [{"role": "user", "content": "hi"}]}) == empty
    answered = state_with(call("a", "add", '{"a": 1, "b": 2}'))
    answered["messages"].append({"role": "tool", "tool_call_id": "a", "content": "{}"})
    assert node(answered) == empty
    assert asyncio.run(node.ainvoke({"messages": []})) == empty


def test_partially_answered_and_malformed_calls(node: ToolsNode) -> None:
    state = state_with(
        call("a", "add", '{"a": 1, "b": 2}'),
        call("b", "add", '{"a": 2, "b": 2}'),
        {"type": "function", "function": {"arguments": "{}"}},  # no id, no name
        "garbage",
    )
    state["messages"].append({"role": "tool", "tool_call_id": "a", "content": "{}"})
    update = node(state)
    ids = [m["tool_call_id"] for m in update["messages"]]
    assert ids == ["b", "call_missing_id_2", "call_missing_id_3"]
    assert [r["error_type"] for r in update["tool_results"]] == [
        None,
        "unknown_tool",
        "unknown_tool",
    ]


def test_langchain_style_tool_calls_are_read(node: ToolsNode) -> None:
    class AIMessage:  # duck-typed like langchain_core.messages.AIMessage
        type = "ai"
        tool_calls = [{"id": "lc1", "name": "add", "args": {"a": 4, "b": 4}, "type": "tool_call"}]

    update = node({"messages": [AIMessage()]})
    assert update["messages"][0]["tool_call_id"] == "lc1"
    assert contents(update) == [{"status": "success", "data": 8}]


def test_a_thousand_calls_are_all_answered(node: ToolsNode) -> None:
    calls = [call(f"c{i}", "add", {"a": i, "b": 1}) for i in range(1000)]
    update = node(state_with(*calls))
    assert [m["tool_call_id"] for m in update["messages"]] == [f"c{i}" for i in range(1000)]
    assert [b["data"] for b in contents(update)] == [i + 1 for i in range(1000)]


@pytest.mark.parametrize(
    "kwargs",
    [{"max_parallel": 0}, {"max_output_chars": 100}, {"call_timeout": 0}, {"call_timeout": -1.0}],
)
def test_bad_configuration_is_rejected(registry: LocalToolRegistry, kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        ToolsNode(registry, **kwargs)


def test_async_entry_timeout_and_sequential(registry: LocalToolRegistry) -> None:
    release = threading.Event()
    log = Log()

    def hang() -> str:
        """Wait until released."""
        release.wait(10)
        return "late"

    async def slow() -> str:
        """Sleep on the loop."""
        await asyncio.sleep(10)
        return "late"

    registry.register(hang)
    registry.register(slow)
    registry.register(SequentialTool(log))
    node = ToolsNode(registry, call_timeout=0.05)
    state = state_with(
        call("h", "hang", "{}"),
        call("s", "slow", "{}"),
        call("q", "seq", {"tag": "alone"}),
        call("a", "add", '{"a": 1, "b": 1}'),
    )
    try:
        update = asyncio.run(node.ainvoke(state))
    finally:
        release.set()
    assert [(r["tool_call_id"], r["error_type"]) for r in update["tool_results"]] == [
        ("h", "timeout"),
        ("s", "timeout"),
        ("q", None),
        ("a", None),
    ]
    assert log.events == ["start alone", "end alone"]
