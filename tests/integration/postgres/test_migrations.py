"""Schemas created and upgraded by tooldeck itself: versioned per component, in order, in one
transaction, once even when many processes open a fresh database at the same moment, and
refused (with the fix) when the database is newer than the code."""

from __future__ import annotations

import threading

import psycopg
import pytest

from orchestrator.graph.postgres_claims import PostgresClaimStore
from tools.approvals import ApprovalError, PostgresApprovalsStore
from tools.builtin.knowledge.postgres_store import MIGRATIONS as KNOWLEDGE
from tools.builtin.knowledge.postgres_store import PostgresKnowledgeStore
from tools.postgres import SCHEMA_TABLE, Database, DatabaseError, Migration, SchemaVersionError, schema_version
from tools.runs import PostgresRunStore
from tools.telemetry import PostgresMetricsStore

STEPS = (
    Migration("a table", "CREATE TABLE things (id int PRIMARY KEY)"),
    Migration("a column", "ALTER TABLE things ADD COLUMN name text NOT NULL DEFAULT ''"),
)


def history(url: str) -> list[tuple[str, int, str]]:
    with psycopg.connect(url) as conn:
        rows = conn.execute(f"SELECT component, version, description FROM {SCHEMA_TABLE} ORDER BY 1, 2").fetchall()
    return [(str(c), int(v), str(d)) for c, v, d in rows]


def test_each_store_creates_its_schema_and_records_its_version(database_url: str) -> None:
    with Database(database_url) as shared:  # one pool for every store, as a service shares it
        PostgresApprovalsStore(database=shared).freedom()
        PostgresClaimStore(database=shared).claimed("run_x")
        PostgresMetricsStore(database=shared, flush_interval=None).read_database()
        PostgresRunStore(database=shared).list()
    with PostgresKnowledgeStore(database_url) as knowledge:
        assert knowledge.count() == 0
    assert history(database_url) == [
        ("approvals", 1, "approvals and the freedom level"),
        ("claims", 1, "resume claims"),
        ("knowledge", 1, "knowledge table and its indexes"),
        ("knowledge", 2, "snippet configuration (simple + unaccent)"),
        ("metrics", 1, "per-tool figures, hourly buckets and applied flushes"),
        ("runs", 1, "run records"),
    ]
    assert len(KNOWLEDGE) == 2


def test_missing_steps_are_applied_in_order_and_applied_ones_are_kept(database_url: str) -> None:
    with Database(database_url) as first:
        first.ensure_schema("things", STEPS[:1])
        with first.connection() as conn:
            conn.execute("INSERT INTO things VALUES (1)")
    with Database(database_url) as upgraded:  # a newer release knows one more step
        upgraded.ensure_schema("things", STEPS)
        with upgraded.connection() as conn:
            assert conn.execute("SELECT id, name FROM things").fetchall() == [(1, "")]
            assert schema_version(conn, "things") == 2


def test_a_failing_step_applies_nothing(database_url: str) -> None:
    broken = (*STEPS, Migration("a typo", "ALTER TABLE thingz ADD COLUMN x int"))
    with Database(database_url) as database:
        with pytest.raises(DatabaseError, match=r"the things schema could not be created or upgraded .*nothing"):
            database.ensure_schema("things", broken)
        with database.connection() as conn:
            assert conn.execute("SELECT to_regclass('things')").fetchone() == (None,)
            assert schema_version(conn, "things") == 0
        database.ensure_schema("things", STEPS)  # the fixed release then applies whole


def test_a_database_newer_than_the_code_is_refused_with_the_fix(database_url: str) -> None:
    with Database(database_url) as database:
        database.ensure_schema("things", STEPS)
    with Database(database_url) as older:
        with pytest.raises(SchemaVersionError) as caught:
            older.ensure_schema("things", STEPS[:1])
    error = caught.value
    assert (error.component, error.found, error.known) == ("things", 2, 1)
    assert "its things schema is version 2, newer than this tooldeck knows (1); upgrade tooldeck" in str(error)
    assert "tooldeck_app@" in str(error)
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(f"INSERT INTO {SCHEMA_TABLE} VALUES ('approvals', 1, 'x'), ('approvals', 9, 'from the future')")
    store = PostgresApprovalsStore(database_url)
    with pytest.raises(ApprovalError, match="approvals schema is version 9, newer than this tooldeck knows"):
        store.freedom()
    store.close()


def test_processes_opening_a_fresh_database_at_once_migrate_it_once(database_url: str) -> None:
    slow = (Migration("slow", "CREATE TABLE slow (x int); SELECT pg_sleep(0.2)"), *STEPS)
    barrier = threading.Barrier(8)
    errors: list[BaseException] = []

    def open_it() -> None:
        with Database(database_url) as database:  # one pool each: separate sessions, as separate processes
            barrier.wait()
            try:
                database.ensure_schema("things", slow)
            except BaseException as exc:  # reported below
                errors.append(exc)

    threads = [threading.Thread(target=open_it) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert history(database_url) == [("things", 1, "slow"), ("things", 2, "a table"), ("things", 3, "a column")]
