"""A writer killed mid-transaction (SIGKILL) leaves nothing half-written: a resume's claims, a
knowledge batch, a migration, a metrics flush.

Each test makes the child's transaction stop half-way deterministically: the test holds an
uncommitted row that the child's transaction needs, so the child writes its first rows and
then waits on that lock. Once PostgreSQL reports the child's backend waiting, the child is
killed with SIGKILL, the test releases its row, and the database must hold none of the
child's rows; the same write then succeeds whole.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

import psycopg
import pytest

from orchestrator.graph.postgres_claims import PostgresClaimStore
from tools.builtin.knowledge import KnowledgeItem
from tools.builtin.knowledge.postgres_store import PostgresKnowledgeStore
from tools.postgres import Database, Migration, schema_version
from tools.telemetry import PostgresMetricsStore

REPO_ROOT = Path(__file__).resolve().parents[3]
RUN = "run_" + "c" * 32


@pytest.fixture
def children() -> Iterator[list[subprocess.Popen[str]]]:
    spawned: list[subprocess.Popen[str]] = []
    yield spawned
    for child in spawned:
        if child.poll() is None:
            child.kill()
        child.wait(timeout=60)


def spawn(children: list[subprocess.Popen[str]], code: str, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    child = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    children.append(child)
    return child


def waiting_backend(url: str, deadline_s: float = 120.0) -> int:
    """The pid of the backend waiting for a lock in this database (polled until one is)."""
    end = time.monotonic() + deadline_s
    with psycopg.connect(url, autocommit=True) as conn:
        while time.monotonic() < end:
            row = conn.execute(
                "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
            ).fetchone()
            if row is not None:
                return int(row[0])
            time.sleep(0.02)
    raise AssertionError("the child's transaction never reached the lock")


def wait_gone(url: str, pid: int, deadline_s: float = 120.0) -> None:
    end = time.monotonic() + deadline_s
    with psycopg.connect(url, autocommit=True) as conn:
        while time.monotonic() < end:
            if conn.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", (pid,)).fetchone() is None:
                return
            time.sleep(0.02)
    raise AssertionError(f"backend {pid} of the killed child never ended")


def kill_midway(url: str, child: subprocess.Popen[str], holder: psycopg.Connection[tuple[object, ...]]) -> None:
    """Kill ``child`` once its backend waits on ``holder``'s row; then release the row."""
    pid = waiting_backend(url)
    os.kill(child.pid, signal.SIGKILL)
    assert child.wait(timeout=60) == -signal.SIGKILL
    holder.rollback()
    wait_gone(url, pid)


CLAIMER = """
    import sys
    from orchestrator.graph.postgres_claims import PostgresClaimStore
    PostgresClaimStore(sys.argv[1]).claim(sys.argv[2], ["1/a", "1/b", "1/c"])
    print("claimed")
"""


def test_a_resume_killed_while_claiming_claims_nothing(
    database_url: str, children: list[subprocess.Popen[str]]
) -> None:
    store = PostgresClaimStore(database_url)
    assert store.claimed(RUN) == []  # the table exists
    with psycopg.connect(database_url) as holder:
        holder.execute(
            "INSERT INTO tooldeck_claims (run_id, call_key, claimed_at) VALUES (%s, '1/c', %s)",
            (RUN, datetime.now(timezone.utc)),
        )
        child = spawn(children, CLAIMER, database_url, RUN)
        kill_midway(database_url, child, holder)
    assert store.claimed(RUN) == []  # not 1/a, not 1/b: the child's transaction never committed
    assert store.claim(RUN, ["1/a", "1/b", "1/c"]) == []
    store.close()


WRITER = """
    import sys
    from tools.builtin.knowledge import KnowledgeItem
    from tools.builtin.knowledge.postgres_store import PostgresKnowledgeStore
    store = PostgresKnowledgeStore(sys.argv[1])
    store.store_many([KnowledgeItem(f"note {i} about the harbour") for i in range(300)])
    print("stored")
"""


def test_a_knowledge_writer_killed_mid_batch_stores_nothing(
    database_url: str, children: list[subprocess.Popen[str]]
) -> None:
    store = PostgresKnowledgeStore(database_url)
    assert store.count() == 0
    with psycopg.connect(database_url) as holder:
        holder.execute(  # the same text as the child's last note, uncommitted: the child waits on it
            "INSERT INTO tooldeck_knowledge (text, text_hash, metadata, search, created_at) "
            "VALUES ('x', sha256(convert_to('note 299 about the harbour', 'UTF8')), '{}', ''::tsvector, now())"
        )
        child = spawn(children, WRITER, database_url)
        kill_midway(database_url, child, holder)
    assert store.count() == 0
    assert store.search("harbour") == []
    assert (
        len({o.id for o in store.store_many(KnowledgeItem(f"note {i} about the harbour") for i in range(300))}) == 300
    )
    store.close()


MIGRATOR = """
    import sys
    from tools.postgres import Database, Migration, schema_version
    steps = (Migration("first", "CREATE TABLE half_a (x int)"), Migration("second", "LOCK TABLE blocker"))
    Database(sys.argv[1]).ensure_schema("halfway", steps)
"""


def test_a_migration_killed_half_way_leaves_the_schema_as_it_was(
    database_url: str, children: list[subprocess.Popen[str]]
) -> None:
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE blocker (x int)")
    with psycopg.connect(database_url) as holder:
        holder.execute("LOCK TABLE blocker")
        child = spawn(children, MIGRATOR, database_url)
        kill_midway(database_url, child, holder)
    with psycopg.connect(database_url) as conn:
        assert conn.execute("SELECT to_regclass('half_a')").fetchone() == (None,)
        assert schema_version(conn, "halfway") == 0
    with Database(database_url) as database:  # the same migrations then apply whole
        database.ensure_schema("halfway", (Migration("first", "CREATE TABLE half_a (x int)"),))
        with database.connection() as conn:
            assert conn.execute("SELECT to_regclass('half_a')").fetchone() == ("half_a",)


METRICS_WRITER = """
    import sys
    from tools import ToolResult
    from tools.telemetry import PostgresMetricsStore
    store = PostgresMetricsStore(sys.argv[1], flush_interval=None)
    for n in range(5):
        store.record(ToolResult.failure("unknown_tool", "no such tool", metadata={"tool_name": f"made_up_{n}"}))
        store.record(ToolResult.success(n, {"tool_name": "work", "duration_ms": 3.0}))
    store.flush()
    print("flushed")
"""


def test_a_metrics_writer_killed_mid_flush_counts_nothing(
    database_url: str, children: list[subprocess.Popen[str]]
) -> None:
    store = PostgresMetricsStore(database_url, flush_interval=None)
    assert store.read_database() == {}  # the tables exist
    with psycopg.connect(database_url) as holder:
        holder.execute(  # the row the child's flush adds to last, uncommitted: the child waits on it
            "INSERT INTO tooldeck_metrics (tool, calls, successes, failures, total_duration_ms, success_duration_ms, "
            "error_types, updated_at) VALUES ('work', 0, 0, 0, 0, 0, '{}', now())"
        )
        child = spawn(children, METRICS_WRITER, database_url)
        kill_midway(database_url, child, holder)
    with psycopg.connect(database_url) as conn:  # not the unknown-tool row it wrote first, no hour, no flush id
        for table in ("tooldeck_metrics", "tooldeck_metrics_hours", "tooldeck_metrics_flushes"):
            assert conn.execute(f"SELECT count(*) FROM {table}").fetchone() == (0,)
    assert store.read_database() == {}
    child = spawn(children, METRICS_WRITER, database_url)  # the same flush then applies whole
    assert child.communicate(timeout=120)[0].strip() == "flushed"
    figures = store.read_database()
    assert (figures["work"].calls, figures["(unknown tool)"].calls) == (5, 5)
    assert sum(b.calls for b in store.series("work")) == 5
    store.close()
