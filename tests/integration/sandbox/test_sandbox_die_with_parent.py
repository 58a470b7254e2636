"""A sandboxed program dies with the application, whichever launcher ran it.

The application (``_driver.py``, as root or as uid 1000) runs a program that sleeps; once
it runs, the application is killed with SIGKILL (no cleanup of its own can run). No
process of the sandbox may survive: bubblewrap has ``--die-with-parent``, the namespaces
launcher and its PID 1 ``PR_SET_PDEATHSIG``, and the PID namespace goes with its PID 1.

The namespaces launcher also dies when the thread that started it ended before it could
arm that signal (``_late_thread.py``).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="preparing both modes needs root (CI runs as root)")


def _wait(condition: Any, within: float) -> bool:
    """Poll ``condition()`` until true or ``within`` seconds pass (a bound, not an assertion)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return bool(condition())


def test_killing_the_application_kills_the_sandbox(
    app_mode: str, launcher_kind: str, priv: ModuleType, scan_processes: Any
) -> None:
    problem = priv.userns_problem(app_mode, launcher_kind)
    if problem is not None:
        pytest.skip(problem)
    python = priv.public_python()
    if python is None:
        pytest.skip("no Python interpreter that an unprivileged user may execute")
    root = Path(tempfile.mkdtemp(prefix="tooldeck-sbx-test-"))
    root.chmod(0o711)
    app: subprocess.Popen[bytes] | None = None
    try:
        temp_root = priv.private_dir(root / "work", priv.app_uid(app_mode), 0o700)
        tree = priv.readable_tree(root)
        shutil.copy(priv.DRIVER, tree / "_driver.py")
        job = {
            "limits": {"timeout_seconds": 120, "cpu_seconds": 120},
            "sandbox": {"temp_root": str(temp_root), "launcher": launcher_kind},
            "cases": [{"name": "sleep", "code": "import time\ntime.sleep(120)\n"}],
        }
        argv = [*priv.drop_argv(app_mode), python, "-I", str(tree / "_driver.py"), str(tree)]
        app = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, cwd="/")
        assert app.stdin is not None
        app.stdin.write(json.dumps(job).encode())
        app.stdin.close()

        def program_runs() -> bool:
            return any("main.py" in text for _, text in scan_processes(str(temp_root)))

        assert _wait(program_runs, 90.0), "the sandboxed program never started"
        app.send_signal(signal.SIGKILL)
        app.wait(timeout=30)
        survived = [] if _wait(lambda: not scan_processes(str(temp_root)), 15.0) else scan_processes(str(temp_root))
        assert survived == [], f"sandbox processes outlived the application: {survived}"
    finally:
        if app is not None and app.poll() is None:
            app.kill()
        for pid, _ in scan_processes(str(root)):
            os.kill(pid, signal.SIGKILL)
        shutil.rmtree(root, ignore_errors=True)


def test_the_namespaces_launcher_dies_when_its_thread_ended_before_it_started(
    app_mode: str, priv: ModuleType, sandbox_root: Path
) -> None:
    problem = priv.userns_problem(app_mode, "namespaces")
    if problem is not None:
        pytest.skip(problem)
    python, _ = priv.library_python()
    uid = priv.app_uid(app_mode)
    temp_root = priv.private_dir(sandbox_root / "work", uid, 0o700)
    gate = sandbox_root / "gate"
    os.mkfifo(gate, 0o600)
    os.chown(gate, uid, uid)
    wrapper = sandbox_root / "late-python"
    wrapper.write_text(f'#!/bin/sh\nread go < "{gate}"\nexec "{python}" "$@"\n')
    wrapper.chmod(0o755)
    tree = priv.readable_tree(sandbox_root)
    job = {"wrapper": str(wrapper), "gate": str(gate), "temp_root": str(temp_root)}
    report = priv.run_python(app_mode, Path(__file__).with_name("_late_thread.py"), job, tree=tree)

    assert report["released"] is True, report  # the launcher did start, after its thread was gone
    assert "up" not in report["printed"], report  # so the program never ran
    assert report["ended"] is True, report
    assert report["reason"] == "killed by SIGKILL" or report["reason"].startswith("exit status"), report
