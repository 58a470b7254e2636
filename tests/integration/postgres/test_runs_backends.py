"""The run store's contract, run against the files and PostgreSQL: round trips, a save
replacing the run's record, newest first with a status filter and a limit, hostile ids
refused, bounds by age and count with paused runs kept longest, concurrent writers never
leaving a torn record, redacted records stored as given; and what only the database has
(rows that are not records, an unreachable database, the choice of `run_store_from_env`)."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.unit.tools.test_run_records import KEY, T0, record
from tools.runs import (
    FileRunStore,
    PostgresRunStore,
    RecordedApproval,
    RecordedStep,
    RecordedToolCall,
    RunStore,
    RunStoreError,
    redacted,
    run_store_from_env,
)

from .backends import BACKENDS, database_url_for


@dataclass
class RunsPlace:
    """One runs directory or one database, and the stores opened over it."""

    directory: Path
    url: str | None
    made: list[PostgresRunStore] = field(default_factory=list)

    def open(self, **options: Any) -> RunStore:
        if self.url is None:
            return FileRunStore(self.directory, **options)
        store = PostgresRunStore(self.url, **options)
        self.made.append(store)
        return store

    def saved_at(self, run_id: str, moment: datetime) -> None:
        """Make the record of ``run_id`` look saved at ``moment`` (what bounds by age read)."""
        if self.url is None:
            os.utime(self.directory / f"{run_id}.json", (moment.timestamp(), moment.timestamp()))
            return
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute("UPDATE tooldeck_runs SET saved_at = %s WHERE id = %s", (moment, run_id))


@pytest.fixture(params=BACKENDS)
def place(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[RunsPlace]:
    url = database_url_for(request) if request.param == "postgres" else None
    where = RunsPlace(tmp_path / "runs", url)
    yield where
    for store in where.made:
        store.close()


def test_a_store_round_trips_records(place: RunsPlace) -> None:
    store = place.open()
    assert isinstance(store, RunStore)
    assert store.get("run_nothing") is None
    assert store.list() == []
    saved = record(
        approvals=[RecordedApproval(call_id="c2", tool="wipe", risk="dangerous", decision="pending")],
        steps=[RecordedStep(cycle=1, agent="reviewer", verdict="REJECT", findings=["BLOCKER a.py:1 bug"])],
        answer="NUL \x00, a lone \ud800 surrogate, émoji 🎉 and \u2028",
    )
    store.save(saved)
    assert store.get(saved.id) == saved
    assert place.open().get(saved.id) == saved  # another store object (another process, another host)


def test_saving_again_replaces_the_record(place: RunsPlace) -> None:
    store = place.open()
    store.save(record(status="paused"))
    store.save(record(status="answered", updated_at=T0 + timedelta(minutes=1)))
    (only,) = place.open().list()
    assert only.status == "answered"
    assert place.open().list(status="paused") == []


def test_list_is_newest_first_filtered_and_limited(place: RunsPlace) -> None:
    store = place.open()
    for n, status in enumerate(["answered", "paused", "failed", "paused", "answered"]):
        store.save(record(f"run_{n}", status=status, at=T0 + timedelta(minutes=n)))
    assert [r.id for r in store.list()] == ["run_4", "run_3", "run_2", "run_1", "run_0"]
    assert [r.id for r in store.list(status="paused")] == ["run_3", "run_1"]
    assert [r.id for r in store.list(limit=2)] == ["run_4", "run_3"]
    assert [r.id for r in store.list(status="paused", limit=1)] == ["run_3"]
    assert len(store.list(limit=None)) == 5
    assert store.list(status="rejected") == []


@pytest.mark.parametrize("hostile", ["../../etc/passwd", "a/b", "", "x" * 81, "run id", "run'; DROP TABLE x; --"])
def test_ids_that_are_not_run_ids_are_refused(place: RunsPlace, hostile: str) -> None:
    store = place.open()
    with pytest.raises(RunStoreError, match="is not a run id"):
        store.get(hostile)
    with pytest.raises(ValueError):
        record(hostile)


def test_pruning_by_age_and_count_keeps_paused_runs_longest(place: RunsPlace) -> None:
    now = [T0]
    writer = place.open(max_runs=10, now=lambda: now[0])
    for n in range(5):
        writer.save(record(f"run_{n}", status="paused" if n == 0 else "answered", at=T0 + timedelta(minutes=n)))
        place.saved_at(f"run_{n}", T0 + timedelta(seconds=n))
    store = place.open(max_runs=3, max_age=timedelta(days=30), now=lambda: now[0])
    assert store.prune() == 2  # the two oldest finished runs; the paused one stays
    assert sorted(r.id for r in store.list()) == ["run_0", "run_3", "run_4"]
    now[0] = T0 + timedelta(days=31)
    assert store.prune() == 3
    assert store.list() == []


def test_a_save_prunes(place: RunsPlace) -> None:
    store = place.open(max_runs=2, now=lambda: T0 + timedelta(minutes=5))
    for n in range(4):
        store.save(record(f"run_{n}", at=T0 + timedelta(minutes=n)))
        place.saved_at(f"run_{n}", T0 + timedelta(seconds=n))
    assert len(store.list(limit=None)) == 2


def test_concurrent_writers_never_leave_a_torn_record(place: RunsPlace) -> None:
    stores = [place.open() for _ in range(4)]
    errors: list[BaseException] = []

    def write(n: int) -> None:
        try:
            for i in range(20):
                stores[n].save(record("run_shared", answer=f"writer {n} round {i} " + "x" * 5000))
                assert stores[n].get("run_shared") is not None
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    (only,) = place.open().list()
    assert only.id == "run_shared" and (only.answer or "").startswith("writer ")


def test_a_redacted_record_is_stored_as_given(place: RunsPlace) -> None:
    dirty = record(
        question=f"use my key {KEY} and the password hunter2-xyz",
        tool_calls=[RecordedToolCall(call_id="c1", name="login", arguments={"token": "hunter2-xyz"}, status="success")],
    )
    store = place.open()
    store.save(redacted(dirty, secrets=["hunter2-xyz"]))
    stored = json.dumps(place.open().list()[0].model_dump(mode="json"))
    assert KEY not in stored and "hunter2-xyz" not in stored and "use my key" in stored


# ---------------------------------------------------------------------- the database's own


@pytest.fixture
def database_store(database_url: str) -> Iterator[PostgresRunStore]:
    store = PostgresRunStore(database_url)
    yield store
    store.close()


def test_rows_that_are_not_records_are_named_or_skipped(
    database_store: PostgresRunStore, database_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    database_store.save(record("run_good"))
    bad: dict[str, str] = {
        "run_bad": "{not json",
        "run_other": json.dumps(record("run_elsewhere").model_dump(mode="json")),
        "run_newer": json.dumps({"version": 99, "id": "run_newer"}),
    }
    with psycopg.connect(database_url, autocommit=True) as conn:
        for run_id, text in bad.items():
            conn.execute(
                "INSERT INTO tooldeck_runs (id, status, updated_at, saved_at, record) "
                "VALUES (%s, 'answered', %s, %s, %s)",
                (run_id, T0 + timedelta(days=1), T0, text),
            )
    checks: list[tuple[str, str]] = [
        ("run_bad", r"run record 'run_bad' in postgresql://.* is not valid JSON"),
        ("run_other", "holds run 'run_elsewhere'"),
        ("run_newer", "format version 99, newer than"),
    ]
    for run_id, message in checks:
        with pytest.raises(RunStoreError, match=message):
            database_store.get(run_id)
    assert [r.id for r in database_store.list(limit=1)] == ["run_good"]  # skipped rows do not use up the limit
    assert "skipping run record run_bad" in caplog.text


def test_an_unreachable_database_says_how_to_fix_it_without_the_password(tmp_path: Path) -> None:
    store = PostgresRunStore(f"postgresql://app:s3cret@/nowhere?host={tmp_path}&connect_timeout=2")
    with pytest.raises(RunStoreError) as caught:
        store.save(record())
    message = str(caught.value)
    assert "postgresql://app@" in message and "s3cret" not in message
    assert "check TOOLDECK_DATABASE_URL, or turn recording off (--no-record)" in message
    assert "s3cret" not in repr(store) + store.location
    store.close()


def test_run_store_from_env_picks_the_database_when_it_is_set(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "TOOLDECK_DATA_DIR": str(tmp_path / "data")}
    chosen = run_store_from_env(env)
    assert isinstance(chosen, FileRunStore) and chosen.directory == tmp_path / "data" / "runs"
    url = database_url_for(request)
    in_database = run_store_from_env({**env, "TOOLDECK_DATABASE_URL": url}, tmp_path / "elsewhere")
    assert isinstance(in_database, PostgresRunStore)
    in_database.save(record())
    assert not (tmp_path / "data").exists() and not (tmp_path / "elsewhere").exists()
    given = run_store_from_env(env, database_url=url)  # the URL an entry point read from its settings
    assert isinstance(given, PostgresRunStore)
    assert [r.id for r in given.list()] == [record().id]
    with pytest.raises(RunStoreError, match="TOOLDECK_DATABASE_URL is not a PostgreSQL URL"):
        run_store_from_env({**env, "TOOLDECK_DATABASE_URL": "sqlite:///runs.db"})
    in_database.close()
    given.close()
