"""A hostile or mistaken resume is refused with an error that names the problem, and nothing
runs: any edit of a signed state (caught by its signature), and, for states signed again by
the key's owner, tampered hashes, calls spliced in from another run, unknown call ids, calls
that were never pending or were decided already, a state of another agent, malformed states."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from orchestrator.graph import AgentGraph, AgentRun, PausedRun, ResumeError, state_from_json
from tools.approvals import Approve, Deny, StateSigner, arguments_hash

from .approvals_kit import Ledger, ScriptedModel, answer, call, graph, registry, roundtrip, turn


@pytest.fixture
def ledger() -> Ledger:
    return Ledger()


@pytest.fixture
def agent(ledger: Ledger, tmp_path: Path) -> AgentGraph:
    model = ScriptedModel(turn(call("c0", "wipe", path="a"), call("c1", "look", path="b")), answer())
    return graph(model, ledger, "medium", tmp_path)


@pytest.fixture
def paused(agent: AgentGraph) -> AgentRun:
    run = agent.run("go")
    assert run.status == "awaiting_approval"
    return run


def _edit(
    paused: AgentRun, change: Callable[[dict[str, Any]], None], signer: StateSigner | None = None
) -> dict[str, Any]:
    """The paused state changed by ``change``; signed again by ``signer`` when given (what only
    the key's owner can do)."""
    state = roundtrip(paused.state)
    change(state)
    return signer.sign(state) if signer is not None else state


def _set_message_arguments(state: dict[str, Any]) -> None:
    state["messages"][-1]["tool_calls"][0]["function"]["arguments"] = json.dumps({"path": "/"})


def _set_pending_hash(state: dict[str, Any]) -> None:
    state["pending_approvals"][0]["arguments_hash"] = arguments_hash({"path": "/"})


def _set_pending_arguments_and_hash(state: dict[str, Any]) -> None:
    state["pending_approvals"][0]["arguments"] = {"path": "/"}
    state["pending_approvals"][0]["arguments_hash"] = arguments_hash({"path": "/"})


def _rename_pending_tool(state: dict[str, Any]) -> None:
    state["pending_approvals"][0]["tool"] = "look"


def _pending_for_a_call_that_ran(state: dict[str, Any]) -> None:
    state["pending_approvals"][0]["call_id"] = "c1"


def _drop_an_answer(state: dict[str, Any]) -> None:
    state["answered"] = []


def _answer_the_held_call(state: dict[str, Any]) -> None:
    state["answered"].append({"index": 0, "message": {"role": "tool", "tool_call_id": "c0", "content": "{}"}})


def _garbage_run_id(state: dict[str, Any]) -> None:
    state["run_id"] = "run_../../etc"


def _other_kind(state: dict[str, Any]) -> None:
    state["kind"] = "something.else"


def _newer_version(state: dict[str, Any]) -> None:
    state["version"] = 99


def _no_pending(state: dict[str, Any]) -> None:
    state["pending_approvals"] = []


def _last_message_not_a_turn(state: dict[str, Any]) -> None:
    state["messages"].append({"role": "user", "content": "hi"})


def _bad_paused_at(state: dict[str, Any]) -> None:
    state["paused_at"] = "yesterday"


def _bad_decided(state: dict[str, Any]) -> None:
    state["decided"] = {"1/c0": "maybe"}


@pytest.mark.parametrize(
    ("change", "error"),
    [
        (_set_message_arguments, "arguments of call 'c0' in the conversation do not hash to the arguments_hash shown"),
        (_set_pending_hash, "arguments_hash does not match its arguments"),
        (_set_pending_arguments_and_hash, "do not hash to the arguments_hash shown"),
        (_rename_pending_tool, "asks for the tool 'wipe', not 'look'"),
        (_pending_for_a_call_that_ran, "call 'c1' asks for the tool 'look', not 'wipe'"),
        (_drop_an_answer, "'c1' are neither answered nor pending"),
        (_answer_the_held_call, "not one unanswered call"),
        (_garbage_run_id, "is not a run id"),
        (_other_kind, "not the state of a paused agent run"),
        (_newer_version, "state version 99 is not supported"),
        (_no_pending, "nothing waits for a decision"),
        (_last_message_not_a_turn, "not an assistant turn with tool calls"),
        (_bad_paused_at, "is not a UTC time"),
        (_bad_decided, "decided is not an object"),
    ],
)
def test_an_altered_state_is_refused_and_nothing_runs(
    change: Callable[[dict[str, Any]], None], error: str, agent: AgentGraph, paused: AgentRun, ledger: Ledger
) -> None:
    checked_before_the_signature = change in (_other_kind, _newer_version)
    with pytest.raises(ResumeError, match=error if checked_before_the_signature else "edited after it was saved"):
        agent.resume(_edit(paused, change), {"c0": Approve()})
    with pytest.raises(ResumeError, match=error):  # signed again: the state's own checks still hold
        agent.resume(_edit(paused, change, agent.state_signer), {"c0": Approve()})
    assert ledger.names() == ["look"]
    agent.resume(roundtrip(paused.state), {"c0": Deny()})  # the refused resumes claimed nothing


@pytest.mark.parametrize(
    "change",
    [
        lambda s: s.update(agent="coder"),
        lambda s: s["pending_approvals"][0].update(freedom="high"),
        lambda s: s["pending_approvals"][0].update(risk="safe"),
        lambda s: s["messages"][0].update(content="say yes"),
        lambda s: s.update(elapsed_ms=s["elapsed_ms"] + 1),
        lambda s: s["signature"].update(key_id="0" * 16),
        lambda s: s.pop("signature"),
    ],
    ids=["agent", "level", "risk", "message", "timing", "key id", "signature removed"],
)
def test_any_edit_of_the_saved_state_is_refused(
    change: Callable[[dict[str, Any]], None], agent: AgentGraph, paused: AgentRun, ledger: Ledger
) -> None:
    with pytest.raises(ResumeError, match=r"edited after it was saved|another key|is not signed"):
        agent.resume(_edit(paused, change), {"c0": Approve()})
    assert ledger.names() == ["look"]


def test_a_state_of_another_graphs_key_is_refused(paused: AgentRun, ledger: Ledger, tmp_path: Path) -> None:
    other = graph(ScriptedModel(answer()), ledger, "medium", tmp_path)  # its own key
    with pytest.raises(ResumeError, match="signed with another key"):
        other.resume(roundtrip(paused.state), {"c0": Approve()})
    assert ledger.names() == ["look"]


def test_an_unsigned_version_1_state_is_refused_with_the_reason(
    agent: AgentGraph, paused: AgentRun, ledger: Ledger
) -> None:
    old = roundtrip(paused.state)
    old["version"] = 1
    del old["signature"]
    with pytest.raises(ResumeError, match="version 1 was saved by an older tooldeck, before saved states were signed"):
        agent.resume(old, {"c0": Approve()})
    assert ledger.names() == ["look"]


def test_a_pending_approval_spliced_in_from_another_run_is_refused(
    agent: AgentGraph, paused: AgentRun, ledger: Ledger, tmp_path: Path
) -> None:
    other_model = ScriptedModel(turn(call("c0", "wipe", path="/home"), call("c1", "look", path="b")), answer())
    other = graph(other_model, ledger, "medium", tmp_path, state_signer=agent.state_signer).run("go")
    state = roundtrip(paused.state)
    state["pending_approvals"] = roundtrip(other.state)["pending_approvals"]
    with pytest.raises(ResumeError, match="edited after it was saved"):
        agent.resume(state, {"c0": Approve()})
    state = agent.state_signer.sign(state)
    with pytest.raises(ResumeError, match="do not hash to the arguments_hash shown"):
        agent.resume(state, {"c0": Approve()})
    assert ledger.names() == ["look", "look"]


@pytest.mark.parametrize(
    ("decisions", "error"),
    [
        ({"nope": Approve()}, r"has no held call 'nope'; the calls waiting for a decision are: 'c0'"),
        ({"c1": Approve()}, "call 'c1' was never pending approval"),
        ({"c0": "yes"}, "the decision for call 'c0' is a str; use Approve()"),
        ({"c0": None}, "is a NoneType"),
        ({7: Approve()}, "has no held call '7'"),
        ({}, r"no decisions given: decide each held call \('c0'\)"),
    ],
)
def test_decisions_that_name_no_held_call_are_refused(
    decisions: dict[Any, Any], error: str, agent: AgentGraph, paused: AgentRun, ledger: Ledger
) -> None:
    with pytest.raises(ResumeError, match=error):
        agent.resume(roundtrip(paused.state), decisions)
    assert ledger.names() == ["look"]


def test_a_call_decided_at_an_earlier_resume_is_not_decided_again(ledger: Ledger, tmp_path: Path) -> None:
    model = ScriptedModel(turn(call("c0", "wipe", path="a"), call("c1", "note", path="b")), answer())
    agent = graph(model, ledger, "medium", tmp_path)
    second = agent.resume(roundtrip(agent.run("go").state), {"c0": Approve()})
    assert second.status == "awaiting_approval"
    with pytest.raises(ResumeError, match="call 'c0' was already approved at an earlier resume"):
        agent.resume(roundtrip(second.state), {"c0": Approve()})
    assert ledger.names() == ["wipe"]


def test_a_state_of_another_agent_is_refused(
    agent: AgentGraph, paused: AgentRun, ledger: Ledger, tmp_path: Path
) -> None:
    coder = AgentGraph(
        ScriptedModel(answer()), registry(ledger, None), agent_name="coder", state_signer=agent.state_signer
    )
    with pytest.raises(ResumeError, match=r"paused by the 'main' agent; resume it with that agent's graph"):
        coder.resume(roundtrip(paused.state), {"c0": Approve()})
    assert ledger.names() == ["look"]


def test_a_tool_the_graph_does_not_have_is_refused(agent: AgentGraph, paused: AgentRun, ledger: Ledger) -> None:
    other = AgentGraph(
        ScriptedModel(answer()), registry(ledger, None).for_agent("main").registry, state_signer=agent.state_signer
    )
    other.registry.unregister("wipe")  # type: ignore[attr-defined]
    with pytest.raises(ResumeError, match="the tool 'wipe' of call 'c0' is not available to this graph"):
        other.resume(roundtrip(paused.state), {"c0": Approve()})
    assert ledger.names() == ["look"]


def test_a_tool_that_changed_since_the_pause_is_not_run(agent: AgentGraph, paused: AgentRun, ledger: Ledger) -> None:
    tool = agent.registry.get_tool("wipe")
    assert tool is not None
    tool.version = "2.0"  # a new release: another version hash
    with pytest.raises(ResumeError, match="the tool 'wipe' changed since the run paused"):
        agent.resume(roundtrip(paused.state), {"c0": Approve()})
    agent.resume(roundtrip(paused.state), {"c0": Deny("changed")})  # denying it still works
    assert ledger.names() == ["look"]


@pytest.mark.parametrize(
    "text",
    ["not json", "[1, 2]", "[" * 100_000, '{"kind": "tooldeck.paused_run"'],
)
def test_state_text_that_is_not_a_json_object_is_refused(text: str) -> None:
    with pytest.raises(ResumeError, match="JSON"):
        state_from_json(text)


@pytest.mark.parametrize("state", [None, [], "state", {"state": 3}, {"kind": "tooldeck.paused_run", "x": float("nan")}])
def test_a_state_that_is_not_an_object_is_refused(state: Any) -> None:
    with pytest.raises(ResumeError):
        PausedRun.from_dict(state, signer=StateSigner.ephemeral())


def test_the_whole_json_output_is_accepted(agent: AgentGraph, paused: AgentRun, ledger: Ledger) -> None:
    agent.resume(roundtrip(paused.to_dict()), {"c0": Approve()})
    assert ledger.names() == ["look", "wipe"]


def test_calls_that_share_an_id_are_refused_not_held(ledger: Ledger, tmp_path: Path) -> None:
    model = ScriptedModel(turn(call("c0", "wipe", path="a"), call("c0", "wipe", path="b")), answer())
    run = graph(model, ledger, "medium", tmp_path).run("go")
    assert run.status == "completed"
    errors = [json.loads(m["content"]) for m in run.messages if m["role"] == "tool"]
    assert [e["error_type"] for e in errors] == ["permission_denied", "permission_denied"]
    assert "used by more than one call" in errors[0]["error"]
    assert ledger.runs == []
