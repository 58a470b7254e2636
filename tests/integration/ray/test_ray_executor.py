"""RayExecutor on a local Ray: stateless tools as tasks in other processes, stateful ones on
one actor per instance, the same envelopes, timeouts that cancel the remote work, and the
approval gate, breaker and metrics kept in the driver."""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from orchestrator.graph import ToolsNode
from tests.integration.ray.ray_tools import (
    Counter,
    CountingTool,
    FailingTool,
    FragileCounter,
    LockedTool,
    SlowStatefulTool,
    crash,
    spin,
    where,
)
from tools import InMemoryMetrics, LocalToolRegistry, ToolDefinitionError
from tools.approvals import ApprovalPolicy
from tools.executors import RayExecutor
from tools.routing import ToolCategory, ToolManual

pytestmark = pytest.mark.serial  # Ray's workers want the machine's cores


@pytest.fixture
def executor(local_ray: Any) -> Iterator[RayExecutor]:
    with RayExecutor() as ray_executor:  # joins the session's Ray
        yield ray_executor


def wait_for(path: Path, deadline_s: float = 120.0) -> None:
    end = time.monotonic() + deadline_s
    while not path.exists():
        assert time.monotonic() < end, f"{path} never appeared"
        time.sleep(0.02)


def call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def test_a_stateless_tool_runs_as_a_task_in_another_process(executor: RayExecutor) -> None:
    registry = LocalToolRegistry(executor=executor)
    registry.register(where)
    result = registry.call_tool("where", tag="x")
    assert result.status == "success"
    assert result.data["tag"] == "x" and result.data["pid"] != os.getpid()
    assert result.metadata["executor"] == "ray"
    assert result.metadata["tool_name"] == "where" and result.metadata["attempts"] == 1
    invalid = registry.call_tool("where", tag=["not", "text"])
    assert invalid.error is not None and invalid.error.type == "validation_error"
    assert "tag" in invalid.error.message


def test_a_stateful_tool_lives_on_one_actor(executor: RayExecutor) -> None:
    registry = LocalToolRegistry(executor=executor)
    tool = CountingTool(Counter())
    registry.register(tool)
    results = [registry.call_tool("count", step=step) for step in (1, 2, 3)]
    assert [r.data["total"] for r in results] == [1, 3, 6]  # the state stayed in one place
    assert len({r.data["pid"] for r in results}) == 1 and results[0].data["pid"] != os.getpid()
    assert tool._counter.steps == []  # the driver's copy never ran


def test_tools_node_runs_a_turn_on_the_cluster_in_call_order(executor: RayExecutor) -> None:
    registry = LocalToolRegistry(executor=executor)
    registry.register(where)
    registry.register(CountingTool(Counter()))
    calls = [call(f"c{i}", "where", tag=str(i)) for i in range(6)] + [call("c6", "count", step=5)]
    with ToolsNode(registry, call_timeout=120) as node:
        update = node({"messages": [{"role": "assistant", "content": None, "tool_calls": calls}]})
    assert [m["tool_call_id"] for m in update["messages"]] == [f"c{i}" for i in range(7)]
    contents = [json.loads(m["content"]) for m in update["messages"]]
    assert [c["data"]["tag"] for c in contents[:6]] == [str(i) for i in range(6)]
    assert contents[6]["data"]["total"] == 5
    assert all(r["metadata"]["executor"] == "ray" for r in update["tool_results"])


def test_the_async_paths_await_the_cluster(executor: RayExecutor) -> None:
    registry = LocalToolRegistry(executor=executor)
    registry.register(where)

    async def main() -> list[Any]:
        direct = await registry.acall_tool("where", tag="a")
        with ToolsNode(registry) as node:
            update = await node.ainvoke(
                {"messages": [{"role": "assistant", "content": None, "tool_calls": [call("c0", "where", tag="b")]}]}
            )
        return [direct.data["tag"], json.loads(update["messages"][0]["content"])["data"]["tag"]]

    assert asyncio.run(main()) == ["a", "b"]


def test_a_timed_out_task_is_cancelled_on_the_worker(executor: RayExecutor, tmp_path: Path) -> None:
    registry = LocalToolRegistry(executor=executor)
    registry.register(spin, timeout=5.0)
    marker = str(tmp_path / "spin")
    result = registry.call_tool("spin", marker=marker)
    assert result.error is not None and result.error.type == "timeout"
    assert result.error.retryable and result.metadata["executor"] == "ray"
    wait_for(Path(marker + ".interrupted"))  # ray.cancel interrupted the task on its worker


def test_a_timed_out_actor_call_is_cancelled_and_frees_the_actor(local_ray: Any) -> None:
    with RayExecutor(actor_options={"max_concurrency": 1}) as one_at_a_time:
        registry = LocalToolRegistry(executor=one_at_a_time)
        registry.register(SlowStatefulTool(), timeout=10.0)
        slow = registry.call_tool("slow_stateful", seconds=600)
        assert slow.error is not None and slow.error.type == "timeout"
        # one call at a time on that actor: the next one runs only because the first was cancelled
        fast = registry.call_tool("slow_stateful", seconds=0)
        assert fast.status == "success", fast.error


def test_gate_breaker_and_metrics_stay_in_the_driver(executor: RayExecutor, tmp_path: Path) -> None:
    runs = tmp_path / "runs.txt"
    metrics = InMemoryMetrics()
    registry = LocalToolRegistry(executor=executor, metrics=metrics, failure_threshold=2)
    registry.register(FailingTool(str(runs)))
    outcomes = [registry.call_tool("failing").error for _ in range(3)]
    assert [o.type if o else None for o in outcomes] == ["upstream_error", "upstream_error", "circuit_open"]
    assert runs.read_text().splitlines() == ["ran", "ran"]  # the open breaker kept the third call here
    stats = metrics.stats("failing")
    assert (stats.invocations, stats.failures) == (3, 3)

    gated = LocalToolRegistry(executor=executor, policy=ApprovalPolicy("low"))
    gated.register(FailingTool(str(runs)), manual=ToolManual(name="failing", category=ToolCategory.EXECUTION,
                                                              risk="dangerous"))  # fmt: skip
    refused = gated.call_tool("failing")
    assert refused.error is not None and refused.error.type == "permission_denied"
    assert runs.read_text().splitlines() == ["ran", "ran"]  # never shipped to the cluster


def test_a_tool_that_cannot_be_pickled_is_refused_at_registration(executor: RayExecutor) -> None:
    registry = LocalToolRegistry(executor=executor)
    with pytest.raises(ToolDefinitionError, match=r"tool 'locked' cannot run on Ray: it cannot be pickled"):
        registry.register(LockedTool())
    assert "locked" not in registry
    registry.register(LockedTool(), executor=None)  # kept in this process instead
    assert registry.call_tool("locked", step=4).data == 4


def test_a_crashed_worker_is_an_execution_error_and_the_next_call_works(executor: RayExecutor) -> None:
    registry = LocalToolRegistry(executor=executor)
    registry.register(crash)
    registry.register(where)
    crashed = registry.call_tool("crash")
    assert crashed.error is not None and crashed.error.type == "execution_error" and crashed.error.retryable
    assert "the worker running it failed" in crashed.error.message
    assert registry.call_tool("where").status == "success"


def test_a_dead_actor_is_an_execution_error_and_the_next_call_starts_a_fresh_one(
    local_ray: Any, tmp_path: Path
) -> None:
    marker = tmp_path / "closed"
    with RayExecutor() as executor:
        registry = LocalToolRegistry(executor=executor)
        registry.register(FragileCounter(str(marker)))
        assert [registry.call_tool("fragile").data for _ in range(2)] == [1, 2]
        died = registry.call_tool("fragile", crash=True)
        assert died.error is not None and died.error.type == "execution_error" and died.error.retryable
        assert registry.call_tool("fragile").data == 1  # a new actor, from the registered instance
        assert registry.call_tool("fragile").data == 2
    assert marker.read_text() == "2"  # closing the executor let the tool close inside its actor
