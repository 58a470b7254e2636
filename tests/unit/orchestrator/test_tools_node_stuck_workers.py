"""ToolsNode with workers stuck in timed-out calls: later calls never wait forever.

``call_timeout`` bounds the time a call spends queued plus running; a worker abandoned in a
timed-out call is replaced (up to ``max_abandoned``); a pool whose every worker is stuck
answers at once with an error. Each node call runs in a helper thread joined with a
generous bound, so a regression fails the test instead of hanging the suite.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from orchestrator.graph import ToolsNode
from tools import LocalToolRegistry

HANG_GUARD_SECONDS = 30.0  # only reached when the node hangs (the bug under test)


def call(call_id: str, name: str, arguments: Any = "{}") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def state_with(*calls: Any) -> dict[str, Any]:
    return {"messages": [{"role": "assistant", "content": None, "tool_calls": list(calls)}]}


def finish(run: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """``run()`` in a helper thread; fails (instead of hanging) if it does not return."""
    box: list[dict[str, Any]] = []
    errors: list[BaseException] = []

    def target() -> None:
        try:
            box.append(run())
        except BaseException as exc:  # reported below
            errors.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(HANG_GUARD_SECONDS)
    assert not thread.is_alive(), "the node did not answer: a call is waiting forever"
    if errors:
        raise errors[0]
    return box[0]


def outcome(update: dict[str, Any]) -> list[tuple[str, str, str | None]]:
    return [(r["tool_call_id"], r["status"], r["error_type"]) for r in update["tool_results"]]


@pytest.fixture
def release() -> Iterator[threading.Event]:
    event = threading.Event()
    yield event
    event.set()  # let the stuck worker threads finish


@pytest.fixture
def registry(release: threading.Event) -> LocalToolRegistry:
    registry = LocalToolRegistry()

    def hang() -> str:
        """Block until the test releases it."""
        release.wait(60)
        return "late"

    def add(a: int, b: int) -> int:
        """Add two integers.

        Args:
            a: First.
            b: Second.
        """
        return a + b

    registry.register(hang)
    registry.register(add)
    return registry


def test_a_call_queued_behind_a_stuck_worker_is_answered_within_the_timeout(
    registry: LocalToolRegistry,
) -> None:
    with ToolsNode(registry, max_parallel=1, call_timeout=0.2) as node:
        update = finish(lambda: node(state_with(call("h", "hang"), call("a", "add", {"a": 1, "b": 2}))))
    assert [m["tool_call_id"] for m in update["messages"]] == ["h", "a"]
    assert outcome(update)[0] == ("h", "error", "timeout")
    assert outcome(update)[1][0] == "a"  # answered (timeout or success), never left waiting


@pytest.mark.parametrize("entry", ["sync", "async"])
def test_stuck_workers_are_replaced_for_later_calls(registry: LocalToolRegistry, entry: str) -> None:
    node = ToolsNode(registry, max_parallel=2, call_timeout=0.2)

    def invoke(state: dict[str, Any]) -> dict[str, Any]:
        if entry == "sync":
            return finish(lambda: node(state))
        return finish(lambda: asyncio.run(node.ainvoke(state)))

    try:
        stuck = invoke(state_with(call("h1", "hang"), call("h2", "hang")))
        assert outcome(stuck) == [("h1", "error", "timeout"), ("h2", "error", "timeout")]
        later = invoke(state_with(call("a", "add", {"a": 2, "b": 3}), call("b", "add", {"a": 1, "b": 1})))
    finally:
        node.close()
    assert outcome(later) == [("a", "success", None), ("b", "success", None)]
    assert [json.loads(m["content"])["data"] for m in later["messages"]] == [5, 2]


@pytest.mark.parametrize("entry", ["sync", "async"])
def test_an_exhausted_pool_answers_at_once_with_an_error(
    registry: LocalToolRegistry, release: threading.Event, entry: str
) -> None:
    node = ToolsNode(registry, max_parallel=1, max_abandoned=1, call_timeout=0.2)
    hang = registry.get_tool("hang")
    assert hang is not None
    registry.register(hang, name="hang_too")  # two tools hang: each may leave one thread stuck

    def invoke(state: dict[str, Any]) -> dict[str, Any]:
        if entry == "sync":
            return finish(lambda: node(state))
        return finish(lambda: asyncio.run(node.ainvoke(state)))

    try:
        for i, name in enumerate(("hang", "hang_too")):  # the worker, then its one replacement
            assert outcome(invoke(state_with(call(f"h{i}", name)))) == [(f"h{i}", "error", "timeout")]
        exhausted = invoke(state_with(call("a", "add", {"a": 1, "b": 1}), call("b", "add", {"a": 2, "b": 2})))
        assert outcome(exhausted) == [("a", "error", "execution_error"), ("b", "error", "execution_error")]
        body = json.loads(exhausted["messages"][0]["content"])
        assert "no worker" in body["error"]
        assert "still running" in body["error"]

        release.set()  # the stuck calls finish: their threads leave and capacity comes back
        deadline = time.monotonic() + HANG_GUARD_SECONDS
        while True:
            recovered = invoke(state_with(call("c", "add", {"a": 3, "b": 4})))
            if outcome(recovered) == [("c", "success", None)] or time.monotonic() > deadline:
                break
            time.sleep(0.01)
    finally:
        node.close()
    assert outcome(recovered) == [("c", "success", None)]


@pytest.mark.parametrize("entry", ["sync", "async"])
def test_one_hung_tool_cannot_starve_the_others(registry: LocalToolRegistry, entry: str) -> None:
    node = ToolsNode(registry, max_parallel=1, max_abandoned=2, call_timeout=0.2)

    def invoke(state: dict[str, Any]) -> dict[str, Any]:
        if entry == "sync":
            return finish(lambda: node(state))
        return finish(lambda: asyncio.run(node.ainvoke(state)))

    try:
        assert outcome(invoke(state_with(call("h0", "hang")))) == [("h0", "error", "timeout")]
        refused = invoke(state_with(call("h1", "hang")))  # its share of stuck threads is used up
        assert outcome(refused) == [("h1", "error", "execution_error")]
        body = json.loads(refused["messages"][0]["content"])
        assert "1 earlier calls of it timed out and are still running" in body["error"]
        for i in range(5):  # every other tool keeps the pool
            update = invoke(state_with(call(f"a{i}", "add", {"a": i, "b": 1})))
            assert outcome(update) == [(f"a{i}", "success", None)]
    finally:
        node.close()


def test_max_abandoned_is_validated(registry: LocalToolRegistry) -> None:
    with pytest.raises(ValueError, match="max_abandoned"):
        ToolsNode(registry, max_abandoned=-1)
