"""Asks OrchestratorService's ``execute_code`` and ``bash`` to read the application's secrets.

Started by ``test_service_code_hides_data.py`` as ``python -I _code_leak_driver.py`` (as
root, or dropped to an ordinary user with ``setpriv``) with a JSON job on stdin; prints one
JSON document. ``job["path"]`` is put first on ``sys.path``: world-readable copies of
``tools``, ``shared`` and ``orchestrator``, then the site folders.

The service is built as ``python -m orchestrator`` builds it (``from_env``: the data
directory, the user's configuration directory with its approvals file and state key). The
secrets are made as the application makes them: the knowledge database and the module keys
by the service, the state key by signing a state, the approvals file by approving a tool.
Then the model's code (the same program a model would send, through ``execute_code`` and
through the workspace's ``bash`` of an agent with tools) tries to list and read each of
them, and the answer is what it got.
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
    os.chdir(job["workspace"])  # the workspace of the agent's tools (bash runs in the sandbox)
    service = OrchestratorService.from_env(env, agent="main")
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
        probe = PROBE.format(targets=json.dumps(targets))
        out: dict[str, Any] = {"host_sees": host}
        out["execute_code"] = _answer(service.registry.call_tool("execute_code", code=probe))
        command = f"python3 - <<'PROBE_END'\n{probe}\nPROBE_END\n"
        bash = service.registry.get_tool("bash")  # the tool itself: bash is dangerous, so the gate would ask
        assert bash is not None
        out["bash"] = _answer(bash.execute(command=command))
    finally:
        service.close()
    json.dump(out, sys.stdout)


def _answer(result: Any) -> dict[str, Any]:
    """What the probe saw through one tool (or the tool's error)."""
    out: dict[str, Any] = {"ok": result.ok}
    if result.ok:
        out["exit_code"] = result.data["exit_code"]
        out["stderr"] = result.data["stderr"][-2000:]
        out["seen"] = json.loads(result.data["stdout"]) if result.data["exit_code"] == 0 else None
    else:
        out["error"] = result.error.message if result.error is not None else None
    return out


if __name__ == "__main__":
    main()
