"""A registry or a per-agent view given an ApprovalPolicy: every call path consults it; a
call that needs approval is a permission_denied result written for the model, not run, not
counted by the breaker; approvals bound to the tool's version."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from tools import LocalToolRegistry, ToolResult
from tools.approvals import ApprovalPolicy, ApprovalsStore, FreedomLevel, arguments_hash
from tools.errors import ToolDefinitionError
from tools.routing import RoutingConfigError

from .conftest import LEVELS, RISKS, RUNS_FREELY, Runs, gated_registry, manual


class Recorded:
    """A metrics sink that keeps every result."""

    def __init__(self) -> None:
        self.results: list[ToolResult] = []

    def record(self, result: ToolResult) -> None:
        self.results.append(result)


CallPath = Callable[[Any, str, dict[str, Any]], ToolResult]


def _bound(registry: Any, name: str, args: dict[str, Any]) -> ToolResult:
    result: ToolResult = registry.get(name).call(**args)
    return result


def _from_dict(out: dict[str, Any]) -> ToolResult:
    """The envelope back from its ``to_dict()`` form (enough for these checks)."""
    if out["status"] == "success":
        return ToolResult.success(out.get("data"))
    return ToolResult.failure(out["error_type"], out["error"], details=out.get("details"))


def _bound_dict(registry: Any, name: str, args: dict[str, Any]) -> ToolResult:
    return _from_dict(registry.get(name)(**args))


def _dunder(registry: Any, name: str, args: dict[str, Any]) -> ToolResult:
    return _from_dict(registry(name, **args))


def _run(coro: Awaitable[ToolResult]) -> ToolResult:
    return asyncio.run(coro)  # type: ignore[arg-type]


SYNC_PATHS: dict[str, CallPath] = {
    "call_tool": lambda r, n, a: r.call_tool(n, **a),
    "call_tool_raw dict": lambda r, n, a: r.call_tool_raw(n, a),
    "call_tool_raw json": lambda r, n, a: r.call_tool_raw(n, __import__("json").dumps(a), call_id="c1"),
    "get().call": _bound,
    "get()()": _bound_dict,
    "__call__": _dunder,
}
ASYNC_PATHS: dict[str, CallPath] = {
    "acall_tool": lambda r, n, a: _run(r.acall_tool(n, **a)),
    "acall_tool_raw": lambda r, n, a: _run(r.acall_tool_raw(n, a)),
    "get().acall": lambda r, n, a: _run(r.get(n).acall(**a)),
}
ALL_PATHS = {**SYNC_PATHS, **ASYNC_PATHS}


@pytest.mark.parametrize("path", ALL_PATHS, ids=list(ALL_PATHS))
@pytest.mark.parametrize("level", LEVELS, ids=[level.value for level in LEVELS])
def test_each_level_against_each_risk_on_every_registry_path(
    runs: Runs, store: ApprovalsStore, level: FreedomLevel, path: str
) -> None:
    registry = gated_registry(runs, ApprovalPolicy(level, store))
    call = ALL_PATHS[path]
    for risk in RISKS:
        result = call(registry, f"{risk}_tool", {"path": "a.txt"})
        if risk in RUNS_FREELY[level]:
            assert result.ok, result
        else:
            assert result.error is not None
            assert result.error.type == "permission_denied"
    assert sorted(runs.names()) == sorted(f"{risk}_tool" for risk in RUNS_FREELY[level])


@pytest.mark.parametrize("level", LEVELS, ids=[level.value for level in LEVELS])
def test_each_level_through_a_per_agent_view(runs: Runs, store: ApprovalsStore, level: FreedomLevel) -> None:
    registry = gated_registry(runs, ApprovalPolicy(level, store))
    view = registry.for_agent("main")
    for risk in RISKS:
        name = f"{risk}_tool"
        outcomes = [
            view.call_tool(name, path="v"),
            view.call_tool_raw(name, '{"path": "v"}', call_id="call_9"),
            asyncio.run(view.acall_tool(name, path="v")),
            asyncio.run(view.acall_tool_raw(name, {"path": "v"})),
            view.get(name).call(path="v"),  # type: ignore[union-attr]
        ]
        for result in outcomes:
            assert result.ok is (risk in RUNS_FREELY[level]), (name, result)
    assert len(runs.calls) == 5 * len(RUNS_FREELY[level])


def test_the_refusal_is_written_for_the_model_and_says_how_a_person_approves(runs: Runs, store: ApprovalsStore) -> None:
    registry = gated_registry(runs, ApprovalPolicy("medium", store))
    result = registry.call_tool_raw("moderate_tool", {"path": "a"}, call_id="call_1")
    assert result.error is not None
    message = result.error.message
    assert message.startswith("The tool 'moderate_tool' needs a person's approval before it can run:")
    assert "moderate tools need a person's approval at freedom level medium (only safe tools run freely)" in message
    assert "Only a person can approve it (with `tooldeck approve moderate_tool` or in the application)" in message
    assert "you cannot approve it yourself, so do not retry this call" in message
    assert result.error.retryable is False
    details = result.error.details
    assert details is not None
    assert details["reason"] == "approval_required"
    assert details["risk"] == "moderate"
    assert details["freedom"] == "medium"
    assert details["arguments_hash"] == arguments_hash({"path": "a"})
    assert details["version_hash"] == registry.tool_version_hash("moderate_tool")
    assert details["approve_command"] == f"tooldeck approve moderate_tool --version-hash {details['version_hash']}"
    assert result.metadata["tool_name"] == "moderate_tool"
    assert runs.calls == []


def test_refusals_are_recorded_but_never_trip_the_breaker(runs: Runs, store: ApprovalsStore) -> None:
    metrics = Recorded()
    registry = gated_registry(runs, ApprovalPolicy("low", store), metrics=metrics, failure_threshold=1)
    for _ in range(5):
        assert registry.call_tool("safe_tool", path="x").error.type == "permission_denied"  # type: ignore[union-attr]
    breaker = registry.breaker("safe_tool")
    assert breaker is not None
    assert breaker.state == "closed"
    store.approve("safe_tool", registry.tool_version_hash("safe_tool") or "")
    assert registry.call_tool("safe_tool", path="x").ok
    assert [r.error.type if r.error else "ok" for r in metrics.results] == ["permission_denied"] * 5 + ["ok"]


def test_a_stored_approval_lets_a_tool_run_until_its_schema_changes(runs: Runs, store: ApprovalsStore) -> None:
    registry = gated_registry(runs, ApprovalPolicy("low", store))
    version = registry.tool_version_hash("dangerous_tool")
    assert version is not None
    store.approve("dangerous_tool", version, risk="dangerous")
    check = registry.check_approval("dangerous_tool", {"path": "a"})
    assert check is not None
    assert check.allowed
    assert check.reason.startswith("a person approved this version of 'dangerous_tool' on ")
    assert registry.call_tool("dangerous_tool", path="a").ok
    tool = registry.get_tool("dangerous_tool")
    assert tool is not None
    tool.parameters = {"type": "object", "properties": {"path": {"type": "string"}, "rm": {"type": "boolean"}}}
    tool.reset_schema_cache()  # the schema changed (a new release of the tool)
    result = registry.call_tool("dangerous_tool", path="a")
    assert result.error is not None
    assert "was approved for an earlier version; its configuration or schema changed since" in result.error.message
    check = registry.check_approval("dangerous_tool")
    assert check is not None
    assert check.changed
    assert check.approved_version == version != check.version_hash
    assert runs.names() == ["dangerous_tool"]


def test_a_stored_approval_for_another_tool_name_does_not_count(runs: Runs, store: ApprovalsStore) -> None:
    registry = gated_registry(runs, ApprovalPolicy("low", store))
    store.approve("moderate_tool", registry.tool_version_hash("safe_tool") or "")
    assert not registry.call_tool("moderate_tool", path="a").ok


def test_the_level_comes_from_the_file_unless_given(runs: Runs, store: ApprovalsStore) -> None:
    policy = ApprovalPolicy(store=store)
    registry = gated_registry(runs, policy)
    assert (policy.level, policy.level_source) == (FreedomLevel.MEDIUM, "default")
    assert not registry.call_tool("moderate_tool", path="a").ok
    store.set_freedom("high")
    assert (policy.level, policy.level_source) == (FreedomLevel.HIGH, "file")
    assert registry.call_tool("moderate_tool", path="a").ok
    override = ApprovalPolicy("low", store)
    assert (override.level, override.level_source) == (FreedomLevel.LOW, "given")
    assert not gated_registry(runs, override).call_tool("safe_tool", path="a").ok


def test_a_corrupt_approvals_file_fails_closed(runs: Runs, approvals_path: Path) -> None:
    approvals_path.parent.mkdir(parents=True)
    approvals_path.write_text("{broken")
    store = ApprovalsStore(approvals_path)
    registry = gated_registry(runs, ApprovalPolicy(store=store))
    result = registry.call_tool("safe_tool", path="a")  # the level itself is unknown
    assert result.error is not None
    assert result.error.type == "permission_denied"
    assert "could not be checked for approval" in result.error.message
    assert str(approvals_path) in result.error.details["error"]  # type: ignore[index]
    assert runs.calls == []
    given = gated_registry(runs, ApprovalPolicy("medium", store))
    assert given.call_tool("safe_tool", path="a").ok  # a given level needs no file for safe tools
    assert not given.call_tool("moderate_tool", path="a").ok
    assert approvals_path.read_text() == "{broken"


def test_unknown_tools_and_bad_arguments_keep_their_own_errors(runs: Runs, store: ApprovalsStore) -> None:
    registry = gated_registry(runs, ApprovalPolicy("high", store))
    assert registry.call_tool("nope").error.type == "unknown_tool"  # type: ignore[union-attr]
    assert registry.call_tool_raw("safe_tool", "not json").error.type == "validation_error"  # type: ignore[union-attr]
    refused = registry.call_tool_raw("dangerous_tool", "[1, 2]")
    assert refused.error is not None
    assert refused.error.type == "validation_error"  # bad JSON is not put before a person
    assert runs.calls == []


def test_a_view_with_its_own_policy_replaces_the_registrys(runs: Runs, store: ApprovalsStore) -> None:
    registry = gated_registry(runs, ApprovalPolicy("low", store))
    strict_view = registry.for_agent("main")
    loose_view = registry.for_agent("main", policy=ApprovalPolicy("high", store))
    assert strict_view.policy is registry.policy
    assert not strict_view.call_tool("moderate_tool", path="a").ok
    assert loose_view.call_tool("moderate_tool", path="a").ok
    assert not loose_view.call_tool("dangerous_tool", path="a").ok
    searching = loose_view.with_tool_search(["safe_tool"])
    assert searching.call_tool("moderate_tool", path="b").ok  # search mode keeps the view's policy
    check = loose_view.check_approval("dangerous_tool")
    assert check is not None
    assert check.needs_approval
    assert runs.names() == ["moderate_tool", "moderate_tool"]


def test_a_policy_on_a_view_of_an_ungated_registry(runs: Runs, store: ApprovalsStore) -> None:
    registry = gated_registry(runs, None)
    assert registry.check_approval("safe_tool") is None
    view = registry.for_agent("coder", policy=ApprovalPolicy("medium", store))
    assert registry.call_tool("dangerous_tool", path="a").ok  # the registry itself is not gated
    assert not view.call_tool("dangerous_tool", path="a").ok
    assert view.check_approval("not_a_tool") is None


def test_routing_is_decided_before_approval(runs: Runs, store: ApprovalsStore) -> None:
    registry = gated_registry(runs, ApprovalPolicy("low", store))
    registry.register(
        lambda: "hi", name="web_fetch", manual=manual("web_fetch", "safe").model_copy(update={"category": "web"})
    )
    view = registry.for_agent("reviewer")
    result = view.call_tool("web_fetch")
    assert result.error is not None
    assert "The reviewer agent may not use the tool 'web_fetch'" in result.error.message
    assert view.check_approval("web_fetch") is None


def test_an_approver_without_a_policy_is_a_developer_error(store: ApprovalsStore) -> None:
    from tools.approvals import Deny

    with pytest.raises(ToolDefinitionError, match="approver= needs policy="):
        LocalToolRegistry(approver=lambda request: Deny())
    with pytest.raises(RoutingConfigError, match="approver= needs a policy"):
        LocalToolRegistry().for_agent("main", approver=lambda request: Deny())
