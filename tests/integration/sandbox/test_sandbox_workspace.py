"""Workspaces and ``python_path`` in both modes (application as root / as an ordinary user),
both launchers.

As root the program runs as uid 65534, which could neither read the 0700 workspace nor
write its root-owned files: the copy-in/copy-out design must work anyway. Each (mode,
launcher) pair runs one battery in a child interpreter (``_driver.py``); the tests check
the answers and the host directories afterwards.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="preparing the host side needs root (CI runs as root)")

HOST_PARENT = Path("/opt") if Path("/opt").is_dir() else Path("/")
MAX_FILES = 40

READ_AND_CHANGE = """
import os
print(sorted(os.listdir('.')), open('a.txt').read().strip(), os.getcwd().endswith('/workspace'))
open('a.txt', 'w').write('changed\\n')
open('new.txt', 'w').write('new\\n')
os.makedirs('pkg/deep', exist_ok=True)
open('pkg/deep/mod.py', 'w').write('X = 1\\n')
os.remove('gone.txt')
"""

ESCAPE = """
import os
os.symlink('/etc', 'etc-link')
os.symlink('../../../', 'up')
os.symlink('a.txt', 'inside-link')
os.remove('out')
os.mkdir('out')
open('out/pwn.txt', 'w').write('pwn')
try:
    open({host!r}, 'w').write('x')
    print('host written')
except OSError as exc:
    print('host', type(exc).__name__)
"""

# Lexically 'outside' is inside the workspace; in the real tree 'self' is the workspace
# root, so 'self/../outside' is its sibling: the copy-back must resolve, not normpath.
ESCAPE_REAL = """
import os
os.symlink('.', 'self')
os.symlink('self/../outside', 'leak')
os.symlink('self/sub/b.txt', 'alias')
"""

MANY_FILES = """
for i in range(60):
    open(f'f{i}.txt', 'w').write('x')
"""

IMPORT = """
import sys, helper_mod
print(helper_mod.VALUE, sys.path[0] == {path!r})
"""


@dataclass
class Host:
    """Host-side directories of one battery."""

    workspaces: dict[str, Path]
    outside: Path
    module_dir: Path
    private_dir: Path


def _workspace(parent: Path, name: str, owner: int, *, files: int = 0) -> Path:
    ws = parent / name
    ws.mkdir()
    (ws / "a.txt").write_text("hello\n")
    (ws / "gone.txt").write_text("bye\n")
    (ws / "sub").mkdir()
    (ws / "sub" / "b.txt").write_text("b\n")
    for i in range(files):
        (ws / f"extra{i}.txt").write_text("x")
    for path in [ws, *ws.rglob("*")]:
        os.chown(path, owner, owner)
    ws.chmod(0o700)
    return ws


def _host(parent: Path, owner: int) -> Host:
    outside = parent / "outside"
    outside.mkdir()
    outside.chmod(0o777)
    names = ("read_only", "writable", "escape", "escape_real", "too_many_out", "python")
    workspaces = {name: _workspace(parent, name, owner) for name in names}
    workspaces["too_big"] = _workspace(parent, "too_big", owner, files=MAX_FILES + 5)
    (workspaces["escape"] / "out").symlink_to(outside, target_is_directory=True)
    os.lchown(workspaces["escape"] / "out", owner, owner)
    module_dir = parent / "modules"
    module_dir.mkdir()
    (module_dir / "helper_mod.py").write_text("VALUE = 42\n")
    module_dir.chmod(0o755)
    (module_dir / "helper_mod.py").chmod(0o644)
    private = parent / "private-modules"
    private.mkdir()
    private.chmod(0o700)
    return Host(workspaces, outside, module_dir, private)


def _cases(host: Host) -> list[dict[str, Any]]:
    ws = {name: str(path) for name, path in host.workspaces.items()}
    module = str(host.module_dir)
    return [
        {"name": "read_only", "code": READ_AND_CHANGE, "workspace": ws["read_only"]},
        {"name": "writable", "code": READ_AND_CHANGE, "workspace": ws["writable"], "writable": True},
        {
            "name": "escape",
            "code": ESCAPE.format(host=str(host.outside / "direct.txt")),
            "workspace": ws["escape"],
            "writable": True,
        },
        {"name": "escape_real", "code": ESCAPE_REAL, "workspace": ws["escape_real"], "writable": True},
        {"name": "too_big", "code": "print(1)", "workspace": ws["too_big"]},
        {"name": "too_many_out", "code": MANY_FILES, "workspace": ws["too_many_out"], "writable": True},
        {"name": "import", "code": IMPORT.format(path=module), "python_path": [module]},
        {
            "name": "bash_pythonpath",
            "language": "bash",
            "code": "echo $PYTHONPATH; ls",
            "python_path": [module],
            "workspace": ws["python"],
        },
        {
            "name": "workspace_on_path",
            "code": "import sys, os\nprint(sys.path[0] == os.getcwd())",
            "workspace": ws["python"],
            "python_path": [ws["python"]],
        },
        {"name": "private_path", "code": "print(1)", "python_path": [str(host.private_dir)]},
        {"name": "not_a_dir", "code": "print(1)", "workspace": str(host.module_dir / "helper_mod.py")},
    ]


@dataclass
class Battery:
    mode: str
    launcher: str
    answer: dict[str, Any]
    host: Host

    def result(self, name: str) -> dict[str, Any]:
        found: dict[str, Any] = self.answer["results"][name]
        assert "error" not in found, found
        return found

    def error(self, name: str) -> str:
        found: dict[str, Any] = self.answer["results"][name]
        assert "error" in found, found
        return str(found["error"])


@pytest.fixture(scope="module")
def battery(app_mode: str, launcher_kind: str, priv: ModuleType) -> Iterator[Battery]:
    problem = priv.userns_problem(app_mode, launcher_kind)
    if problem is not None:
        pytest.skip(problem)
    root = Path(tempfile.mkdtemp(prefix="tooldeck-sbx-test-"))
    root.chmod(0o711)
    parent = Path(tempfile.mkdtemp(prefix="tooldeck-test-ws-", dir=HOST_PARENT))
    parent.chmod(0o755)
    try:
        host = _host(parent, priv.app_uid(app_mode))
        temp_root = priv.private_dir(root / "work", priv.app_uid(app_mode), 0o700)
        tree = priv.readable_tree(root)
        job = {
            "limits": {"timeout_seconds": 20, "workspace_files": MAX_FILES},
            "sandbox": {"temp_root": str(temp_root), "launcher": launcher_kind},
            "cases": _cases(host),
        }
        answer = priv.run_driver(app_mode, job, tree=tree)
        yield Battery(app_mode, launcher_kind, answer, host)
    finally:
        shutil.rmtree(root, ignore_errors=True)
        shutil.rmtree(parent, ignore_errors=True)


def test_the_program_sees_a_private_workspace(battery: Battery) -> None:
    result = battery.result("read_only")
    assert result["stdout"] == "['a.txt', 'gone.txt', 'sub'] hello True\n", result["stderr"]
    assert result["exit_code"] == 0


def test_changes_stay_in_the_sandbox_unless_writable(battery: Battery) -> None:
    ws = battery.host.workspaces["read_only"]
    assert battery.result("read_only")["workspace"] is None
    assert (ws / "a.txt").read_text() == "hello\n"
    assert (ws / "gone.txt").exists()
    assert sorted(p.name for p in ws.iterdir()) == ["a.txt", "gone.txt", "sub"]


def test_writable_writes_created_changed_and_deleted_files_back(battery: Battery) -> None:
    result = battery.result("writable")
    ws = battery.host.workspaces["writable"]
    assert result["exit_code"] == 0, result["stderr"]
    changes = result["workspace"]
    assert sorted(changes["written"]) == ["a.txt", "new.txt", "pkg", "pkg/deep", "pkg/deep/mod.py"]
    assert changes["deleted"] == ["gone.txt"]
    assert changes["skipped"] == []
    assert changes["error"] is None
    assert (ws / "a.txt").read_text() == "changed\n"
    assert (ws / "new.txt").read_text() == "new\n"
    assert (ws / "pkg" / "deep" / "mod.py").read_text() == "X = 1\n"
    assert not (ws / "gone.txt").exists()
    assert (ws / "sub" / "b.txt").read_text() == "b\n"


def test_no_symlink_makes_the_sync_write_outside_the_workspace(battery: Battery) -> None:
    result = battery.result("escape")
    ws = battery.host.workspaces["escape"]
    assert result["stdout"] == "host FileNotFoundError\n", result["stderr"]  # not in the view
    changes = result["workspace"]
    skipped = dict(changes["skipped"])
    assert set(skipped) == {"etc-link", "up"}
    assert "leaves the workspace" in skipped["etc-link"]
    assert list(battery.host.outside.iterdir()) == []
    assert (ws / "out").is_dir() and not (ws / "out").is_symlink()
    assert (ws / "out" / "pwn.txt").read_text() == "pwn"
    assert os.readlink(ws / "inside-link") == "a.txt"
    assert not (ws / "etc-link").exists() and not (ws / "up").exists()


def test_program_symlinks_are_checked_against_the_real_tree_not_lexically(battery: Battery) -> None:
    changes = battery.result("escape_real")["workspace"]
    ws = battery.host.workspaces["escape_real"]
    assert [path for path, reason in changes["skipped"] if "leaves the workspace" in reason] == ["leak"]
    assert not (ws / "leak").is_symlink()
    assert os.readlink(ws / "self") == "."
    assert (ws / "alias").read_text() == "b\n"


def test_an_oversized_workspace_is_refused_before_running(battery: Battery) -> None:
    error = battery.error("too_big")
    assert "InvalidArgumentsError" in error or "WorkspaceTooLargeError" in error
    assert f"more than {MAX_FILES} files" in error
    assert "workspace_files" in error


def test_a_program_leaving_too_many_files_gets_nothing_written_back(battery: Battery) -> None:
    changes = battery.result("too_many_out")["workspace"]
    assert changes["written"] == [] and changes["deleted"] == []
    assert "nothing was written back" in changes["error"]
    assert not (battery.host.workspaces["too_many_out"] / "f0.txt").exists()


def test_python_path_is_importable_and_first(battery: Battery) -> None:
    result = battery.result("import")
    assert result["stdout"] == "42 True\n", result["stderr"]


def test_python_path_reaches_other_languages_as_pythonpath(battery: Battery) -> None:
    result = battery.result("bash_pythonpath")
    assert result["stdout"] == f"{battery.host.module_dir}\na.txt\ngone.txt\nsub\n", result["stderr"]


def test_a_python_path_inside_the_workspace_means_the_copy(battery: Battery) -> None:
    assert battery.result("workspace_on_path")["stdout"] == "True\n"


def test_unreadable_python_path_and_non_directory_workspace_are_clear_errors(battery: Battery) -> None:
    assert "not a directory" in battery.error("not_a_dir")
    if battery.mode == "root":  # the program's uid can't read a root-only directory
        assert "can't be read by the sandbox's uid" in battery.error("private_path")
    else:  # the application's own directory (as the app user, 0700 root-owned: missing)
        error = battery.answer["results"]["private_path"]
        assert "error" in error or error["exit_code"] == 0
