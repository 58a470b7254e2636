"""AgentGraph's synchronous approver: asked on the calling thread, one call at a time in call
order, before anything of the turn runs; its Approve runs the call (edited arguments too),
Deny answers it, None holds it; a failing approver refuses the call."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from orchestrator.graph import AgentGraph
from tools.approvals import ApprovalRequest, ApprovalsStore, Approve, Deny

from .approvals_kit import Ledger, ScriptedModel, answer, call, graph, policy, registry, roundtrip, tool_answers, turn


class Asker:
    """Answers from a script; keeps what it was asked and on which thread."""

    def __init__(self, *answers: Any) -> None:
        self.answers = list(answers)
        self.asked: list[str | None] = []
        self.threads: list[int] = []

    def __call__(self, request: ApprovalRequest) -> Approve | Deny | None:
        self.asked.append(request.call_id)
        self.threads.append(threading.get_ident())
        reply = self.answers.pop(0)
        if isinstance(reply, BaseException):
            raise reply
        return reply  # type: ignore[no-any-return]


def _three() -> ScriptedModel:
    calls = [call("c0", "note", path="a"), call("c1", "look", path="b"), call("c2", "wipe", path="c")]
    return ScriptedModel(turn(*calls), answer())


def test_the_approver_is_asked_in_call_order_on_the_calling_thread(tmp_path: Path) -> None:
    ledger = Ledger()
    asker = Asker(Approve(), Deny("no"))
    run = graph(_three(), ledger, "medium", tmp_path, approver=asker).run("go")
    assert run.status == "completed"
    assert asker.asked == ["c0", "c2"]
    assert set(asker.threads) == {threading.get_ident()}
    assert sorted(ledger.names()) == ["look", "note"]
    answers = dict(tool_answers(run.messages))
    assert answers["c2"]["error_type"] == "permission_denied" and ": no." in answers["c2"]["error"]
    assert [c for c, _ in tool_answers(run.messages)] == ["c0", "c1", "c2"]


def test_none_holds_the_call_and_a_later_resume_asks_again(tmp_path: Path) -> None:
    ledger = Ledger()
    asker = Asker(None, Approve(), Approve(arguments={"path": "edited"}))
    agent = graph(_three(), ledger, "medium", tmp_path, approver=asker)
    paused = agent.run("go")
    assert [r.call_id for r in paused.pending_approvals] == ["c0"]
    assert sorted(ledger.names()) == ["look", "wipe"]
    done = agent.resume(roundtrip(paused.state))  # no decisions given: the approver is asked
    assert done.status == "completed"
    assert asker.asked == ["c0", "c2", "c0"]
    assert ("note", {"path": "edited"}) in ledger.runs


def test_a_failing_approver_refuses_the_call(tmp_path: Path) -> None:
    ledger = Ledger()
    asker = Asker(RuntimeError("terminal gone"), "yes")
    run = graph(_three(), ledger, "medium", tmp_path, approver=asker).run("go")
    answers = dict(tool_answers(run.messages))
    for call_id in ("c0", "c2"):
        assert answers[call_id]["error_type"] == "permission_denied"
        assert "asking for it failed" in answers[call_id]["error"]
    assert ledger.names() == ["look"]


def test_an_approver_that_remembers_stores_the_approval(tmp_path: Path) -> None:
    ledger = Ledger()
    model = ScriptedModel(turn(call("c0", "note", path="a")), answer())
    graph(model, ledger, "medium", tmp_path, approver=Asker(Approve(remember=True))).run("go")
    assert ApprovalsStore(tmp_path / "approvals.json").get("note") is not None


def test_the_registry_approver_is_the_default_and_is_asked_by_the_graph(tmp_path: Path) -> None:
    ledger = Ledger()
    asker = Asker(Approve(), Approve())

    def ask(request: ApprovalRequest) -> Approve | Deny:
        return asker(request) or Deny()

    agent = AgentGraph(_three(), registry(ledger, policy("medium", tmp_path), approver=ask))
    assert agent.approver is ask
    assert agent.run("go").status == "completed"
    assert asker.asked == ["c0", "c2"]
    assert set(asker.threads) == {threading.get_ident()}


def test_async_runs_ask_the_approver_in_a_worker_thread(tmp_path: Path) -> None:
    ledger = Ledger()
    asker = Asker(Approve(), Approve())
    agent = graph(_three(), ledger, "medium", tmp_path, approver=asker)
    run = asyncio.run(agent.arun("go"))
    assert run.status == "completed"
    assert asker.asked == ["c0", "c2"]
    assert threading.get_ident() not in asker.threads
