"""Several real processes write one SQLite knowledge file at once: nothing lost or corrupted."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from tools.builtin.knowledge import SqliteKnowledgeStore

REPO_ROOT = Path(__file__).resolve().parents[3]
WORKERS = 4
WRITES = 200
SHARED = 20

WORKER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from tools.builtin.knowledge import SqliteKnowledgeStore

    path, worker, writes, shared, go = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), \\
        int(sys.argv[4]), Path(sys.argv[5])
    store = SqliteKnowledgeStore(path, busy_timeout=2.0, max_attempts=20)
    print("ready", flush=True)
    while not go.exists():
        time.sleep(0.005)
    for i in range(writes):
        store.store(f"worker {worker} wrote document {i} about topic{i % 7}",
                    {"worker": worker, "i": i})
        if i % (writes // shared) == 0:
            # Every worker also writes the same shared texts: dedup under contention.
            store.store(f"shared document {i // (writes // shared)}")
    store.close()
    print("done", flush=True)
    """
)


def _spawn(path: Path, worker: int, go: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    return subprocess.Popen(
        [sys.executable, "-c", WORKER, str(path), str(worker), str(WRITES), str(SHARED), str(go)],
        cwd=REPO_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def test_four_processes_writing_concurrently_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "knowledge.sqlite"
    go = tmp_path / "go"
    procs = [_spawn(path, worker, go) for worker in range(WORKERS)]
    try:
        for proc in procs:
            assert proc.stdout is not None
            assert proc.stdout.readline().strip() == "ready", proc.stderr
        go.touch()
        deadline = time.monotonic() + 90
        for proc in procs:
            out, err = proc.communicate(timeout=max(1.0, deadline - time.monotonic()))
            assert proc.returncode == 0, err
            assert out.strip() == "done"
    finally:
        for proc in procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()

    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("INSERT INTO knowledge_fts(knowledge_fts) VALUES ('integrity-check')")
        rows = conn.execute("SELECT count(*) FROM knowledge").fetchone()[0]
        assert rows == WORKERS * WRITES + SHARED
    finally:
        conn.close()

    with SqliteKnowledgeStore(path) as store:
        assert store.count() == WORKERS * WRITES + SHARED
        for worker in range(WORKERS):
            hits = store.search(f'"worker {worker} wrote document 199"', limit=5)
            assert [h.metadata for h in hits] == [{"worker": worker, "i": 199}]
        assert len(store.search('"shared document"', limit=100)) == SHARED
