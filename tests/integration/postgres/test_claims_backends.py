"""The claim ledger's contract, run against the file ledger and PostgreSQL: all-or-none
claims, exactly one winner among racing threads, retention, and the graph's default store
beside its approvals."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Protocol

import pytest

from orchestrator.graph import AgentGraph, FileClaimStore, ResumeError
from orchestrator.graph.claims import claims_beside
from orchestrator.graph.postgres_claims import PostgresClaimStore
from tests.unit.orchestrator.approvals_kit import Ledger, ScriptedModel, answer, call, registry, roundtrip, turn
from tools.approvals import ApprovalPolicy, ApprovalsStore, Approve, PostgresApprovalsStore, StateSigner

from .backends import BACKENDS, database_url_for

RUN = "run_" + "a" * 32
OTHER = "run_" + "b" * 32
START = datetime(2026, 1, 1, tzinfo=timezone.utc)


class SharedLedger(Protocol):
    """What both ledgers offer: claims and their inspection."""

    def claim(self, run_id: str, keys: Sequence[str]) -> list[str]: ...

    def claimed(self, run_id: str) -> list[str]: ...


MakeStore = Callable[..., SharedLedger]


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture(params=BACKENDS)
def make_store(request: pytest.FixtureRequest, tmp_path: Path, clock: Clock) -> Iterator[MakeStore]:
    """Builds stores on one shared ledger (a file, or one database)."""
    made: list[PostgresClaimStore] = []
    url = database_url_for(request) if request.param == "postgres" else None

    def make(retention: timedelta = timedelta(days=30)) -> SharedLedger:
        if url is None:
            return FileClaimStore(tmp_path / "claims.json", retention=retention, clock=clock)
        store = PostgresClaimStore(url, retention=retention, clock=clock)
        made.append(store)
        return store

    yield make
    for store in made:
        store.close()


def test_claims_are_all_or_none(make_store: MakeStore) -> None:
    store = make_store()
    assert store.claim(RUN, ["1/a"]) == []
    assert store.claim(RUN, ["1/b", "1/a"]) == ["1/a"]
    assert store.claim(RUN, ["1/b"]) == []  # the refused claim took nothing
    assert store.claim(OTHER, ["1/a"]) == []  # another run
    assert sorted(store.claimed(RUN)) == ["1/a", "1/b"]


def test_two_store_objects_share_the_ledger(make_store: MakeStore) -> None:
    first, second = make_store(), make_store()
    assert first.claim(RUN, ["1/a", "1/b"]) == []
    assert second.claim(RUN, ["1/c", "1/b"]) == ["1/b"]
    assert second.claim(RUN, ["1/c"]) == []


def test_threads_claiming_the_same_calls_get_them_once(make_store: MakeStore) -> None:
    stores = [make_store() for _ in range(8)]
    won: list[int] = []
    barrier = threading.Barrier(len(stores))

    def claim(index: int) -> None:
        barrier.wait()
        if stores[index].claim(RUN, ["1/a", "1/b", "1/c"]) == []:
            won.append(index)

    threads = [threading.Thread(target=claim, args=(i,)) for i in range(len(stores))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(won) == 1
    assert sorted(stores[0].claimed(RUN)) == ["1/a", "1/b", "1/c"]


def test_claims_older_than_the_retention_are_dropped(make_store: MakeStore, clock: Clock) -> None:
    store = make_store(timedelta(days=30))
    store.claim(RUN, ["1/a"])
    clock.now += timedelta(days=31)
    store.claim(OTHER, ["1/a"])
    assert store.claimed(RUN) == []
    assert store.claimed(OTHER) == ["1/a"]


def test_a_graph_without_a_claim_store_claims_beside_its_approvals(
    request: pytest.FixtureRequest, tmp_path: Path, make_store: MakeStore
) -> None:
    backend = request.node.callspec.params["make_store"]
    approvals: ApprovalsStore | PostgresApprovalsStore
    if backend == "file":
        approvals = ApprovalsStore(tmp_path / "approvals.json")
    else:
        approvals = PostgresApprovalsStore(database_url_for(request))
    ledger = Ledger()
    model = ScriptedModel(turn(call("c0", "wipe", path="a")), answer())

    signer = StateSigner.ephemeral()  # the replicas share one state key

    def graph() -> AgentGraph:
        return AgentGraph(model, registry(ledger, ApprovalPolicy("high", approvals)), state_signer=signer)

    state = graph().run("go").state
    assert state is not None
    graph().resume(roundtrip(state), {"c0": Approve()})
    with pytest.raises(ResumeError, match="resumed before"):
        graph().resume(roundtrip(state), {"c0": Approve()})
    assert ledger.names() == ["wipe"]
    beside = claims_beside(approvals)
    if isinstance(approvals, ApprovalsStore):
        assert isinstance(beside, FileClaimStore) and beside.path == tmp_path / "resumed-calls.json"
    else:
        assert isinstance(beside, PostgresClaimStore) and beside.database is approvals.database
    assert beside.claimed(state["run_id"]) == ["1/c0"]
    if isinstance(approvals, PostgresApprovalsStore):
        approvals.close()
