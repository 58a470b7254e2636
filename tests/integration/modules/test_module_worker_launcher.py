"""SandboxWorkerLauncher and start_process: a worker that cannot be contained is not started
(and the module says why), closing the launcher leaves no worker behind, and the worker's
memory (per worker, all its processes together) leaves room to work and stays bounded."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from shared.module_worker.protocol import MAX_FRAME_BYTES
from shared.modules import ModuleAdapters, ModuleLayout, ModuleWorkers, NoEgress, WorkerSpec
from tests.unit.shared.modules.store_support import SIGNER, manifest, put_version, set_index
from tools._procgroup import group_alive, live_members
from tools.builtin.code_executor import LocalSandbox
from tools.builtin.code_executor.persistent import start_process
from tools.builtin.modules import WORKER_SANDBOX_LIMITS, SandboxWorkerLauncher
from tools.errors import ToolError

MODULE = """
from shared.adapters.base import BaseAdapter


class Adapter(BaseAdapter[dict]):
    def fetch_raw(self, config):
        return [{"n": 1}]

    def transform(self, raw):
        return list(raw)
"""


ROOMY = """
import threading
from shared.adapters.base import BaseAdapter


class Adapter(BaseAdapter[dict]):
    def fetch_raw(self, config):
        try:
            block = bytearray(config["mb"] << 20)
        except MemoryError:
            return [{"allocated": False}]
        block[::4096] = b"x" * len(block[::4096])  # every page touched
        seen = []
        helper = threading.Thread(target=seen.append, args=(len(block) >> 20,))
        helper.start()
        helper.join()
        return [{"allocated": True, "thread_saw": seen}]

    def transform(self, raw):
        return [{"chars": len(raw[0])}]
"""


@pytest.fixture
def layout(tmp_path: Path) -> ModuleLayout:
    layout = ModuleLayout(tmp_path / "store")
    put_version(layout, "runs", "v1", {"manifest.json": manifest(), "adapter.py": MODULE})
    set_index(layout, {"runs": ("v1", "fitness", True)})
    return layout


def test_a_sandbox_that_cannot_contain_the_worker_starts_nothing(layout: ModuleLayout) -> None:
    unusable = LocalSandbox(launcher="bwrap", bwrap="/nonexistent/bwrap", limits=WORKER_SANDBOX_LIMITS)
    workers = ModuleWorkers(launcher=SandboxWorkerLauncher(unusable), egress=NoEgress())
    modules = ModuleAdapters(layout, signer=SIGNER, workers=workers)
    try:
        (status,) = modules.statuses()
        assert status.loaded is False
        assert status.reason is not None and status.reason.startswith("its worker could not start: ")
        assert "can't use bubblewrap here: FileNotFoundError" in status.reason
    finally:
        modules.close()
        workers.close()


@pytest.fixture(params=["bwrap", "namespaces"])
def workers(request: pytest.FixtureRequest) -> Iterator[ModuleWorkers]:
    if request.param == "bwrap" and shutil.which("bwrap", path="/usr/local/bin:/usr/bin:/bin") is None:
        pytest.skip("bubblewrap is not installed")
    box = LocalSandbox(limits=WORKER_SANDBOX_LIMITS, launcher=request.param)
    started = ModuleWorkers(launcher=SandboxWorkerLauncher(box), egress=NoEgress())
    yield started
    started.close()


def test_closing_the_launcher_kills_every_worker(workers: ModuleWorkers) -> None:
    first = workers.start(WorkerSpec("runs", "v1", MODULE, "Adapter", "http://127.0.0.1:9/"))
    second = workers.start(WorkerSpec("runs", "v2", MODULE, "Adapter", "http://127.0.0.1:9/"))
    pids = [first.host_pid, second.host_pid]
    assert all(pid is not None and group_alive(pid) for pid in pids)
    assert first.call("fetch", {"config": {}}) == {"records": [{"n": 1}], "raw_count": 1}
    launcher = workers.launcher
    assert isinstance(launcher, SandboxWorkerLauncher)
    launcher.close()  # the sandbox kills what it still runs, as on shutdown
    assert all(pid is not None and _gone(pid) for pid in pids)


def _gone(pgid: int) -> bool:
    """Whether nothing of group ``pgid`` runs any more (waits, bounded; signals nothing)."""
    deadline = time.monotonic() + 30
    while live_members(pgid) and time.monotonic() < deadline:
        time.sleep(0.01)
    return live_members(pgid) == 0


def test_a_closed_sandbox_starts_no_process(tmp_path: Path) -> None:
    box = LocalSandbox(limits=WORKER_SANDBOX_LIMITS, temp_root=str(tmp_path))
    box.close()
    with pytest.raises(ToolError, match="shut down"):
        start_process(box, "print(1)")
    assert os.listdir(tmp_path) == []


def test_a_worker_has_room_to_work_and_a_bounded_memory(workers: ModuleWorkers) -> None:
    worker = workers.start(WorkerSpec("roomy", "v1", ROOMY, "Adapter", "http://127.0.0.1:9/"))
    # a few hundred MiB and a thread of its own: what a data adapter may need
    assert worker.call("fetch_raw", {"config": {"mb": 200}}) == [{"allocated": True, "thread_saw": [200]}]
    # a frame near the protocol's largest arrives whole and is decoded in the worker
    text = "x" * (MAX_FRAME_BYTES - 1024 * 1024)
    assert worker.call("transform", {"raw": [text]}) == [{"chars": len(text)}]
    # past the worker's budget (WORKER_SANDBOX_LIMITS.memory_mb) an allocation fails inside it
    over = 2 * WORKER_SANDBOX_LIMITS.memory_mb
    assert worker.call("fetch_raw", {"config": {"mb": over}}) == [{"allocated": False}]
    assert worker.restarts == 0 and worker.alive()


def test_in_cgroup_mode_a_worker_gets_a_cgroup_of_its_own(tmp_path: Path) -> None:
    """Where a cgroup v2 is delegated (not on this CI host: a directory with the interface
    files stands in for it, the kernel's accounting is the sandbox tests' business), the
    worker is bounded like a run: a cgroup of its own with the worker's budget, entered
    before anything of it starts."""
    parent = tmp_path / "delegated"
    parent.mkdir()
    (parent / "cgroup.controllers").write_text("cpu memory pids\n")
    (parent / "cgroup.subtree_control").write_text("memory pids\n")
    box = LocalSandbox(limits=WORKER_SANDBOX_LIMITS, cgroup=parent)
    process = start_process(box, "import sys\nprint('up', flush=True)\nsys.stdin.read()\n")
    try:
        seen = b""
        while not seen.endswith(b"\n") and (chunk := os.read(process.stdout, 16)):
            seen += chunk
        assert seen == b"up\n", process.exit_reason()
        (run,) = [path for path in parent.iterdir() if path.is_dir()]
        assert process.memory.mode == "cgroup" and process.memory.budget_mb == WORKER_SANDBOX_LIMITS.memory_mb
        assert (run / "memory.max").read_text() == str(WORKER_SANDBOX_LIMITS.memory_mb * 1024 * 1024)
        assert (run / "pids.max").read_text() == str(WORKER_SANDBOX_LIMITS.max_processes)
        assert (run / "cgroup.procs").read_text().strip() == "0"  # the launcher moved itself in first
    finally:
        process.stop()
        box.close()
