"""Runs LocalSandbox cases in a child interpreter, possibly as an unprivileged user.

Started by ``privileges.run_driver`` as ``python -I _driver.py TREE`` with a JSON job on
stdin; prints one JSON document: ``{"dropped": [...], "results": {name: result}}``.
``TREE`` holds a copy of the ``tools`` package that any user may read. Only the sandbox
modules are imported (stdlib only): the ``tools`` packages are stubbed so that their
``__init__`` (which imports pydantic from a site-packages the test user may not be able
to read) never runs.

A case is ``{"name", "code", "language"?, "stdin"?, "timeout"?, "workspace"?, "writable"?,
"python_path"?}``, or a pair
``{"name", "pair": [first, second], "hold": n}``: ``second`` starts once ``first`` has
``n`` processes alive (or has ended), and both run at once.
"""

from __future__ import annotations

import inspect
import json
import os
import sys
import threading
import time
import types
from dataclasses import asdict
from typing import Any


def _stub_packages(tree: str) -> None:
    for name in ("tools", "tools.builtin", "tools.builtin.code_executor"):
        module = types.ModuleType(name)
        module.__path__ = [os.path.join(tree, *name.split("."))]
        sys.modules[name] = module


def _group_size(pgid: int) -> int:
    count = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != b"Z":
            count += 1
    return count


def _run(box: Any, case: dict[str, Any]) -> dict[str, Any]:
    try:
        result = box.run(
            case["code"],
            language=case.get("language", "python"),
            stdin=case.get("stdin"),
            timeout_seconds=case.get("timeout"),
            **{key: case[key] for key in ("workspace", "writable", "python_path") if key in case},
        )
    except Exception as exc:  # the test inspects the error
        return {"error": f"{type(exc).__name__}: {exc}", "trips_breaker": getattr(exc, "trips_breaker", None)}
    return asdict(result)


def _run_pair(box: Any, case: dict[str, Any]) -> dict[str, Any]:
    first, second = case["pair"]
    out: dict[str, Any] = {}
    thread = threading.Thread(target=lambda: out.update(first=_run(box, first)))
    thread.start()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and thread.is_alive():
        running = list(box._running)
        if running and _group_size(running[0]) >= case["hold"]:
            break
        time.sleep(0.02)
    out["second"] = _run(box, second)
    thread.join()
    return out


def main() -> None:
    tree = sys.argv[1]
    _stub_packages(tree)
    sys.path.insert(0, tree)
    from tools.builtin.code_executor.local import LocalSandbox
    from tools.builtin.code_executor.sandbox import SandboxLimits

    job = json.load(sys.stdin)
    accepted = inspect.signature(LocalSandbox).parameters
    options = dict(job.get("sandbox", {}))
    dropped = sorted(k for k in options if k not in accepted)
    for key in dropped:
        del options[key]
    box = LocalSandbox(limits=SandboxLimits(**job.get("limits", {})), **options)
    results: dict[str, Any] = {}
    try:
        for case in job["cases"]:
            results[case["name"]] = _run_pair(box, case) if "pair" in case else _run(box, case)
    finally:
        box.close()
    json.dump({"dropped": dropped, "uid": os.geteuid(), "results": results}, sys.stdout)


if __name__ == "__main__":
    main()
