"""Runs the module-worker boundary battery as the application would, possibly unprivileged.

Started by ``test_module_worker_boundary.py`` as ``python -I _worker_driver.py`` (as root, or
dropped to an ordinary user with ``setpriv``) with a JSON job on stdin; prints one JSON
document. ``job["path"]`` is put first on ``sys.path``: a world-readable copy of ``tools``
and ``shared``, then the site folders.

The battery installs a module (a signed version, as ``install`` writes it, so no static
scan stands in the way: the boundary must hold on its own), stores its API key, serves it
through ``ModuleAdapters`` with sandboxed workers, and reports what the module could see
and do from inside its worker, then hangs a call and kills a worker to see them restarted.

``job["battery"] == "threads"`` runs the other battery: both sandbox launchers die with
the thread that started them, so a worker asked for (or restarted) by a thread that then
ends must not end with it. It reports, after each such thread is gone from the kernel,
whether the worker still answers without a restart and whether its launcher is alive with
no SIGKILL pending; and, as the control, that a process started directly from such a
thread does die.
"""

from __future__ import annotations

import json
import os
import select
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

PROBE = """
import os, socket
from shared.adapters.base import BaseAdapter


def _attempt(action):
    try:
        return "ok: " + str(action())[:40]
    except BaseException as exc:
        return type(exc).__name__


def _read(path):
    with open(path) as handle:
        return handle.read()


def _unix(path):
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    client.connect(path)
    return client.recv(16)


class Adapter(BaseAdapter[dict]):
    def fetch_raw(self, config):
        mode = config.get("mode")
        if mode == "hang":
            while True:
                pass
        if mode != "probe":
            return [{"pid": os.getpid()}]
        job, key = config["job"], config["credentials"]["api_key"]
        http = self.http_session()
        api = config["base_url"]

        def get(url):
            answer = http.get(url, headers={"X-API-Key": key}, timeout=10)
            return answer.status_code, answer.json()

        return [{
            "pid": os.getpid(),
            "uid": os.getuid(),
            "groups": os.getgroups(),
            "environ": dict(os.environ),
            "credential_seen": key[:20],
            "files": {name: _attempt(lambda p=path: _read(p)) for name, path in job["files"].items()},
            "unix_socket": _attempt(lambda: _unix(job["unix_socket"])),
            "tcp_port": _attempt(lambda: socket.create_connection(("127.0.0.1", job["tcp_port"]), timeout=3)),
            "inet_socket": _attempt(lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM)),
            "declared": _attempt(lambda: get(api)),
            "outside": {url: _attempt(lambda u=url: get(u)) for url in job["outside"]},
        }]

    def transform(self, raw):
        return list(raw)
"""


def install_signed(root: str, api: str, api_key: str, source: str = PROBE, module_id: str = "probe") -> None:
    """Install ``source`` as ``module_id`` v1 under ``root`` (store ``modules``, keys
    ``module-keys``), signed as ``install`` signs, enabled, with its API key stored."""
    from shared.modules import CredentialVault, ModuleKeys, ModuleLayout, Signer, VersionRecord, files_hash

    keys = ModuleKeys.load(Path(root, "module-keys"))
    layout = ModuleLayout(Path(root, "modules"))
    manifest: dict[str, Any] = {"id": module_id, "name": "Probe", "category": "fitness", "api_url": api}
    manifest.update(auth_type="api_key", required_credentials=["api_key"])
    files = {"manifest.json": json.dumps(manifest).encode(), "adapter.py": source.encode()}
    folder = layout.version_files(module_id, "v1")
    folder.mkdir(parents=True)
    for name, data in files.items():
        (folder / name).write_bytes(data)
    record = VersionRecord(
        module_id=module_id, version_id="v1", files_hash=files_hash(files), created_at="t", source="t"
    )
    signed = record.model_copy(update={"signature": Signer(keys.signing).sign("version", record.signed_fields())})
    (layout.version_dir(module_id, "v1") / "version.json").write_text(signed.model_dump_json())
    index = {"generation": 1, "modules": {module_id: {"active_version": "v1", "category": "fitness", "enabled": True}}}
    layout.index_path.write_text(json.dumps(index))
    layout.credential_path(module_id).parent.mkdir(parents=True, exist_ok=True)
    layout.credential_path(module_id).write_text(CredentialVault(keys.credentials).seal({"api_key": api_key}))


def _wait_dead(worker: Any) -> None:
    deadline = time.monotonic() + 30
    while worker.alive() and time.monotonic() < deadline:
        time.sleep(0.01)


ECHO = """
import os
from shared.adapters.base import BaseAdapter


class Adapter(BaseAdapter[dict]):
    def fetch_raw(self, config):
        return [{"pid": os.getpid()}]

    def transform(self, raw):
        return list(raw)
"""
UP = "import time\nprint('up', flush=True)\ntime.sleep(600)\n"
_SIGKILL_BIT = 1 << (signal.SIGKILL - 1)


def _in_ended_thread(action: Callable[[], Any]) -> Any:
    """``action()`` run in a new thread; returns once that thread is gone from the kernel
    (its task entry removed: any parent-death signal it causes has been sent)."""
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["value"] = action()
        except BaseException as exc:
            out["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    task = f"/proc/self/task/{thread.native_id}"
    deadline = time.monotonic() + 30
    while os.path.exists(task) and time.monotonic() < deadline:
        time.sleep(0.01)
    if "error" in out:
        raise out["error"]
    return out["value"]


def _launcher_state(pid: int) -> dict[str, Any]:
    """Whether process ``pid`` lives, is not a zombie and has no SIGKILL pending."""
    try:
        with open(f"/proc/{pid}/status") as handle:
            fields = dict(line.split(":", 1) for line in handle.read().splitlines() if ":" in line)
    except OSError:
        return {"alive": False}
    pending = int(fields["SigPnd"], 16) | int(fields["ShdPnd"], 16)
    state = fields["State"].split()[0]
    return {"alive": state not in ("Z", "X"), "sigkill_pending": bool(pending & _SIGKILL_BIT)}


def _started(process: Any) -> Any:
    """``process`` once its program runs (it printed ``up``): the launcher is set up, its
    parent-death signal armed."""
    seen = b""
    deadline = time.monotonic() + 60
    while b"up" not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([process.stdout], [], [], 0.1)
        if ready:
            chunk = os.read(process.stdout, 64)
            if not chunk:
                break
            seen += chunk
    if b"up" not in seen:
        raise RuntimeError(f"the program did not start: {process.exit_reason()}")
    return process


def threads(job: dict[str, Any]) -> dict[str, Any]:
    """The thread battery (see the module docstring)."""
    from shared.modules import NoEgress, WorkerSpec
    from tools.builtin.code_executor import LocalSandbox
    from tools.builtin.code_executor.persistent import start_process
    from tools.builtin.modules import WORKER_SANDBOX_LIMITS, sandboxed_workers

    out: dict[str, Any] = {}
    box = LocalSandbox(limits=WORKER_SANDBOX_LIMITS, launcher=job["launcher"])
    try:
        direct = _in_ended_thread(lambda: _started(start_process(box, UP)))
        deadline = time.monotonic() + 30
        while direct.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        out["direct_died"] = direct.poll() is not None
        direct.stop()
    finally:
        box.close()
    workers = sandboxed_workers(hidden_dirs=[job["data_dir"]], egress=NoEgress(), launcher=job["launcher"])
    try:
        spec = WorkerSpec("echo", "v1", ECHO, "Adapter", "http://127.0.0.1:9/")
        worker = _in_ended_thread(lambda: workers.start(spec))
        first = worker.host_pid
        out["started"] = {
            "answer": worker.call("fetch", {"config": {}})["raw_count"],
            "same_worker": worker.host_pid == first and worker.restarts == 0,
            "launcher": _launcher_state(first),
        }
        os.killpg(first, signal.SIGKILL)
        _wait_dead(worker)
        answer = _in_ended_thread(lambda: worker.call("fetch", {"config": {}}))  # restarts it
        second = worker.host_pid
        out["restarted"] = {
            "answer": answer["raw_count"],
            "new_worker": second not in (None, first) and worker.restarts == 1,
            "then": worker.call("fetch", {"config": {}})["raw_count"],
            "same_worker": worker.host_pid == second and worker.restarts == 1,
            "launcher": _launcher_state(second or 0),
        }
    finally:
        workers.close()
    return out


def main() -> None:
    job = json.load(sys.stdin)
    sys.path[0:0] = job["path"]
    if job.get("battery") == "threads":
        json.dump(threads(job), sys.stdout)
        return
    from shared.modules import ModuleAdapters, WorkerCallError
    from tools.builtin.modules import sandboxed_workers

    root = job["data_dir"]
    install_signed(root, job["api"], job["api_key"])
    secret = os.path.join(root, "config", "secret.txt")
    os.makedirs(os.path.dirname(secret), exist_ok=True)
    with open(secret, "w") as handle:
        handle.write("host-config-secret")
    os.chmod(secret, 0o644)  # a careless config file: readable by anyone who can see it
    job["files"] = {**job["files"], "config": secret}
    for name in ("module-signing.key", "module-credentials.key"):
        job["files"][name] = os.path.join(root, "module-keys", name)
    workers = sandboxed_workers(hidden_dirs=[root], allow_hosts=["127.0.0.1"], launcher=job["launcher"])
    modules = ModuleAdapters.from_store(Path(root, "modules"), workers=workers)
    out: dict[str, Any] = {"host_pid": os.getpid(), "host_uid": os.geteuid()}
    try:
        (cls,) = modules.adapters()
        out["status"] = modules.statuses()[0].to_dict()
        result = cls().fetch({"mode": "probe", "job": job})
        out["probe"] = result.to_dict()
        worker = modules.worker("probe")
        assert worker is not None
        out["worker"] = {"host_pid": worker.host_pid, "pid": worker.worker_pid, "uid": worker.worker_uid}
        pids = [worker.host_pid]
        try:
            worker.call("fetch", {"config": {"mode": "hang"}}, timeout=2.0)
        except WorkerCallError as exc:
            out["hang"] = {"kind": exc.kind, "message": str(exc)}
        out["after_hang"] = cls().fetch({}).to_dict()
        pids.append(worker.host_pid)
        os.killpg(worker.host_pid or 0, signal.SIGKILL)
        _wait_dead(worker)
        out["after_kill"] = cls().fetch({}).to_dict()
        pids.append(worker.host_pid)
        out["pids"], out["restarts"] = pids, worker.restarts
    finally:
        modules.close()
        workers.close()
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
