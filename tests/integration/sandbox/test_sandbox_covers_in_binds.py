"""What the view covers stays covered inside a ``python_path`` directory.

A ``python_path`` entry is bound into the view after the layout's covers (so it shows even
inside a hidden or scratch directory). A directory the sandbox hides, or an entry it masks,
that lies *inside* such an entry must be covered again on top of that bind: a checkout on
``python_path`` (a module's tests import the project) must not show the application's data
directory inside it, nor a file only the application's groups may read. Each (mode,
launcher) pair runs in ``_driver.py`` as root or as uid 1000, with a supplementary group
that alone may read one file.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import tempfile
from pathlib import Path
from types import ModuleType

import pytest

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="preparing the host side needs root (CI runs as root)")

SECRET_GID = 4243
PARENT = Path("/usr/local/share") if Path("/usr/local/share").is_dir() else Path("/etc")

LOOK = """
import json, os
def attempt(action):
    try:
        return "ok: " + repr(action())
    except OSError as exc:
        return type(exc).__name__
project = {project!r}
print(json.dumps({{
    "data": attempt(lambda: os.listdir(project + "/data")),
    "key": attempt(lambda: open(project + "/data/key.txt").read()),
    "group": attempt(lambda: open(project + "/group-only.txt").read()),
    "public": attempt(lambda: open(project + "/public.py").read()),
}}))
"""


def test_hidden_and_masked_entries_inside_a_python_path_directory_stay_covered(
    app_mode: str, launcher_kind: str, priv: ModuleType
) -> None:
    problem = priv.userns_problem(app_mode, launcher_kind)
    if problem is not None:
        pytest.skip(problem)
    root = Path(tempfile.mkdtemp(prefix="tooldeck-sbx-test-"))
    shown = PARENT / f"tooldeck-test-{secrets.token_hex(4)}"  # inside a tree the view shows
    outside = root / "checkout"  # outside the view: shown only by the bind
    try:
        root.chmod(0o711)
        for project in (shown, outside):
            _project(project)
        temp_root = priv.private_dir(root / "work", priv.app_uid(app_mode), 0o700)
        hidden = [str(shown / "data"), str(outside / "data")]
        job = {
            "sandbox": {"temp_root": str(temp_root), "launcher": launcher_kind, "hidden_dirs": hidden},
            "cases": [
                {"name": name, "code": LOOK.format(project=str(project)), "python_path": [str(project)]}
                for name, project in (("shown", shown), ("outside", outside))
            ],
        }
        answer = priv.run_driver(app_mode, job, tree=priv.readable_tree(root), groups=(SECRET_GID,))
    finally:
        shutil.rmtree(shown, ignore_errors=True)
        shutil.rmtree(root, ignore_errors=True)
    for name in ("shown", "outside"):
        result = answer["results"][name]
        assert "error" not in result and result["exit_code"] == 0, (name, result)
        seen = json.loads(result["stdout"])
        assert seen["public"] == "ok: 'VALUE = 1\\n'", name  # the python_path directory is there
        assert seen["data"] == "ok: []", name  # its data directory an empty cover
        assert seen["key"] == "FileNotFoundError", name
    # a file only a supplementary group may read: as root the program has no groups; as
    # uid 1000 it keeps them, and the file is masked (inside the system trees, where masks are)
    assert json.loads(answer["results"]["shown"]["stdout"])["group"] == "PermissionError"


def _project(project: Path) -> None:
    """A directory for ``python_path`` holding a module, the application's data directory
    and a file only group 4243 may read; modes protect nothing here: only covering does."""
    (project / "data").mkdir(parents=True)
    for folder in (project, project / "data"):
        folder.chmod(0o755)
    (project / "data" / "key.txt").write_text("the application's key")
    (project / "public.py").write_text("VALUE = 1\n")
    (project / "group-only.txt").write_text("only group 4243 may read this")
    os.chown(project / "group-only.txt", 0, SECRET_GID)
    for name, mode in (("data/key.txt", 0o644), ("public.py", 0o644), ("group-only.txt", 0o640)):
        (project / name).chmod(mode)
