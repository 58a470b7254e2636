"""Runs the module-worker boundary battery as the application would, possibly unprivileged.

Started by ``test_module_worker_boundary.py`` as ``python -I _worker_driver.py`` (as root, or
dropped to an ordinary user with ``setpriv``) with a JSON job on stdin; prints one JSON
document. ``job["path"]`` is put first on ``sys.path``: a world-readable copy of ``tools``
and ``shared``, then the site folders.

The battery installs a module (a signed version, as ``install`` writes it, so no static
scan stands in the way: the boundary must hold on its own), stores its API key, serves it
through ``ModuleAdapters`` with sandboxed workers, and reports what the module could see
and do from inside its worker, then hangs a call and kills a worker to see them restarted.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
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


def main() -> None:
    job = json.load(sys.stdin)
    sys.path[0:0] = job["path"]
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
