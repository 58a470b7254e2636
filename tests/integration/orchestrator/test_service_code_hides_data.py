"""The service's ``execute_code`` cannot read the application's secrets, as root and as an
ordinary user.

Model-written code runs through ``execute_code``; the orchestrator keeps the module keys and
the knowledge database in its data directory, and the state key and the approvals in the
user's configuration directory. The code must not see them wherever they are: in the
user's home (the defaults), or inside a system directory the sandbox shows every program
(``/etc``: an operator's choice the sandbox can't rule out), where the service hides them.
The battery runs in ``_code_leak_driver.py`` (see ``tests/integration/sandbox/privileges.py``).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.sandbox import privileges

DRIVER = Path(__file__).with_name("_code_leak_driver.py")
SECRETS = ("knowledge.sqlite3", "module-signing.key", "module-credentials.key", "state.key", "approvals.json")


@pytest.fixture(scope="module")
def tree() -> Iterator[Path]:
    """World-readable copies of ``tools``, ``shared``, ``orchestrator`` and the driver."""
    base = Path(tempfile.mkdtemp(prefix="tooldeck-leak-tree-"))
    base.chmod(0o711)
    try:
        root = privileges.readable_tree(base, ("tools", "shared", "orchestrator"))
        shutil.copy(DRIVER, root / DRIVER.name)
        (root / DRIVER.name).chmod(0o644)
        yield root
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def _where(place: str, uid: int) -> Path:
    """A fresh directory of ``uid`` for the application's files: a home under ``/home``
    (else the temp dir), or one inside ``/etc``, which the sandbox shows every program."""
    parent: str | None = None
    if place == "system":
        if not privileges.ROOT:
            pytest.skip("placing the application's files in /etc needs root (CI runs as root)")
        parent = "/etc"
    elif privileges.ROOT and os.path.isdir("/home"):
        parent = "/home"
    base = Path(tempfile.mkdtemp(prefix="tooldeck-leak-", dir=parent))
    if privileges.ROOT:
        os.chown(base, uid, uid)
    base.chmod(0o755)
    return base


def _world_readable_dirs(base: Path, folder: Path, uid: int) -> None:
    """Create ``folder`` and its parents below ``base``, mode 0755, owned by ``uid``."""
    folder.mkdir(parents=True)
    for path in [folder, *folder.parents]:
        if path == base:
            break
        if privileges.ROOT:
            os.chown(path, uid, uid)
        path.chmod(0o755)


def _run(mode: str, job: dict[str, Any], tree: Path) -> dict[str, Any]:
    python = privileges.public_python()
    if python is None:
        pytest.skip("no Python interpreter that an unprivileged user may execute")
    argv = [*privileges.drop_argv(mode), python, "-I", str(tree / DRIVER.name)]
    env = {"PATH": privileges.SEARCH_PATH, "LANG": "C.UTF-8"}
    proc = subprocess.run(
        argv, input=json.dumps(job).encode(), capture_output=True, timeout=300, check=False, cwd="/", env=env
    )
    if proc.returncode != 0:
        pytest.fail(f"driver failed ({proc.returncode}): {proc.stderr.decode(errors='replace')[-3000:]}")
    answer: dict[str, Any] = json.loads(proc.stdout)
    return answer


@pytest.mark.parametrize("place", ["home", "system"])
@pytest.mark.parametrize("mode", privileges.mode_params())
def test_execute_code_cannot_read_the_applications_secrets(mode: str, place: str, tree: Path) -> None:
    problem = privileges.userns_problem(mode, "bwrap") and privileges.userns_problem(mode, "namespaces")
    if problem is not None:
        pytest.skip(problem)
    uid = privileges.app_uid(mode)
    base = _where(place, uid)
    try:
        home = base / "home"
        for folder in (home / ".local" / "share" / "tooldeck", home / ".config" / "tooldeck"):
            _world_readable_dirs(base, folder, uid)  # permissions protect nothing: only hiding does
        job = {
            "path": [str(tree), sysconfig.get_paths()["purelib"]],
            "home": str(home),
            "config_home": str(home / ".config"),
            "data_dir": str(home / ".local" / "share" / "tooldeck"),
            "context_url": f"http://127.0.0.1:{_closed_port()}",
        }
        report = _run(mode, job, tree)
    finally:
        shutil.rmtree(base, ignore_errors=True)

    # the application made every secret: the test is not vacuous
    assert all(report["host_sees"].values()), report["host_sees"]
    assert set(SECRETS) <= set(report["host_sees"])
    assert report["ok"] is True and report["exit_code"] == 0, report
    seen = report["seen"]
    # the code ran and reported on every target: no file could be read, and a directory is
    # absent or, inside a tree the sandbox shows, an empty cover
    assert set(seen) == set(report["host_sees"])
    for name, attempts in seen.items():
        if attempts["read"] is not None:
            assert not attempts["read"].startswith("ok"), (name, attempts)
        if attempts["list"] is not None:
            assert attempts["list"] == "ok: []" or not attempts["list"].startswith("ok"), (name, attempts)
