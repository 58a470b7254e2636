"""Claim stores: all-or-none claims; the file ledger is shared, pruned after its retention,
and an unusable ledger refuses every resume (nothing runs) with the file and the fix."""

from __future__ import annotations

import json
import threading
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from orchestrator.graph import AgentGraph, ClaimStoreError, FileClaimStore, MemoryClaimStore, ResumeError
from orchestrator.graph.claims import CLAIMS_FILE
from tools.approvals import Approve, StateSigner

from .approvals_kit import Ledger, ScriptedModel, answer, call, graph, registry, roundtrip, turn

RUN = "run_" + "a" * 32


@pytest.mark.parametrize("kind", ["memory", "file"])
def test_claims_are_all_or_none(kind: str, tmp_path: Path) -> None:
    store = MemoryClaimStore() if kind == "memory" else FileClaimStore(tmp_path / "claims.json")
    assert store.claim(RUN, ["1/a"]) == []
    assert store.claim(RUN, ["1/b", "1/a"]) == ["1/a"]
    assert store.claim(RUN, ["1/b"]) == []  # the refused claim took nothing
    assert store.claim("run_" + "b" * 32, ["1/a"]) == []  # another run


def test_threads_claiming_the_same_call_get_it_once(tmp_path: Path) -> None:
    store = FileClaimStore(tmp_path / "claims.json")
    won: list[bool] = []
    barrier = threading.Barrier(8)

    def claim() -> None:
        barrier.wait()
        won.append(store.claim(RUN, ["1/a"]) == [])

    threads = [threading.Thread(target=claim) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(won) == [False] * 7 + [True]


def test_the_ledger_drops_runs_older_than_its_retention(tmp_path: Path) -> None:
    now = [datetime(2026, 1, 1, tzinfo=timezone.utc)]
    store = FileClaimStore(tmp_path / "claims.json", retention=timedelta(days=30), clock=lambda: now[0])
    store.claim(RUN, ["1/a"])
    now[0] += timedelta(days=31)
    store.claim("run_" + "b" * 32, ["1/a"])
    assert json.loads(store.path.read_text())["runs"].keys() == {"run_" + "b" * 32}


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("{not json", "is not valid JSON"),
        ('{"version": 2, "runs": {}}', "is not a claim ledger"),
        ('{"version": 1, "runs": {"r": {"calls": "1/a"}}}', "has no list of calls"),
    ],
)
def test_an_unusable_ledger_refuses_the_resume(content: str, problem: str, tmp_path: Path) -> None:
    ledger = Ledger()
    claims = FileClaimStore(tmp_path / "claims.json")
    model = ScriptedModel(turn(call("c0", "note", path="a")), answer())
    agent = graph(model, ledger, "medium", tmp_path, claims=claims)
    state = agent.run("go").state
    claims.path.write_text(content)
    with pytest.raises(ResumeError, match=rf"claim ledger .*claims.json .*{problem}.*; no paused run can be resumed"):
        agent.resume(roundtrip(state), {"c0": Approve()})
    assert ledger.runs == []
    assert claims.path.read_text() == content  # never overwritten
    with pytest.raises(ClaimStoreError):
        claims.claimed(RUN)


def test_a_directory_as_ledger_is_refused(tmp_path: Path) -> None:
    (tmp_path / "claims.json").mkdir()
    with pytest.raises(ClaimStoreError, match="is not a regular file"):
        FileClaimStore(tmp_path / "claims.json").claim(RUN, ["1/a"])


def test_states_may_not_outlive_the_claims(tmp_path: Path) -> None:
    claims = FileClaimStore(tmp_path / "claims.json", retention=timedelta(days=7))
    with pytest.raises(ValueError, match="must not exceed the claim store's retention"):
        AgentGraph(ScriptedModel(answer()), registry(Ledger(), None), claims=claims)
    AgentGraph(ScriptedModel(answer()), registry(Ledger(), None), claims=claims, max_state_age=timedelta(days=7))


def test_a_call_id_too_long_to_be_held_is_refused(tmp_path: Path) -> None:
    ledger = Ledger()
    model = ScriptedModel(turn(call("c" * 300, "note", path="a")), answer())
    run = graph(model, ledger, "medium", tmp_path).run("go")
    assert run.status == "completed" and ledger.runs == []
    assert "longer than 256 characters" in run.messages[2]["content"]


def test_two_graphs_resuming_one_saved_state_run_the_approved_call_once_by_default(tmp_path: Path) -> None:
    """The defect of issue 23: with approvals kept in a file, two graph objects (no claim store
    given) resuming the same saved state both ran the approved call; the default claim store
    now lives beside the approvals."""
    ledger = Ledger()
    model = ScriptedModel(turn(call("c0", "wipe", path="a")), answer())
    signer = StateSigner.ephemeral()  # one user's key, as two processes of one user share it
    state = graph(model, ledger, "high", tmp_path, state_signer=signer).run("go").state
    assert state is not None
    graph(model, ledger, "high", tmp_path, state_signer=signer).resume(roundtrip(state), {"c0": Approve()})
    with pytest.raises(ResumeError, match="resumed before"):
        graph(model, ledger, "high", tmp_path, state_signer=signer).resume(roundtrip(state), {"c0": Approve()})
    assert ledger.names() == ["wipe"]
    assert FileClaimStore(tmp_path / CLAIMS_FILE).claimed(state["run_id"]) == ["1/c0"]
