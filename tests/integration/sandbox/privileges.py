"""Run the sandbox as the application would: as root, or as an ordinary user.

The unprivileged variant drops privileges with ``setpriv --reuid=1000 --regid=1000
--clear-groups`` (an ordinary user's uid: not 65534, the overflow id an unmapped user
namespace reports, which would hide a launcher that maps the wrong id) and runs
:mod:`_driver` in a child interpreter that any user may execute, on a copy of the ``tools``
package that any user may read (the test's own checkout and virtualenv may sit in a
directory only root can enter, as CI's does).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest

import tools
from tools.builtin.code_executor.local import world_executable

ROOT = os.geteuid() == 0
NOBODY = 65534
#: The application user of the unprivileged variant (when the tests run as root).
ORDINARY_UID = 1000
DRIVER = Path(__file__).with_name("_driver.py")
SEARCH_PATH = "/usr/local/bin:/usr/bin:/bin"


def public_python() -> str | None:
    """A Python interpreter that any user may execute (for the driver), or None."""
    candidates = [str(Path(sys.executable).resolve())]
    candidates += [shutil.which(name, path=SEARCH_PATH) or "" for name in ("python3", "python")]
    for candidate in candidates:
        if candidate and world_executable(candidate):
            return candidate
    return None


def copy_readable(source: Path, dest: Path) -> Path:
    """Copy ``source`` (a package dir) to ``dest`` readable by everyone; returns ``dest``."""
    shutil.copytree(source, dest, ignore=shutil.ignore_patterns("__pycache__"))
    for path in [dest, *dest.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return dest


def readable_tree(root: Path, packages: tuple[str, ...] = ("tools", "shared")) -> Path:
    """A directory holding a world-readable copy of ``packages`` (siblings of ``tools``; by
    default ``tools`` and ``shared``, which it imports)."""
    tree = root / "tree"
    tree.mkdir()
    tree.chmod(0o755)
    source = Path(tools.__file__).parent.parent
    for name in packages:
        copy_readable(source / name, tree / name)
    return tree


def mode_params() -> list[Any]:
    """``root`` and ``unprivileged`` as pytest params, skipped with the reason when impossible."""
    setpriv = shutil.which("setpriv", path=SEARCH_PATH)
    return [
        pytest.param("root", marks=pytest.mark.skipif(not ROOT, reason="the root variant needs root")),
        pytest.param(
            "unprivileged",
            marks=pytest.mark.skipif(ROOT and setpriv is None, reason="dropping privileges needs setpriv (util-linux)"),
        ),
    ]


def app_uid(mode: str) -> int:
    """The uid the application runs as in ``mode``."""
    if mode == "root":
        return 0
    return ORDINARY_UID if ROOT else os.geteuid()


def drop_argv(mode: str, groups: tuple[int, ...] = ()) -> list[str]:
    """The argv prefix that starts a process as the application user of ``mode``, with the
    supplementary ``groups`` (none by default; as root too when given)."""
    setpriv = shutil.which("setpriv", path=SEARCH_PATH) or "setpriv"
    keep = [f"--groups={','.join(map(str, groups))}"] if groups else ["--clear-groups"]
    if not ROOT:
        return []
    if mode == "root":
        return [setpriv, *keep, "--"] if groups else []
    return [setpriv, f"--reuid={ORDINARY_UID}", f"--regid={ORDINARY_UID}", *keep]


def run_driver(
    mode: str,
    job: dict[str, Any],
    *,
    tree: Path,
    python: str | None = None,
    wrapper: list[str] | None = None,
    groups: tuple[int, ...] = (),
) -> dict[str, Any]:
    """Run ``job`` in :mod:`_driver` as the application user of ``mode`` (with the
    supplementary ``groups``); its JSON answer."""
    interpreter = python or public_python()
    if interpreter is None:
        pytest.skip("no Python interpreter that an unprivileged user may execute")
    driver = tree / "_driver.py"
    if not driver.exists():
        shutil.copy(DRIVER, driver)
        driver.chmod(0o644)
    argv = [*drop_argv(mode, groups), *(wrapper or []), interpreter, "-I", str(driver), str(tree)]
    proc = subprocess.run(
        argv,
        input=json.dumps(job).encode(),
        capture_output=True,
        timeout=180,
        check=False,
        cwd="/",
        env={"PATH": SEARCH_PATH, "LANG": "C.UTF-8"},
    )
    if proc.returncode != 0:
        pytest.fail(f"driver failed ({proc.returncode}): {proc.stderr.decode(errors='replace')[-3000:]}")
    answer: dict[str, Any] = json.loads(proc.stdout)
    return answer


def userns_problem(mode: str, launcher: str) -> str | None:
    """Why the sandbox user of ``mode``/``launcher`` can't create user namespaces, or None.

    The application user needs them when it is not root; as root, bubblewrap runs as
    uid 65534 and needs them too (the namespaces launcher, as root, does not).
    """
    if mode == "root" and launcher != "bwrap":
        return None
    unshare = shutil.which("unshare", path=SEARCH_PATH)
    if unshare is None:
        return "util-linux unshare is not installed, so user namespaces can't be checked"
    argv = [*drop_argv("unprivileged" if ROOT else mode), unshare, "--user", "true"]
    done = subprocess.run(argv, capture_output=True, timeout=30, check=False)
    if done.returncode == 0:
        return None
    settings = []
    for path in ("/proc/sys/user/max_user_namespaces", "/proc/sys/kernel/unprivileged_userns_clone"):
        if os.path.exists(path):
            settings.append(f"{path}={Path(path).read_text().strip()}")
    reason = done.stderr.decode(errors="replace").strip()
    return f"uid {NOBODY if ROOT else os.geteuid()} can't create user namespaces here ({reason}; {', '.join(settings)})"


def private_dir(path: Path, uid: int, mode: int = 0o700) -> Path:
    """Create ``path`` owned by ``uid`` with ``mode``."""
    path.mkdir()
    os.chown(path, uid, uid)
    path.chmod(mode)
    return path


def is_setuid(path: Path) -> bool:
    return bool(path.stat().st_mode & stat.S_ISUID)


def _world_readable(path: Path) -> bool:
    try:
        if path.stat().st_mode & 0o005 != 0o005:
            return False
        return all(parent.stat().st_mode & 0o001 for parent in path.parents)
    except OSError:
        return False


def library_python() -> tuple[str, list[str]]:
    """An interpreter any user may run that can import the ``tools`` package's dependencies:
    ``(python, site-packages dirs to put on sys.path)``; skips the test when there is none.

    This interpreter when others may run it; else a public one of the same version, given
    this interpreter's site-packages (pure Python and same-ABI extensions import fine).
    """
    paths = sysconfig.get_paths()
    site = list(dict.fromkeys([paths["purelib"], paths["platlib"]]))
    unreadable = [d for d in site if not _world_readable(Path(d))]
    if unreadable:
        pytest.skip(f"the site-packages {unreadable} can't be read by other users")
    python = public_python()
    if python is None:
        pytest.skip("no Python interpreter that an unprivileged user may execute")
    probe = subprocess.run(
        [python, "-c", "import sys; print(sys.version_info[:2])"], capture_output=True, timeout=60, check=False
    )
    if probe.stdout.decode().strip() != str(sys.version_info[:2]):
        pytest.skip(f"{python} is not Python {sys.version_info[0]}.{sys.version_info[1]}, so it can't use our packages")
    return python, site


def run_python(
    mode: str, script: Path, job: dict[str, Any], *, tree: Path, env: dict[str, str] | None = None
) -> dict[str, Any]:
    """Run ``script`` (``main(job) -> JSON-able``) as the application user of ``mode``.

    The script imports the world-readable copy of ``tools`` in ``tree`` and this
    interpreter's site-packages; ``env`` is its whole environment.
    """
    python, site = library_python()
    runner = tree / script.name
    if not runner.exists():
        shutil.copy(script, runner)
        runner.chmod(0o644)
    bootstrap = (
        "import json, sys, runpy; sys.path[0:0] = json.loads(sys.argv[1]); "
        "main = runpy.run_path(sys.argv[2])['main']; json.dump(main(json.load(sys.stdin)), sys.stdout)"
    )
    argv = [*drop_argv(mode), python, "-I", "-c", bootstrap, json.dumps([str(tree), *site]), str(runner)]
    proc = subprocess.run(
        argv,
        input=json.dumps(job).encode(),
        capture_output=True,
        timeout=180,
        check=False,
        cwd="/",
        env=env if env is not None else {"PATH": SEARCH_PATH, "LANG": "C.UTF-8"},
    )
    if proc.returncode != 0:
        pytest.fail(f"{script.name} failed ({proc.returncode}): {proc.stderr.decode(errors='replace')[-3000:]}")
    answer: dict[str, Any] = json.loads(proc.stdout)
    return answer
