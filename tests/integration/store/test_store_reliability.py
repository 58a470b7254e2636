"""Registry files under crashes and concurrent writers (real processes, real SIGKILL)."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

from tools.store import Registry, RegistryStore

from .conftest import WORKTREE

WRITER = textwrap.dedent(
    """
    import sys
    from tools.store import Registry, RegistryStore, ToolConfig

    store = RegistryStore(sys.argv[1], sys.argv[2])
    def config(i):
        return ToolConfig(id=f"t{i}", adapter_type="cli", description="x" * 2000,
                          cli={"command": ["echo"], "actions": {"say": {"args": ["{text}"]}}})
    versions = [Registry(tools={f"t{j}": config(j) for j in range(n % 7 + 1)}) for n in range(100)]
    print("ready", flush=True)
    for registry in versions:
        store.save_project(registry)
    print("done", flush=True)
    """
)

ADOPTER = textwrap.dedent(
    """
    import sys
    from tools.store import RegistryService, RegistryStore, ToolConfig

    worker, user, project = sys.argv[1], sys.argv[2], sys.argv[3]
    service = RegistryService(RegistryStore(user, project))
    for i in range(10):
        service.adopt(ToolConfig(id=f"w{worker}_{i}", adapter_type="http",
                                 http={"base_url": "http://127.0.0.1:9", "endpoints": {"get": {"path": "/"}}}))
    for i in range(0, 10, 2):
        service.remove(f"w{worker}_{i}")
    """
)


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(WORKTREE)}


def test_sigkill_while_saving_never_leaves_a_torn_or_empty_file(tmp_path: Path) -> None:
    user, project = tmp_path / "user.json", tmp_path / "project" / "registry.json"
    store = RegistryStore(user, project)
    rng = random.Random(1234)
    valid_sizes = set(range(1, 8))
    stop = threading.Event()
    reads: list[int] = []
    problems: list[str] = []

    def reader() -> None:
        while not stop.is_set():
            try:
                reads.append(len(store.load_project().tools))
            except Exception as exc:
                problems.append(repr(exc))

    watcher = threading.Thread(target=reader)
    watcher.start()
    kills = 0
    try:
        for _trial in range(12):
            proc = subprocess.Popen(
                [sys.executable, "-c", WRITER, str(user), str(project)],
                stdout=subprocess.PIPE,
                text=True,
                env=_env(),
            )
            assert proc.stdout is not None
            assert proc.stdout.readline().strip() == "ready"
            time.sleep(rng.uniform(0.0, 0.15))
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
                kills += 1
            proc.wait(30)
            proc.stdout.close()
            text = project.read_text() if project.exists() else None
            if text is not None:
                assert text.strip(), "the registry file is empty after a kill"
                registry = Registry.model_validate(json.loads(text))
                assert len(registry.tools) in valid_sizes
                assert sorted(registry.tools) == sorted(f"t{j}" for j in range(len(registry.tools)))
    finally:
        stop.set()
        watcher.join()
    assert kills >= 6
    assert problems == []
    assert reads and set(reads) <= valid_sizes | {0}


def test_eight_concurrent_writers_lose_no_entry(tmp_path: Path) -> None:
    user, project = tmp_path / "user.json", tmp_path / "p" / ".tooldeck" / "registry.json"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", ADOPTER, str(worker), str(user), str(project)],
            env=_env(),
            stderr=subprocess.PIPE,
            text=True,
        )
        for worker in range(8)
    ]
    errors = []
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        if proc.returncode != 0:
            errors.append(err[-2000:])
    assert errors == []
    ids = sorted(RegistryStore(user, project).load_project().tools)
    assert ids == sorted(f"w{w}_{i}" for w in range(8) for i in range(1, 10, 2))
    assert not list(project.parent.glob(".registry.json.*.tmp"))
