"""Asks OrchestratorService's ``execute_code`` to read the application's secrets.

Started by ``test_service_code_hides_data.py`` as ``python -I _code_leak_driver.py`` (as
root, or dropped to an ordinary user with ``setpriv``) with a JSON job on stdin; prints one
JSON document. ``job["path"]`` is put first on ``sys.path``: world-readable copies of
``tools``, ``shared`` and ``orchestrator``, then the site folders.

The service is built as ``python -m orchestrator`` builds it (``from_env``: the data
directory, the user's configuration directory with its approvals file and state key). The
secrets are made as the application makes them: the knowledge database and the module keys
by the service, the state key by signing a state, the approvals file by approving a tool.
Then the model's code (the same program a model would send) tries to list and read each
of them, and the answer is what it got.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

PROBE = """
import json, os


def attempt(action):
    try:
        return "ok: " + repr(action())[:60]
    except BaseException as exc:
        return type(exc).__name__


def read(path):
    with open(path, "rb") as handle:
        return handle.read(64)


targets = json.loads({targets!r})
print(json.dumps({{
    name: {{"read": attempt(lambda p=path: read(p)) if kind == "file" else None,
            "list": attempt(lambda p=path: os.listdir(p)) if kind == "dir" else None}}
    for name, (kind, path) in targets.items()
}}))
"""


def main() -> None:
    job = json.load(sys.stdin)
    sys.path[0:0] = job["path"]
    from orchestrator import OrchestratorService
    from tools.approvals import ApprovalsStore, StateSigner

    env = {
        "HOME": job["home"],
        "XDG_CONFIG_HOME": job["config_home"],
        "TOOLDECK_DATA_DIR": job["data_dir"],
        "TOOLDECK_CONTEXT_URL": job["context_url"],
    }
    env = {key: value for key, value in env.items() if value}
    service = OrchestratorService.from_env(env)
    try:
        StateSigner.from_env(env).sign({"paused": "run"})  # makes state.key, as a pause does
        ApprovalsStore.from_env(env).approve("execute_code", "0" * 64)  # makes approvals.json
        data, config = job["data_dir"], os.path.join(job["config_home"], "tooldeck")
        targets = {
            "data_dir": ("dir", data),
            "knowledge.sqlite3": ("file", os.path.join(data, "knowledge.sqlite3")),
            "module-keys": ("dir", os.path.join(data, "module-keys")),
            "config_dir": ("dir", config),
            "state.key": ("file", os.path.join(config, "state.key")),
            "approvals.json": ("file", os.path.join(config, "approvals.json")),
        }
        for name in sorted(os.listdir(os.path.join(data, "module-keys"))):
            targets[name] = ("file", os.path.join(data, "module-keys", name))
        host = {name: os.path.exists(path) for name, (_, path) in targets.items()}
        result = service.registry.call_tool("execute_code", code=PROBE.format(targets=json.dumps(targets)))
        out: dict[str, Any] = {"host_sees": host, "ok": result.ok}
        if result.ok:
            out["exit_code"] = result.data["exit_code"]
            out["stderr"] = result.data["stderr"][-2000:]
            out["seen"] = json.loads(result.data["stdout"]) if result.data["exit_code"] == 0 else None
        else:
            out["error"] = result.error.message if result.error is not None else None
    finally:
        service.close()
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
