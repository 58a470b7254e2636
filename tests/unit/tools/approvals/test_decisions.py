"""Approve / Deny, the approver callback, and ApprovedCall: an approved call runs once with
exactly the approved arguments; edited arguments are validated like any call; a changed
tool or other arguments are refused (PEERS 19)."""

from __future__ import annotations

import asyncio
import json
import threading
from dataclasses import FrozenInstanceError
from typing import Any

import pytest

from tools import LocalToolRegistry
from tools.approvals import (
    ApprovalPolicy,
    ApprovalRequest,
    ApprovalsStore,
    Approve,
    ApprovedCall,
    Deny,
    FreedomLevel,
    arguments_hash,
)
from tools.errors import InvalidArgumentsError

from .conftest import Runs, gated_registry


class Asker:
    """An approver that answers from a script and keeps what it was asked."""

    def __init__(self, *answers: Any) -> None:
        self.answers = list(answers)
        self.asked: list[ApprovalRequest] = []
        self.threads: list[str] = []

    def __call__(self, request: ApprovalRequest) -> Approve | Deny:
        self.asked.append(request)
        self.threads.append(threading.current_thread().name)
        answer = self.answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return answer  # type: ignore[no-any-return]


def test_approve_and_deny_are_small_frozen_values() -> None:
    assert Approve() == Approve(arguments=None, remember=False)
    assert Deny("no").message == "no"
    assert Deny().message == ""
    with pytest.raises(FrozenInstanceError):
        Approve().remember = True  # type: ignore[misc]


def test_an_approved_call_runs_once_with_the_requested_arguments(runs: Runs, store: ApprovalsStore) -> None:
    asker = Asker(Approve())
    registry = gated_registry(runs, ApprovalPolicy("medium", store), approver=asker)
    result = registry.call_tool_raw("moderate_tool", '{"path": "a.txt", "count": 2}', call_id="call_7")
    assert result.ok
    assert runs.calls == [("moderate_tool", {"path": "a.txt", "count": 2})]
    (request,) = asker.asked
    assert request.to_dict() == {
        "call_id": "call_7",
        "tool": "moderate_tool",
        "arguments": {"path": "a.txt", "count": 2},
        "arguments_hash": arguments_hash({"count": 2, "path": "a.txt"}),
        "version_hash": registry.tool_version_hash("moderate_tool"),
        "risk": "moderate",
        "freedom": "medium",
        "reason": "moderate tools need a person's approval at freedom level medium (only safe tools run freely)",
    }
    assert registry.call_tool("safe_tool", path="s").ok  # safe tools never ask
    assert len(asker.asked) == 1
    assert store.approvals() == {}  # not remembered


def test_edited_arguments_run_as_edited_and_are_validated(runs: Runs, store: ApprovalsStore) -> None:
    asker = Asker(Approve(arguments={"path": "safer.txt"}), Approve(arguments={"path": 5, "evil": True}))
    registry = gated_registry(runs, ApprovalPolicy("low", store), approver=asker)
    assert registry.call_tool("dangerous_tool", path="/", count=9).ok
    assert runs.calls == [("dangerous_tool", {"path": "safer.txt", "count": 1})]
    bad = registry.call_tool("dangerous_tool", path="/")
    assert bad.error is not None
    assert bad.error.type == "validation_error"
    assert len(runs.calls) == 1


def test_deny_is_permission_denied_with_the_persons_message(runs: Runs, store: ApprovalsStore) -> None:
    registry = gated_registry(runs, ApprovalPolicy("medium", store), approver=Asker(Deny("not on   prod\n"), Deny()))
    result = registry.call_tool("dangerous_tool", path="/")
    assert result.error is not None
    assert result.error.type == "permission_denied"
    assert result.error.message == (
        "The call of 'dangerous_tool' was not approved: not on prod. It was not run; do not retry it. "
        "Continue without it, or ask the user what to do instead."
    )
    assert result.error.details == {
        "reason": "denied",
        "tool": "dangerous_tool",
        "message": "not on prod",
        "arguments_hash": arguments_hash({"path": "/"}),
    }
    plain = registry.call_tool("dangerous_tool", path="/")
    assert plain.error is not None
    assert "was not approved by the person asked." in plain.error.message
    assert runs.calls == []


def test_approve_remember_stores_the_approval_for_that_version(runs: Runs, store: ApprovalsStore) -> None:
    asker = Asker(Approve(remember=True))
    registry = gated_registry(runs, ApprovalPolicy("low", store), approver=asker)
    assert registry.call_tool("moderate_tool", path="a").ok
    assert registry.call_tool("moderate_tool", path="b").ok  # remembered: not asked again
    assert len(asker.asked) == 1
    stored = store.get("moderate_tool")
    assert stored is not None
    assert stored.version_hash == registry.tool_version_hash("moderate_tool")
    assert stored.risk == "moderate"


def test_remember_without_a_store_still_runs_the_approved_call_once(runs: Runs) -> None:
    asker = Asker(Approve(remember=True), Deny())
    registry = gated_registry(runs, ApprovalPolicy("low"), approver=asker)
    assert registry.call_tool("safe_tool", path="a").ok
    assert not registry.call_tool("safe_tool", path="a").ok
    assert len(runs.calls) == 1


@pytest.mark.parametrize("answer", [RuntimeError("tty gone"), "yes", None, True])
def test_a_failing_or_confused_approver_runs_nothing(runs: Runs, store: ApprovalsStore, answer: Any) -> None:
    registry = gated_registry(runs, ApprovalPolicy("low", store), approver=Asker(answer))
    result = registry.call_tool("safe_tool", path="a")
    assert result.error is not None
    assert result.error.type == "permission_denied"
    assert result.error.details == {"reason": "approver_failed", "tool": "safe_tool"}
    assert runs.calls == []


def test_the_async_paths_ask_in_a_worker_thread(runs: Runs, store: ApprovalsStore) -> None:
    asker = Asker(Approve(), Deny("no"))
    registry = gated_registry(runs, ApprovalPolicy("low", store), approver=asker)

    async def main() -> tuple[bool, bool]:
        first = await registry.acall_tool("safe_tool", path="a")
        second = await registry.acall_tool_raw("safe_tool", {"path": "b"})
        return first.ok, second.ok

    assert asyncio.run(main()) == (True, False)
    assert all(name != "MainThread" for name in asker.threads)


def test_a_view_approver_overrides_the_registrys(runs: Runs, store: ApprovalsStore) -> None:
    registry = gated_registry(runs, ApprovalPolicy("low", store), approver=Asker(Deny()))
    view = registry.for_agent("main", approver=Asker(Approve()))
    assert view.call_tool("safe_tool", path="a").ok
    assert not registry.call_tool("safe_tool", path="a").ok


# ---------------------------------------------------------------------- approved calls


def _request(registry: LocalToolRegistry, name: str, arguments: Any, call_id: str = "call_1") -> ApprovalRequest:
    check = registry.check_approval(name, arguments)
    assert check is not None
    assert check.needs_approval
    return check.request(arguments, call_id=call_id)


def test_an_approved_call_runs_despite_the_policy_with_exactly_those_arguments(
    runs: Runs, store: ApprovalsStore
) -> None:
    policy = ApprovalPolicy("low", store)
    registry = gated_registry(runs, policy)
    request = _request(registry, "dangerous_tool", '{"path": "x", "count": 3}')
    stored = json.loads(json.dumps(request.to_dict()))  # a paused run's state is JSON
    approved = policy.apply(ApprovalRequest.from_dict(stored), Approve())
    assert approved == ApprovedCall(
        "dangerous_tool", {"path": "x", "count": 3}, request.arguments_hash, request.version_hash, "call_1"
    )
    assert registry.call_tool_raw("dangerous_tool", '{"count": 3, "path": "x"}', approved=approved).ok
    assert asyncio.run(registry.acall_tool_raw("dangerous_tool", approved.arguments, approved=approved)).ok
    other = registry.call_tool_raw("dangerous_tool", {"path": "y", "count": 3}, approved=approved)
    assert other.error is not None
    assert other.error.type == "permission_denied"
    assert other.error.message.startswith("The arguments differ from the ones a person approved")
    wrong_tool = registry.call_tool_raw("moderate_tool", approved.arguments, approved=approved)
    assert wrong_tool.error is not None
    assert "This approval is for the tool 'dangerous_tool', not 'moderate_tool'" in wrong_tool.error.message
    assert runs.calls == [("dangerous_tool", {"path": "x", "count": 3})] * 2
    assert store.approvals() == {}


def test_edited_arguments_are_hashed_again(runs: Runs, store: ApprovalsStore) -> None:
    policy = ApprovalPolicy("low", store)
    registry = gated_registry(runs, policy)
    request = _request(registry, "moderate_tool", {"path": "/etc"})
    approved = policy.apply(request, Approve(arguments={"path": "/tmp/x"}))
    assert approved.arguments_hash == arguments_hash({"path": "/tmp/x"}) != request.arguments_hash
    assert not registry.call_tool_raw("moderate_tool", request.arguments, approved=approved).ok
    assert registry.call_tool_raw("moderate_tool", approved.arguments, approved=approved).ok
    assert runs.calls == [("moderate_tool", {"path": "/tmp/x", "count": 1})]
    with pytest.raises(InvalidArgumentsError):
        policy.apply(request, Approve(arguments="not an object"))  # type: ignore[arg-type]


def test_an_approved_call_of_a_tool_that_changed_since_is_refused(runs: Runs, store: ApprovalsStore) -> None:
    policy = ApprovalPolicy("low", store)
    registry = gated_registry(runs, policy)
    approved = policy.apply(_request(registry, "dangerous_tool", {"path": "a"}), Approve())
    tool = registry.get_tool("dangerous_tool")
    assert tool is not None
    tool.version = "2.0.0"
    result = registry.call_tool_raw("dangerous_tool", {"path": "a"}, approved=approved)
    assert result.error is not None
    assert "changed after a person approved this call" in result.error.message
    assert runs.calls == []


def test_approved_calls_are_checked_on_an_ungated_registry_and_a_view(runs: Runs, store: ApprovalsStore) -> None:
    registry = gated_registry(runs, None)
    view = registry.for_agent("main", policy=ApprovalPolicy("low", store))
    approved = ApprovedCall.of("safe_tool", {"path": "a"}, registry.tool_version_hash("safe_tool") or "")
    assert registry.call_tool_raw("safe_tool", {"path": "a"}, approved=approved).ok
    assert not registry.call_tool_raw("safe_tool", {"path": "b"}, approved=approved).ok
    assert view.call_tool_raw("safe_tool", {"path": "a"}, approved=approved).ok
    assert asyncio.run(view.acall_tool_raw("safe_tool", {"path": "a"}, approved=approved)).ok
    assert not view.call_tool_raw("safe_tool", {"path": "a"}).ok
    assert len(runs.calls) == 3


def test_a_tampered_stored_request_is_refused() -> None:
    request = ApprovalRequest("t", {"a": 1}, arguments_hash({"a": 1}), "f" * 64, "moderate", FreedomLevel.LOW, "r")
    data = request.to_dict()
    assert ApprovalRequest.from_dict(data) == request
    with pytest.raises(ValueError, match="arguments_hash does not match"):
        ApprovalRequest.from_dict({**data, "arguments": {"a": 2}})
    with pytest.raises(ValueError, match="not an approval request"):
        ApprovalRequest.from_dict({"tool": "t"})
    with pytest.raises(ValueError, match="not an approval request"):
        ApprovalRequest.from_dict({**data, "arguments": [1]})


def test_a_check_that_needs_nothing_has_no_request(runs: Runs, store: ApprovalsStore) -> None:
    registry = gated_registry(runs, ApprovalPolicy("high", store))
    check = registry.check_approval("safe_tool")
    assert check is not None
    assert check.allowed
    assert check.version_hash is None  # the level alone decided: nothing hashed
    with pytest.raises(ValueError, match="needs no approval"):
        check.request({})


def test_a_manual_alone_needs_its_version_hash(store: ApprovalsStore) -> None:
    from .conftest import manual

    policy = ApprovalPolicy("low", store)
    with pytest.raises(TypeError, match="pass version_hash="):
        policy.check(manual("x", "safe"))
    check = policy.check(manual("x", "safe"), version_hash="c" * 64)
    assert check.needs_approval
    store.approve("x", "c" * 64)
    assert policy.check(manual("x", "safe"), version_hash="c" * 64).allowed
