"""The sandbox finds an interpreter it can see when the application runs from a venv under /tmp.

Many CI systems and users create their virtualenv under /tmp, which the sandbox replaces
with a private tmpfs: the venv's ``bin/python`` is not visible inside. The sandbox must
run the real interpreter behind it (it runs Python with ``-I -S`` anyway).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

SYSTEM_PYTHON = shutil.which("python3", path="/usr/bin:/bin")

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="the test prepares both modes as root (CI runs as root)"),
    pytest.mark.skipif(SYSTEM_PYTHON is None, reason="no system python3 in /usr/bin or /bin"),
]


@pytest.fixture(params=[False, True], ids=["symlinked", "copied"])
def tmp_venv(request: pytest.FixtureRequest) -> Iterator[Path]:
    """A venv under /tmp made from the system python3 (world-readable), without pip."""
    root = Path(tempfile.mkdtemp(prefix="tooldeck-venv-test-", dir="/tmp"))
    root.chmod(0o755)
    argv = [str(SYSTEM_PYTHON), "-m", "venv", "--without-pip", str(root / "venv")]
    if request.param:
        argv.insert(3, "--copies")
    try:
        made = subprocess.run(argv, capture_output=True, timeout=120, check=False)
        if made.returncode != 0:
            pytest.skip(f"python3 -m venv failed: {made.stderr.decode(errors='replace')[-300:]}")
        for path in [root, *root.rglob("*")]:
            if not path.is_symlink():
                path.chmod(path.stat().st_mode | 0o055)
        yield root / "venv"
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_code_runs_when_the_application_lives_in_a_venv_under_tmp(
    tmp_venv: Path, app_mode: str, launcher_kind: str, priv: ModuleType, sandbox_root: Path
) -> None:
    problem = priv.userns_problem(app_mode, launcher_kind)
    if problem is not None:
        pytest.skip(problem)
    temp_root = priv.private_dir(sandbox_root / "work", priv.app_uid(app_mode), 0o700)
    tree = priv.readable_tree(sandbox_root)
    job = {
        "sandbox": {"temp_root": str(temp_root), "launcher": launcher_kind},
        "cases": [{"name": "print", "code": "import sys\nprint(6 * 7, sys.flags.isolated, sys.flags.no_site)"}],
    }
    answer = priv.run_driver(app_mode, job, tree=tree, python=str(tmp_venv / "bin" / "python"))
    result = answer["results"]["print"]
    assert "error" not in result, result
    assert (result["stdout"], result["exit_code"]) == ("42 1 1\n", 0)
    assert result["isolation"]["launcher"] == launcher_kind


def _private_install(base: Path) -> tuple[Path, Path, Path]:
    """An interpreter installed outside the system directories (``<base>/opt/tool/bin/sh``,
    a copy of the system shell), with the application's data directory and a world-writable
    spool directory inside its installation prefix, both holding a file any user may read."""
    prefix = base / "opt" / "tool"
    (prefix / "bin").mkdir(parents=True)
    shell = prefix / "bin" / "sh"
    shutil.copy(os.path.realpath("/bin/sh"), shell)
    data = prefix / "var" / "data"
    data.mkdir(parents=True)
    (data / "secret.txt").write_text("the application's secret\n")
    spool = prefix / "spool"
    spool.mkdir()
    (spool / "left-by-another-user.txt").write_text("another user's file\n")
    for path in [base / "opt", *(base / "opt").rglob("*")]:
        path.chmod(0o755 if path.is_dir() or path == shell else 0o644)
    spool.chmod(0o1777)
    return shell, data, spool


def test_a_data_directory_inside_the_interpreters_installation_stays_hidden(
    app_mode: str, launcher_kind: str, priv: ModuleType, sandbox_root: Path
) -> None:
    # The installation of an interpreter the view would not show is revealed (bound
    # read-only); what the sandbox hides, and the world-writable directories it makes
    # private, must be worked out over that whole view, the installation included.
    problem = priv.userns_problem(app_mode, launcher_kind)
    if problem is not None:
        pytest.skip(problem)
    temp_root = priv.private_dir(sandbox_root / "work", priv.app_uid(app_mode), 0o700)
    shell, data, spool = _private_install(sandbox_root)
    code = f"{shell} -c 'echo ran'; cat {data}/secret.txt; ls -A {data} {spool}; echo end\n"
    job = {
        "sandbox": {
            "temp_root": str(temp_root),
            "launcher": launcher_kind,
            "interpreters": {"sh": [str(shell)]},
            "hidden_dirs": [str(data)],
        },
        "cases": [{"name": "look", "code": code, "language": "sh"}],
    }
    answer = priv.run_driver(app_mode, job, tree=priv.readable_tree(sandbox_root))
    result = answer["results"]["look"]
    assert "error" not in result, result
    assert result["stdout"] == f"ran\n{spool}:\n\n{data}:\nend\n", result  # ls sorts its arguments
    assert "secret" not in result["stdout"] + result["stderr"].replace("secret.txt", "")
    assert "No such file" in result["stderr"]
