"""The state key and the trusted-projects file as deployed: as root (CI) and as an ordinary
user (uid 1000, as most users run tooldeck). Each user gets a 0600 key of their own that
verifies their states; a key another user owns or can read is refused, not used."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import stat
import subprocess
import sys
import sysconfig
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest


def _load_privileges() -> ModuleType:
    path = Path(__file__).resolve().parents[1] / "sandbox" / "privileges.py"
    spec = importlib.util.spec_from_file_location("approvals_privileges", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


privileges = _load_privileges()

SCRIPT = textwrap.dedent(
    """
    import json, os, sys
    sys.path[:0] = [sys.argv[1], *sys.argv[4:]]  # the copy of tools first, then the dependencies
    from tools.approvals import StateSigner, StateKeyError, StateSignatureError
    from tools.store import RegistryStore
    config = sys.argv[2]
    env = {"XDG_CONFIG_HOME": config, "HOME": config}
    out = {"uid": os.geteuid()}
    signed = StateSigner.from_env(env).sign({"kind": "k", "n": 1})
    out["verified"] = StateSigner.from_env(env).verify(signed) == {"kind": "k", "n": 1}
    key = os.path.join(config, "tooldeck", "state.key")
    out["key_mode"] = oct(os.stat(key).st_mode & 0o777)
    out["key_uid"] = os.stat(key).st_uid
    project = os.path.join(config, "project", ".tooldeck", "registry.json")
    os.makedirs(os.path.dirname(project))
    with open(project, "w") as handle:
        handle.write('{"version": 1, "tools": {}}')
    store = RegistryStore(os.path.join(config, "tooldeck", "registry.json"), project)
    out["before"] = store.project_trust().status
    store.trust_project()
    out["after"] = store.project_trust().status
    trusted = os.path.join(config, "tooldeck", "trusted-projects.json")
    out["trust_mode"] = oct(os.stat(trusted).st_mode & 0o777)
    try:
        StateSigner.from_file(sys.argv[3]).verify(signed)
        out["foreign"] = "accepted"
    except (StateKeyError, StateSignatureError) as exc:
        out["foreign"] = str(exc)
    print(json.dumps(out))
    """
)


_IMPORTS = "import sys; sys.path[:0] = sys.argv[1:]; import pydantic, filelock"


def _site_packages() -> list[str]:
    """This environment's site-packages, without its .pth files (the editable install of the
    main checkout must not shadow the readable copy under test)."""
    paths = sysconfig.get_paths()
    return list(dict.fromkeys([paths["purelib"], paths["platlib"]]))


def _python(mode: str) -> str:
    """An interpreter the user of ``mode`` may run that has tooldeck's dependencies: this
    virtualenv's (not resolved: its site-packages come with it), else a public one."""
    for python in (sys.executable, privileges.public_python()):
        if python is None:
            continue
        probe = [*privileges.drop_argv(mode), python, "-I", "-S", "-c", _IMPORTS, *_site_packages()]
        if subprocess.run(probe, capture_output=True, timeout=60, check=False, cwd="/").returncode == 0:
            return python
    pytest.skip(f"no Python with tooldeck's dependencies that the {mode} user may run")


def _run(mode: str, tree: Path, config: Path, foreign_key: Path) -> dict[str, Any]:
    python = _python(mode)
    argv = [*privileges.drop_argv(mode), python, "-I", "-S", "-c", SCRIPT, str(tree), str(config), str(foreign_key)]
    argv += _site_packages()
    done = subprocess.run(
        argv, capture_output=True, text=True, timeout=120, check=False, cwd="/", env={"PATH": privileges.SEARCH_PATH}
    )
    assert done.returncode == 0, done.stderr[-3000:]
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


@pytest.fixture
def public_dir() -> Iterator[Path]:
    """A directory every user may enter (pytest's own temporary root is private to root)."""
    folder = Path(tempfile.mkdtemp(prefix="tooldeck-keys-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.parametrize("mode", privileges.mode_params())
def test_each_user_keeps_a_0600_key_of_their_own(mode: str, public_dir: Path) -> None:
    tmp_path = public_dir
    tree = privileges.readable_tree(tmp_path)
    uid = privileges.app_uid(mode)
    config = privileges.private_dir(tmp_path / "config", uid)
    foreign = tmp_path / "foreign.key"  # another user's key, readable by everyone
    foreign.write_text("ab" * 32 + "\n")
    foreign.chmod(0o644)
    other = 1001 if uid == 0 else 0
    if os.geteuid() == 0:
        os.chown(foreign, other, other)
    answer = _run(mode, tree, config, foreign)
    assert answer["uid"] == uid
    assert answer["verified"] is True
    assert (answer["key_mode"], answer["key_uid"]) == ("0o600", uid)
    assert (answer["before"], answer["after"], answer["trust_mode"]) == ("untrusted", "trusted", "0o600")
    # as root the foreign key belongs to another user; run by a user, it is theirs but readable by all
    expected = "belongs to another user" if os.geteuid() == 0 else "can be read or written by other users"
    assert expected in answer["foreign"]
    assert stat.S_IMODE((config / "tooldeck").stat().st_mode) == 0o700
