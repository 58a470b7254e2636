"""AgentGraph human in the loop: a call that needs approval is held while the rest of the turn
runs; the run ends awaiting_approval with a JSON state; resume runs approved calls exactly
once with exactly the approved arguments, answers denied ones, and only then calls the model
again (PEERS 19)."""

from __future__ import annotations

import asyncio
import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from orchestrator.graph import AgentGraph, FileClaimStore, ResumeError
from tools.approvals import ApprovalPolicy, ApprovalsStore, Approve, Deny, StateSigner, arguments_hash

from .approvals_kit import Ledger, ScriptedModel, answer, call, graph, registry, roundtrip, tool_answers, turn


def test_a_call_that_needs_approval_is_held_while_the_rest_of_the_turn_runs(tmp_path: Path) -> None:
    ledger = Ledger()
    model = ScriptedModel(turn(call("c0", "note", path="a"), call("c1", "look", path="b")), answer())
    run = graph(model, ledger, "medium", tmp_path).run("go")
    assert run.status == "awaiting_approval"
    assert run.stop_reason == "awaiting_approval"
    assert ledger.runs == [("look", {"path": "b"})]
    assert len(model.seen) == 1  # the model waits for the decision
    assert run.answer == ""
    assert [r.to_dict() for r in run.pending_approvals] == [
        {
            "call_id": "c0",
            "tool": "note",
            "arguments": {"path": "a"},
            "arguments_hash": arguments_hash({"path": "a"}),
            "version_hash": run.pending_approvals[0].version_hash,
            "risk": "moderate",
            "freedom": "medium",
            "reason": "moderate tools need a person's approval at freedom level medium (only safe tools run freely)",
        }
    ]
    assert run.messages[-1]["role"] == "assistant"  # no partial answers in the conversation yet
    assert run.state is not None
    assert run.state["pending_approvals"] == [r.to_dict() for r in run.pending_approvals]
    assert roundtrip(run.to_dict())["state"] == run.state
    assert [r["tool_call_id"] for r in run.tool_results] == ["c1"]


def test_an_approved_call_runs_once_with_its_arguments_after_a_json_round_trip(tmp_path: Path) -> None:
    ledger = Ledger()
    model = ScriptedModel(turn(call("c0", "note", path="a"), call("c1", "look", path="b")), answer("ok"))
    agent = graph(model, ledger, "medium", tmp_path)
    paused = agent.run("go")
    done = agent.resume(roundtrip(paused.state), {"c0": Approve()})
    assert done.status == "completed" and done.answer == "ok"
    assert ledger.runs == [("look", {"path": "b"}), ("note", {"path": "a"})]
    assert done.run_id == paused.run_id
    assert [m["role"] for m in done.messages] == ["user", "assistant", "tool", "tool", "assistant"]
    # every call of the turn answered once, in call order, and the model saw both answers
    assert tool_answers(done.messages) == [
        ("c0", {"status": "success", "data": "note:a"}),
        ("c1", {"status": "success", "data": "look:b"}),
    ]
    assert tool_answers(model.seen[1]) == tool_answers(done.messages)
    assert [r["tool_call_id"] for r in done.tool_results] == ["c1", "c0"]
    assert done.iterations == 2


def test_resuming_the_same_state_twice_runs_the_call_once(tmp_path: Path) -> None:
    ledger = Ledger()
    model = ScriptedModel(turn(call("c0", "wipe", path="a")), answer())
    agent = graph(model, ledger, "high", tmp_path)
    state = agent.run("go").state
    assert state is not None
    agent.resume(roundtrip(state), {"c0": Approve()})
    for decision in (Approve(), Deny("no")):
        with pytest.raises(ResumeError, match=r"'c0' of run run_[0-9a-f]{32} were resumed before"):
            agent.resume(roundtrip(state), {"c0": decision})
    assert ledger.names() == ["wipe"]


def test_graphs_sharing_a_file_claim_store_run_the_call_once(tmp_path: Path) -> None:
    ledger = Ledger()
    claims = tmp_path / "claims.json"
    model = ScriptedModel(turn(call("c0", "wipe", path="a")), answer())
    signer = StateSigner.ephemeral()  # two processes of one user: the user's key
    first = graph(model, ledger, "high", tmp_path, claims=FileClaimStore(claims), state_signer=signer)
    state = first.run("go").state
    assert state is not None
    second = graph(model, ledger, "high", tmp_path, claims=FileClaimStore(claims), state_signer=signer)
    second.resume(roundtrip(state), {"c0": Approve()})
    with pytest.raises(ResumeError, match="resumed before"):
        first.resume(roundtrip(state), {"c0": Approve()})
    assert ledger.names() == ["wipe"]
    assert FileClaimStore(claims).claimed(state["run_id"]) == ["1/c0"]


def test_with_approvals_kept_nowhere_only_the_state_and_the_graph_remember(tmp_path: Path) -> None:
    """What holds when the policy has no store (documented): each graph remembers its own
    resumes in memory; two such graphs do not know about each other. With a store, the claims
    live beside it (test_claim_stores.py)."""
    ledger = Ledger()
    model = ScriptedModel(turn(call("c0", "wipe", path="a")), answer())
    signer = StateSigner.ephemeral()  # the two graphs belong to one user

    def unstored() -> AgentGraph:
        return AgentGraph(model, registry(ledger, ApprovalPolicy("high")), state_signer=signer)

    state = unstored().run("go").state
    assert state is not None
    unstored().resume(roundtrip(state), {"c0": Approve()})
    unstored().resume(roundtrip(state), {"c0": Approve()})
    assert ledger.names() == ["wipe", "wipe"]


def test_edited_arguments_run_exactly_as_approved_and_are_hashed_again(tmp_path: Path) -> None:
    ledger = Ledger()
    model = ScriptedModel(turn(call("c0", "note", path="a")), answer())
    agent = graph(model, ledger, "medium", tmp_path)
    paused = agent.run("go")
    done = agent.resume(roundtrip(paused.state), {"c0": Approve(arguments={"path": "safer"})})
    assert ledger.runs == [("note", {"path": "safer"})]
    assert tool_answers(done.messages) == [("c0", {"status": "success", "data": "note:safer"})]
    assert done.tool_results[0]["arguments"] == {"path": "safer"}


def test_edited_arguments_are_validated_like_any_call(tmp_path: Path) -> None:
    ledger = Ledger()
    model = ScriptedModel(turn(call("c0", "note", path="a")), answer())
    agent = graph(model, ledger, "medium", tmp_path)
    paused = agent.run("go")
    done = agent.resume(roundtrip(paused.state), {"c0": Approve(arguments={"path": 7, "extra": True})})
    ((call_id, content),) = tool_answers(done.messages)
    assert call_id == "c0" and content["error_type"] == "validation_error"
    assert ledger.runs == []


def test_edited_arguments_that_are_not_an_object_are_refused_before_anything_runs(tmp_path: Path) -> None:
    ledger = Ledger()
    model = ScriptedModel(turn(call("c0", "note", path="a")), answer())
    agent = graph(model, ledger, "medium", tmp_path)
    state = agent.run("go").state
    assert state is not None
    with pytest.raises(ResumeError, match="edited arguments of call 'c0' are not usable"):
        agent.resume(state, {"c0": Approve(arguments=["x"])})  # type: ignore[arg-type]
    agent.resume(state, {"c0": Approve()})  # nothing was claimed by the refused resume
    assert ledger.names() == ["note"]


def test_a_decision_for_other_arguments_than_shown_is_refused(tmp_path: Path) -> None:
    ledger = Ledger()
    model = ScriptedModel(turn(call("c0", "note", path="a")), answer())
    agent = graph(model, ledger, "medium", tmp_path)
    paused = agent.run("go")
    shown = paused.pending_approvals[0].arguments_hash
    # the state is changed after the person looked: other arguments, every hash consistent, and
    # signed again (by the key's owner: a mistake, or a program of theirs)
    state = roundtrip(paused.state)
    state["messages"][-1]["tool_calls"][0]["function"]["arguments"] = json.dumps({"path": "/"})
    state["pending_approvals"][0]["arguments"] = {"path": "/"}
    state["pending_approvals"][0]["arguments_hash"] = arguments_hash({"path": "/"})
    state = agent.state_signer.sign(state)
    with pytest.raises(ResumeError, match="arguments changed after they were shown"):
        agent.resume(state, {"c0": Approve(shown_hash=shown)})
    assert ledger.runs == []
    agent.resume(roundtrip(paused.state), {"c0": Approve(shown_hash=shown)})
    assert ledger.runs == [("note", {"path": "a"})]


def test_a_denied_call_is_answered_with_permission_denied_and_the_model_continues(tmp_path: Path) -> None:
    ledger = Ledger()
    model = ScriptedModel(turn(call("c0", "wipe", path="/"), call("c1", "look", path="b")), answer("I did not wipe."))
    agent = graph(model, ledger, "medium", tmp_path)
    done = agent.resume(roundtrip(agent.run("go").state), {"c0": Deny("  not the root\ndirectory ")})
    assert done.answer == "I did not wipe."
    assert ledger.names() == ["look"]
    denied = tool_answers(model.seen[1])[0]
    assert denied == (
        "c0",
        {
            "status": "error",
            "error": "The call of 'wipe' was not approved: not the root directory. It was not run; do not retry it. "
            "Continue without it, or ask the user what to do instead.",
            "error_type": "permission_denied",
        },
    )
    record = done.tool_results[-1]
    assert record["error_type"] == "permission_denied" and record["name"] == "wipe"


def test_remember_stores_the_approval_for_the_tool_version(tmp_path: Path) -> None:
    ledger = Ledger()
    model = ScriptedModel(turn(call("c0", "note", path="a")), answer(), turn(call("c0", "note", path="b")), answer())
    agent = graph(model, ledger, "medium", tmp_path)
    paused = agent.run("go")
    agent.resume(roundtrip(paused.state), {"c0": Approve(remember=True)})
    stored = ApprovalsStore(tmp_path / "approvals.json").get("note")
    assert stored is not None and stored.version_hash == paused.pending_approvals[0].version_hash
    again = agent.run("go")  # the same tool version now runs without asking
    assert again.status == "completed"
    assert ledger.names() == ["note", "note"]


def test_the_model_waits_until_every_held_call_is_decided(tmp_path: Path) -> None:
    ledger = Ledger()
    calls = [call("c0", "note", path="a"), call("c1", "look", path="b"), call("c2", "wipe", path="c")]
    model = ScriptedModel(turn(*calls), answer())
    agent = graph(model, ledger, "medium", tmp_path)
    first = agent.run("go")
    assert [r.call_id for r in first.pending_approvals] == ["c0", "c2"]
    second = agent.resume(roundtrip(first.state), {"c2": Approve()})
    assert second.status == "awaiting_approval"
    assert [r.call_id for r in second.pending_approvals] == ["c0"]
    assert len(model.seen) == 1
    assert ledger.names() == ["look", "wipe"]
    done = agent.resume(roundtrip(second.state), {"c0": Deny()})
    assert len(model.seen) == 2
    assert [call_id for call_id, _ in tool_answers(done.messages)] == ["c0", "c1", "c2"]
    assert ledger.names() == ["look", "wipe"]


@pytest.mark.parametrize(
    ("level", "held"),
    [("low", ["a", "b", "c"]), ("medium", ["b", "c"]), ("high", ["c"])],
)
def test_each_freedom_level_through_the_graph(level: str, held: list[str], tmp_path: Path) -> None:
    ledger = Ledger()
    model = ScriptedModel(turn(call("a", "look", path="1"), call("b", "note", path="2"), call("c", "wipe", path="3")))
    run = graph(model, ledger, level, tmp_path).run("go")
    assert [r.call_id for r in run.pending_approvals] == held
    assert sorted(ledger.names()) == sorted({"a": "look", "b": "note", "c": "wipe"}[i] for i in "abc" if i not in held)


def test_without_a_policy_nothing_is_held(tmp_path: Path) -> None:
    ledger = Ledger()
    model = ScriptedModel(turn(call("c0", "wipe", path="a")), answer())
    assert graph(model, ledger, None, tmp_path).run("go").status == "completed"
    assert ledger.names() == ["wipe"]


def test_hold_for_approval_false_leaves_the_refusal_to_the_registry(tmp_path: Path) -> None:
    ledger = Ledger()
    model = ScriptedModel(turn(call("c0", "wipe", path="a"), call("c1", "look", path="b")), answer())
    run = graph(model, ledger, "medium", tmp_path, hold_for_approval=False).run("go")
    assert run.status == "completed"
    (_, wiped), (_, looked) = tool_answers(run.messages)
    assert wiped["error_type"] == "permission_denied" and "needs a person's approval" in wiped["error"]
    assert looked["status"] == "success"
    assert ledger.names() == ["look"]


def test_a_later_turn_can_pause_again_with_the_same_call_ids(tmp_path: Path) -> None:
    ledger = Ledger()
    model = ScriptedModel(turn(call("c0", "note", path="a")), turn(call("c0", "note", path="b")), answer())
    agent = graph(model, ledger, "medium", tmp_path)
    first = agent.run("go")
    second = agent.resume(roundtrip(first.state), {"c0": Approve()})
    assert second.status == "awaiting_approval" and second.iterations == 2
    assert second.pending_approvals[0].arguments == {"path": "b"}
    done = agent.resume(roundtrip(second.state), {"c0": Approve()})
    assert done.status == "completed"
    assert ledger.runs == [("note", {"path": "a"}), ("note", {"path": "b"})]
    assert roundtrip(second.state)["decided"] == {"1/c0": "approved"}


def test_the_budget_still_counts_after_a_resume(tmp_path: Path) -> None:
    ledger = Ledger()
    model = ScriptedModel(turn(call("c0", "note", path="a")))
    agent = graph(model, ledger, "medium", tmp_path, max_iterations=1)
    done = agent.resume(roundtrip(agent.run("go").state), {"c0": Approve()})
    assert done.stop_reason == "max_iterations" and len(model.seen) == 1
    assert "note -> success" in done.messages[-1]["content"]


def test_resume_never_changes_the_state_it_was_given(tmp_path: Path) -> None:
    ledger = Ledger()
    model = ScriptedModel(turn(call("c0", "note", path="a")), answer())
    agent = graph(model, ledger, "medium", tmp_path)
    state = agent.run("go").state
    before = json.dumps(state, sort_keys=True)
    agent.resume(state, {"c0": Approve()})  # type: ignore[arg-type]
    assert json.dumps(state, sort_keys=True) == before


def test_a_state_older_than_max_state_age_is_refused(tmp_path: Path) -> None:
    ledger = Ledger()
    clock = [datetime(2026, 5, 1, tzinfo=timezone.utc)]
    model = ScriptedModel(turn(call("c0", "note", path="a")), answer())
    agent = graph(model, ledger, "medium", tmp_path, now=lambda: clock[0])
    state = agent.run("go").state
    assert state is not None and state["paused_at"] == "2026-05-01T00:00:00Z"
    clock[0] += timedelta(days=31)
    with pytest.raises(ResumeError, match="longer ago than 30 days"):
        agent.resume(state, {"c0": Approve()})
    clock[0] = datetime(2026, 4, 1, tzinfo=timezone.utc)
    with pytest.raises(ResumeError, match="in the future"):
        agent.resume(state, {"c0": Approve()})
    assert ledger.runs == []


def test_async_run_and_resume(tmp_path: Path) -> None:
    ledger = Ledger()
    model = ScriptedModel(turn(call("c0", "note", path="a"), call("c1", "look", path="b")), answer("ok"))
    agent: AgentGraph = graph(model, ledger, "medium", tmp_path)

    async def go() -> None:
        paused = await agent.arun("go")
        assert paused.status == "awaiting_approval"
        done = await agent.aresume(roundtrip(paused.state), {"c0": Approve(arguments={"path": "z"})})
        assert done.answer == "ok"
        assert [c for c, _ in tool_answers(done.messages)] == ["c0", "c1"]
        with pytest.raises(ResumeError, match="resumed before"):
            await agent.aresume(roundtrip(paused.state), {"c0": Approve()})

    asyncio.run(go())
    assert ledger.runs == [("look", {"path": "b"}), ("note", {"path": "z"})]
