"""ModuleWorker: one long-lived process per module, calls with a time limit, restarts when it
dies, and a host that trusts nothing the worker sends.

The launcher starts plain subprocesses (``worker_support``); the sandboxed launcher runs the
same supervisor in ``tests/integration/modules/test_module_worker_boundary.py``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from shared.modules import (
    ModuleLoadError,
    ModuleWorker,
    ModuleWorkers,
    NoEgress,
    WorkerCallError,
    WorkerLimits,
    WorkerSpec,
    WorkerStartError,
)
from tests.unit.shared.modules.worker_support import SubprocessWorker, subprocess_workers

API = "http://127.0.0.1:9/api"
MODULE = """
import os, time
from shared.adapters.base import BaseAdapter

print("printed while importing")


class Adapter(BaseAdapter[dict]):
    def fetch_raw(self, config):
        mode = config.get("mode")
        print("printed by fetch_raw", mode)
        if mode == "hang":
            while True:
                time.sleep(0.05)
        if mode == "exit":
            os._exit(3)
        return [{"pid": os.getpid()}]

    def transform(self, raw):
        return list(raw)
"""


def spec(source: str = MODULE) -> WorkerSpec:
    return WorkerSpec("runs", "v1", source, "Adapter", API)


def wait_dead(worker: ModuleWorker) -> None:
    """Wait (bounded) until the host sees the worker gone."""
    deadline = time.monotonic() + 30
    while worker.alive() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not worker.alive()


@pytest.fixture
def workers() -> Iterator[ModuleWorkers]:
    started = subprocess_workers(limits=WorkerLimits(max_restarts=2))
    yield started
    started.close()


def fetch(worker: ModuleWorker, mode: str = "ok") -> list[dict[str, int]]:
    value = worker.call("fetch", {"config": {"mode": mode}}, timeout=1.0 if mode == "hang" else None)
    records: list[dict[str, int]] = value["records"]
    return records


def test_one_long_lived_process_answers_every_call(workers: ModuleWorkers) -> None:
    worker = workers.start(spec())
    first, second = fetch(worker), fetch(worker)
    assert first == second == [{"pid": worker.worker_pid}]  # the module's prints did not get in the way
    assert worker.worker_pid != os.getpid() and worker.host_pid != os.getpid()
    assert worker.restarts == 0


def test_a_hung_call_times_out_and_the_worker_is_restarted(workers: ModuleWorkers) -> None:
    worker = workers.start(spec())
    hung_pid = worker.host_pid
    assert hung_pid is not None
    with pytest.raises(WorkerCallError) as caught:
        fetch(worker, "hang")
    assert caught.value.kind == "timeout"
    assert str(caught.value) == "the module runs did not answer within 1 s; its worker was stopped"
    assert not _group_alive(hung_pid)  # the whole process group was killed
    assert fetch(worker) == [{"pid": worker.worker_pid}]
    assert worker.host_pid != hung_pid and worker.restarts == 1


def test_a_killed_worker_is_restarted_on_the_next_call(workers: ModuleWorkers) -> None:
    worker = workers.start(spec())
    killed_pid = worker.host_pid
    assert killed_pid is not None
    os.killpg(killed_pid, signal.SIGKILL)
    wait_dead(worker)
    assert fetch(worker) == [{"pid": worker.worker_pid}]
    assert worker.host_pid != killed_pid and worker.restarts == 1


def test_a_worker_dying_mid_call_fails_that_call_and_the_next_one_restarts_it(workers: ModuleWorkers) -> None:
    worker = workers.start(spec())
    with pytest.raises(WorkerCallError) as caught:
        fetch(worker, "exit")
    assert caught.value.kind == "crashed"
    assert str(caught.value).startswith("the module runs's worker stopped")
    assert fetch(worker) == [{"pid": worker.worker_pid}]


def test_a_worker_that_keeps_dying_is_not_restarted_for_a_while(workers: ModuleWorkers) -> None:
    worker = workers.start(spec())
    for _ in range(2):  # max_restarts=2: two restarts are allowed
        with pytest.raises(WorkerCallError):
            fetch(worker, "exit")
        fetch(worker)
    with pytest.raises(WorkerCallError):
        fetch(worker, "exit")
    with pytest.raises(WorkerCallError) as caught:
        fetch(worker)
    assert caught.value.kind == "unavailable"
    assert "stopped 3 times within 60 s; it is not started again for now" in str(caught.value)


def test_stop_kills_the_worker_and_later_calls_are_refused(workers: ModuleWorkers) -> None:
    worker = workers.start(spec())
    pid = worker.host_pid
    assert pid is not None
    worker.stop()
    assert not _group_alive(pid)
    with pytest.raises(WorkerCallError, match="the module runs was unloaded"):
        fetch(worker)


def test_closing_the_workers_stops_every_worker(workers: ModuleWorkers) -> None:
    started = [workers.start(spec()), workers.start(spec())]
    pids = [w.host_pid for w in started]
    workers.close()
    assert not any(_group_alive(pid) for pid in pids if pid is not None)


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        ("raise RuntimeError('boom at import')\n", "importing adapter.py raised RuntimeError"),
        ("import sys\nsys.exit(0)\n", "importing adapter.py raised SystemExit"),
        ("def broken(:\n", "adapter.py line 1: syntax error"),
        ("x = 1\n", "adapter.py has no concrete BaseAdapter subclass named 'Adapter'"),
    ],
)
def test_a_module_that_does_not_load_says_why(workers: ModuleWorkers, source: str, reason: str) -> None:
    with pytest.raises(ModuleLoadError) as caught:
        workers.start(spec(source))
    assert str(caught.value) == reason


def test_calls_that_cannot_be_made_are_module_errors(workers: ModuleWorkers) -> None:
    worker = workers.start(spec())
    with pytest.raises(WorkerCallError) as caught:
        worker.call("delete_everything", {})
    assert (caught.value.kind, caught.value.error_type) == ("module", "UnknownCall")
    with pytest.raises(WorkerCallError, match="cannot be sent"):
        worker.call("normalize_for_tools", {"data": float("nan")})
    assert fetch(worker)  # the worker is still fine


# -- a worker that breaks the protocol ----------------------------------------------------


@dataclass
class ScriptLauncher:
    """Runs ``script`` instead of the worker program: a worker gone rogue."""

    script: str

    def launch(self, *, program: str, python_path: Sequence[str]) -> SubprocessWorker:
        popen = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", self.script],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            env={},
        )
        return SubprocessWorker(popen)


HELLO = """import json, os, sys
def send(m):
    d = json.dumps(m).encode()
    os.write(1, len(d).to_bytes(4, "big") + d)
"""
READY = (
    HELLO
    + """send({"op": "hello", "protocol": 1, "pid": 1})
os.read(0, 1 << 20)
send({"op": "ready", "overrides": []})
os.read(0, 1 << 20)
"""
)


@pytest.mark.parametrize(
    ("script", "problem"),
    [
        (HELLO + 'send({"op": "hello", "protocol": 99})\n', "did not introduce itself"),
        (HELLO + "import time\ntime.sleep(60)\n", "did not answer within 1 s"),  # never says hello
        (HELLO + 'os.write(1, b"\\xff\\xff\\xff\\xff")\nimport time\ntime.sleep(60)\n', "broke the protocol"),
        (
            HELLO + 'send({"op": "hello", "protocol": 1})\nos.read(0, 1 << 20)\nsend(["not", "an", "object"])\n',
            "broke the protocol",
        ),
    ],
)
def test_a_rogue_worker_never_starts(script: str, problem: str) -> None:
    limits = WorkerLimits(start_timeout=1.0 if "within 1 s" in problem else 60.0)
    rogue = ModuleWorkers(launcher=ScriptLauncher(script), egress=NoEgress(), limits=limits, python_path=[])
    with pytest.raises(WorkerStartError, match=problem):
        rogue.start(spec())
    rogue.close()


@pytest.mark.parametrize(
    "answer",
    [
        'send({"op": "result", "id": 99, "value": 1})\n',
        'os.write(1, (2**31).to_bytes(4, "big"))\n',
        'send({"op": "result", "id": 1, "error": "not a dict"})\n',
        'send({"op": "what"})\n',
    ],
)
def test_a_rogue_answer_ends_the_worker(answer: str) -> None:
    rogue = ModuleWorkers(
        launcher=ScriptLauncher(READY + answer + "import time\ntime.sleep(60)\n"),
        egress=NoEgress(),
        python_path=[],
    )
    worker = rogue.start(spec())
    pid = worker.host_pid
    with pytest.raises(WorkerCallError) as caught:
        fetch(worker)
    assert caught.value.kind == "crashed"
    assert pid is not None and not _group_alive(pid)
    rogue.close()


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


HOST = """
import os, sys, threading, time
from pathlib import Path
from shared.modules import WorkerSpec
from tests.unit.shared.modules.worker_support import subprocess_workers

marker = Path(sys.argv[1])
source = '''
import time
from pathlib import Path
from shared.adapters.base import BaseAdapter

class Adapter(BaseAdapter[dict]):
    def fetch_raw(self, config):
        Path(config["marker"]).write_text("hanging")
        while True:
            time.sleep(0.05)

    def transform(self, raw):
        return raw
'''
worker = subprocess_workers().start(WorkerSpec("runs", "v1", source, "Adapter", "http://127.0.0.1:9/api"))
call = lambda: worker.call("fetch", {"config": {"marker": str(marker)}}, timeout=600)
threading.Thread(target=call, daemon=True).start()
print(worker.host_pid, flush=True)
deadline = time.monotonic() + 60
while not marker.exists() and time.monotonic() < deadline:
    time.sleep(0.01)
os._exit(9)  # the host dies in the middle of the call, without stopping its worker
"""


def test_a_worker_exits_when_its_host_dies_even_in_a_hung_call(tmp_path: Path) -> None:
    env = {"PYTHONPATH": os.pathsep.join(sys.path), "LANG": "C.UTF-8"}
    marker = tmp_path / "hanging"
    host = subprocess.run(
        [sys.executable, "-c", HOST, str(marker)], capture_output=True, text=True, env=env, timeout=120, check=False
    )
    assert host.returncode == 9 and marker.exists(), host.stderr
    worker_pid = int(host.stdout.split()[0])
    deadline = time.monotonic() + 30
    try:
        while _group_alive(worker_pid) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not _group_alive(worker_pid)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(worker_pid, signal.SIGKILL)


def test_a_launcher_that_refuses_says_why() -> None:
    refusing = ModuleWorkers(launcher=ScriptLauncher("import sys\nsys.exit(126)\n"), egress=NoEgress(), python_path=[])
    with pytest.raises(WorkerStartError) as caught:
        refusing.start(spec())
    assert str(caught.value) == "the worker stopped (exit status 126)"
    refusing.close()
