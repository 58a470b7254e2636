"""What only the PostgreSQL metrics store has: 8 processes recording 500 calls each into one
database (exact counts), the cap on tools held by concurrent writers, a flush retried after a
lost commit answer counted once, a failed flush losing nothing, text PostgreSQL cannot hold,
rows tooldeck never writes, and URLs never shown with their password. (A writer killed
mid-transaction: test_killed_writers.py.)"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import psycopg
import pytest
from pytest_mock import MockerFixture

from tests.unit.tools.telemetry.test_store import result
from tools import ToolResult
from tools.postgres import DatabaseError
from tools.telemetry import OVERFLOW_BUCKET, UNKNOWN_TOOL_BUCKET, PostgresMetricsStore, open_metrics_store

WORKER = Path(__file__).resolve().parents[1] / "telemetry" / "workers" / "metrics_worker.py"
REPO_ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def store(database_url: str) -> Iterator[PostgresMetricsStore]:
    made = PostgresMetricsStore(database_url, flush_interval=None)
    yield made
    made.close()


def stored(url: str, **options: Any) -> dict[str, Any]:
    with PostgresMetricsStore(url, flush_interval=None, **options) as reader:
        return {name: stats.to_dict() for name, stats in reader.read_database().items()}


def test_eight_processes_500_calls_each_counts_are_exact(database_url: str, tmp_path: Path) -> None:
    go = tmp_path / "go"
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    workers = [
        subprocess.Popen(
            [sys.executable, str(WORKER), "calls", database_url, "500", str(go)],
            env=env,
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        for _ in range(8)
    ]
    try:
        go.write_text("")  # all start recording at once
        for worker in workers:
            out, _ = worker.communicate(timeout=300)
            assert worker.returncode == 0 and out.strip() == "done"
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
                worker.wait(timeout=60)
    tools = stored(database_url)
    assert set(tools) == {"work", UNKNOWN_TOOL_BUCKET}  # 400 distinct unknown names, one entry
    # Per process: 450 calls to "work" (n % 10 != 9), 100 of them multiples of five (fail);
    # 50 calls to unknown tools.
    work = tools["work"]
    assert (work["calls"], work["successes"], work["failures"]) == (8 * 450, 8 * 350, 8 * 100)
    assert work["error_types"] == {"execution_error": 8 * 100}
    assert tools[UNKNOWN_TOOL_BUCKET]["calls"] == 8 * 50
    with PostgresMetricsStore(database_url, flush_interval=None) as reader:  # the hours add up to the same
        hours = reader.series("work")
        assert sum(b.calls for b in hours) == 8 * 450 and sum(b.failures for b in hours) == 8 * 100
        assert sum(sum(b.histogram) for b in hours) == 8 * 450
        assert reader.summary("work").calls == 8 * 450


def test_concurrent_writers_never_push_the_table_past_max_tools(database_url: str) -> None:
    first, second = (PostgresMetricsStore(database_url, flush_interval=None, max_tools=3) for _ in range(2))
    first.read_database()  # the tables exist
    for n in range(3):
        first.record(result(f"first_{n}"))
        second.record(result(f"second_{n}"))
    errors: list[BaseException] = []

    def flush(store: PostgresMetricsStore) -> None:
        try:
            store.flush()
        except BaseException as exc:  # reported below
            errors.append(exc)

    with psycopg.connect(database_url) as holder:  # both flushes queue up for admission together
        holder.execute("SELECT pg_advisory_xact_lock(%s)", (0x746F6F6C6D747263,))
        threads = [threading.Thread(target=flush, args=(s,)) for s in (first, second)]
        for thread in threads:
            thread.start()
        wait_for_waiters(database_url, 2)
        holder.rollback()
    for thread in threads:
        thread.join(timeout=120)
    assert errors == []
    tools = stored(database_url, max_tools=3)
    assert len(set(tools) - {OVERFLOW_BUCKET}) == 3  # one writer's three tools; the other's overflow
    assert tools[OVERFLOW_BUCKET]["calls"] == 3
    assert sum(t["calls"] for t in tools.values()) == 6
    first.close()
    second.close()


def wait_for_waiters(url: str, count: int) -> None:
    """Poll until ``count`` backends wait on an advisory lock (bounded)."""
    deadline = time.monotonic() + 120
    with psycopg.connect(url, autocommit=True) as conn:
        while True:
            row = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event = 'advisory'"
            ).fetchone()
            if row is not None and row[0] >= count:
                return
            assert time.monotonic() < deadline, "the flushes never reached the admission lock"
            time.sleep(0.02)


def test_a_flush_retried_after_a_lost_commit_answer_is_counted_once(
    store: PostgresMetricsStore, database_url: str, mocker: MockerFixture
) -> None:
    real_write = store._write

    def committed_then_lost(flush_id: str, figures: Any) -> None:
        real_write(flush_id, figures)  # the transaction commits...
        raise DatabaseError("server closed the connection unexpectedly")  # ...but the answer is lost

    for _ in range(3):
        store.record(result("a"))
    mocker.patch.object(store, "_write", side_effect=committed_then_lost)
    with pytest.raises(DatabaseError):
        store.flush()
    mocker.stopall()
    assert store.stats("a").calls == 6  # not known to be written: counted here and there alike
    store.record(result("a"))
    store.flush()  # the same flush again (recognised), then the new call
    assert stored(database_url)["a"]["calls"] == 4
    assert store.stats("a").calls == 4


def test_a_failed_flush_loses_nothing(store: PostgresMetricsStore, database_url: str) -> None:
    now = datetime.now(timezone.utc)
    store.record(result("a", started=now.isoformat()))
    store.flush()
    store.record(result("a", error="timeout", started=now.isoformat()))
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("ALTER TABLE tooldeck_metrics RENAME TO tooldeck_metrics_away")
        with pytest.raises(DatabaseError, match="refused an operation on the metrics tables"):
            store.flush()
        assert store.stats("a").calls == 1  # the database cannot be read: this process's unwritten call only
        conn.execute("ALTER TABLE tooldeck_metrics_away RENAME TO tooldeck_metrics")
    store.record(result("a", started=now.isoformat()))
    store.flush()
    tools = stored(database_url)
    assert (tools["a"]["calls"], tools["a"]["failures"]) == (3, 1)
    assert [(b.calls, b.failures) for b in store.series("a")] == [(3, 1)]  # the failed flush's hour, once


def test_an_unreachable_database_keeps_the_figures_and_hides_the_password(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    url = f"postgresql://app:s3cret@/nowhere?host={tmp_path}&connect_timeout=2"
    store = PostgresMetricsStore(url, flush_interval=None)
    store.record(result("a"))
    with pytest.raises(DatabaseError) as caught:
        store.flush()
    assert "postgresql://app@" in str(caught.value) and "s3cret" not in str(caught.value)
    assert store.stats("a").calls == 1 and store.all_stats()["a"].calls == 1
    store.close()  # logs, never raises
    assert "final flush failed" in caplog.text and "1 call(s) not written" in caplog.text
    assert "s3cret" not in caplog.text
    chosen = open_metrics_store("x", database_url=url, flush_interval=None)
    shown = [repr(store), store.location, repr(chosen)]
    assert all("s3cret" not in text for text in shown)
    chosen.close()


@pytest.mark.parametrize(
    ("name", "expected"),
    [("bad\x00name", UNKNOWN_TOOL_BUCKET), ("lone\ud800surrogate", UNKNOWN_TOOL_BUCKET), ("ok_tool", "ok_tool")],
    ids=["nul", "surrogate", "plain"],
)
def test_text_postgresql_cannot_hold_is_made_storable(
    store: PostgresMetricsStore, database_url: str, name: str, expected: str
) -> None:
    for message in ("nul \x00 in it", "a \udcff surrogate"):
        metadata = {"tool_name": name, "started_at": "2026-01-01T00:00:00\x00+00:00"}
        store.record(ToolResult.failure("weird\x00type", message, metadata=metadata))  # type: ignore[arg-type]
    store.record(result(name, started="\ud800" * 100))
    store.flush()
    figures = stored(database_url)[expected]
    assert figures["calls"] == 3
    assert figures["error_types"] == {"weird\ufffdtype": 2}
    assert figures["last_error"] == "a \ufffd surrogate"
    assert len(figures["last_success"]) == 64


def test_rows_tooldeck_never_writes_are_named(store: PostgresMetricsStore, database_url: str) -> None:
    store.record(result("a"))
    store.flush()
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("""UPDATE tooldeck_metrics SET error_types = '{"timeout": "many"}'""")
    with pytest.raises(DatabaseError, match=r"error counts of tool 'a' are not counts; fix or delete that row"):
        store.read_database()
    assert store.all_stats() == {}  # logged, not raised: a console keeps working


def test_a_newer_schema_is_refused(database_url: str) -> None:
    with PostgresMetricsStore(database_url, flush_interval=None) as store:
        store.read_database()
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO tooldeck_schema_version (component, version, description) VALUES ('metrics', 2, 'future')"
        )
    newer = PostgresMetricsStore(database_url, flush_interval=None)
    newer.record(result("a"))
    with pytest.raises(DatabaseError, match="metrics schema is version 2, newer than this tooldeck knows"):
        newer.flush()
    newer.close()


def test_the_background_flusher_reports_a_failing_database_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, mocker: MockerFixture
) -> None:
    url = f"postgresql://app@/nowhere?host={tmp_path}&connect_timeout=1"
    caplog.set_level(logging.WARNING)
    store = PostgresMetricsStore(url, flush_interval=3600)
    attempts = mocker.spy(store, "flush")
    store.record(result("a"))
    deadline = time.monotonic() + 60
    while attempts.call_count < 3:  # the flusher retries on its own
        assert time.monotonic() < deadline, "the background flusher did not retry"
        store._wake.set()
        time.sleep(0.01)
    store.close()
    assert caplog.text.count("metrics store: flush failed") == 1
