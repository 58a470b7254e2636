"""Approve(shown_hash=...) binds a decision to the arguments a person saw, on every path:
policy.apply raises, the registry's approver path refuses with approval_mismatch, and the
public denial() helper builds the message a denied call is answered with."""

from __future__ import annotations

from pathlib import Path

import pytest

from tools import LocalToolRegistry
from tools.approvals import (
    ApprovalMismatchError,
    ApprovalPolicy,
    ApprovalRequest,
    ApprovalsStore,
    Approve,
    Deny,
    arguments_hash,
    denial,
)
from tools.routing import ToolCategory, ToolManual


def _registry(tmp_path: Path, approve: Approve) -> tuple[LocalToolRegistry, list[str]]:
    ran: list[str] = []

    def asker(request: ApprovalRequest) -> Approve | Deny:
        return approve

    registry = LocalToolRegistry(
        policy=ApprovalPolicy("medium", ApprovalsStore(tmp_path / "approvals.json")), approver=asker
    )

    def note(path: str) -> str:
        """Write a note.

        Args:
            path: The path.
        """
        ran.append(path)
        return path

    registry.register(note, manual=ToolManual(name="note", category=ToolCategory.FILE_WRITE, risk="moderate"))
    return registry, ran


def test_the_shown_hash_must_match(tmp_path: Path) -> None:
    registry, ran = _registry(tmp_path, Approve(shown_hash=arguments_hash({"path": "other"})))
    result = registry.call_tool("note", path="a")
    assert result.error is not None and result.error.type == "permission_denied"
    assert result.error.details == {"reason": "approval_mismatch", "tool": "note"}
    assert "arguments changed after they were shown" in result.error.message
    assert ran == []
    registry, ran = _registry(tmp_path, Approve(shown_hash=arguments_hash({"path": "a"})))
    assert registry.call_tool("note", path="a").ok
    assert ran == ["a"]


def test_policy_apply_raises_for_another_hash(tmp_path: Path) -> None:
    registry, _ = _registry(tmp_path, Approve())
    check = registry.check_approval("note", {"path": "a"})
    assert check is not None
    request = check.request({"path": "a"}, call_id="c1")
    assert registry.policy is not None
    with pytest.raises(ApprovalMismatchError, match=r"call c1\) was given for arguments with hash"):
        registry.policy.apply(request, Approve(shown_hash="0" * 64))


def test_denial_is_the_message_of_a_denied_call(tmp_path: Path) -> None:
    registry, _ = _registry(tmp_path, Approve())
    check = registry.check_approval("note", {"path": "a"})
    assert check is not None
    message, details = denial(check.request({"path": "a"}), Deny("  not\n today "))
    assert message.startswith("The call of 'note' was not approved: not today. It was not run; do not retry it.")
    assert details == {
        "reason": "denied",
        "tool": "note",
        "message": "not today",
        "arguments_hash": arguments_hash({"path": "a"}),
    }
