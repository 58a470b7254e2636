"""What the sandbox's filesystem looks like: which host directories are hidden or private.

Both launchers build the same view from a :class:`Layout`:

- the host filesystem, read-only and ``nosuid``;
- **scratch** directories (``/tmp``, ``/var/tmp``, ``/dev/shm``, ``/run/lock`` and every
  world-writable directory found one level below ``/``, ``/var``, ``/run``, ``/opt``, ...):
  a private, empty, writable tmpfs per run, so nothing persists between runs and nothing
  another user put there is visible;
- **hidden** directories (``/home``, ``/root``, ``/run/user``, the application user's home
  and the data directories the application names): an empty, read-only tmpfs;
- **revealed** directories: an interpreter installed under a hidden or scratch directory
  (``~/.pyenv``, a venv under ``/tmp`` made with ``--copies``) is bound back read-only,
  so the program can still be run.

:func:`sandbox_executable` maps a venv's ``bin/python`` to the real interpreter behind it
(the sandbox runs Python with ``-I -S``, so the venv adds nothing).
"""

from __future__ import annotations

import os
import pwd
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

#: Shared writable directories every Linux system has; each gets a private tmpfs.
SCRATCH = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock")  # noqa: S108 - hiding them is the point
#: Directories with other users' (and the application user's) files.
HIDDEN = ("/home", "/root", "/run/user")
#: Parents searched (one level deep) for further world-writable directories.
_WORLD_WRITABLE_PARENTS = (
    "/", "/var", "/run", "/var/lib", "/var/cache", "/var/spool", "/var/local",
    "/opt", "/srv", "/mnt", "/media", "/usr/local",
)  # fmt: skip
#: Never replaced: the sandbox builds its own /dev and /proc; / itself is only made read-only.
_SPECIAL = ("/", "/dev", "/proc", "/sys")
#: Size of the private tmpfs for scratch directories other than /tmp, /var/tmp, /dev/shm.
SMALL_SCRATCH_MB = 4


@dataclass(frozen=True, slots=True)
class Layout:
    """The filesystem view of every run.

    Attributes:
        scratch: ``(path, size_mb)`` of each private writable tmpfs (mode 1777).
        hidden: Paths replaced by an empty, read-only tmpfs.
        reveal: Host directories bound read-only at the same path inside a hidden or
            scratch directory.
    """

    scratch: tuple[tuple[str, int], ...]
    hidden: tuple[str, ...]
    reveal: tuple[str, ...]

    def covers(self, path: str) -> bool:
        """Whether ``path`` lies in a hidden or scratch directory (invisible in the sandbox)."""
        return any(_inside(path, top) for top in (*self.hidden, *(p for p, _ in self.scratch)))


def _inside(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip("/") + "/")


def _real_dirs(paths: Iterable[str]) -> list[str]:
    found: list[str] = []
    for path in paths:
        real = os.path.realpath(path)
        if real not in found and real not in _SPECIAL and os.path.isdir(real):
            found.append(real)
    return found


def world_writable_dirs(parents: Sequence[str] = _WORLD_WRITABLE_PARENTS) -> list[str]:
    """World-writable directories one level below ``parents`` (symlinks not followed)."""
    found: list[str] = []
    for parent in parents:
        try:
            entries = list(os.scandir(parent))
        except OSError:
            continue
        for entry in entries:
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(info.st_mode) and info.st_mode & stat.S_IWOTH and entry.path not in _SPECIAL:
                found.append(entry.path)
    return found


def _outermost(paths: Iterable[str]) -> list[str]:
    """Drop paths that lie inside another one of ``paths`` (the outer mount covers them)."""
    ordered = sorted(set(paths), key=lambda p: (p.count("/"), p))
    kept: list[str] = []
    for path in ordered:
        if not any(_inside(path, top) for top in kept):
            kept.append(path)
    return kept


def home_of_current_user() -> str | None:
    """The application user's home directory from the password database (not ``$HOME``)."""
    try:
        return pwd.getpwuid(os.geteuid()).pw_dir or None
    except KeyError:
        return None


def build_layout(*, hidden_dirs: Iterable[str], disk_mb: int, home: str | None) -> Layout:
    """The layout hiding ``hidden_dirs`` (plus the defaults); nothing revealed yet."""
    primary = {"/tmp", "/var/tmp", "/dev/shm"}  # noqa: S108
    scratch_paths = _real_dirs([*SCRATCH, *world_writable_dirs()])
    hidden_paths = _real_dirs([*HIDDEN, *([home] if home else []), *hidden_dirs])
    tops = _outermost([*scratch_paths, *hidden_paths])
    sizes = {p: disk_mb if p in primary else min(disk_mb, SMALL_SCRATCH_MB) for p in scratch_paths}
    scratch = tuple((p, sizes[p]) for p in tops if p in sizes)
    return Layout(scratch=scratch, hidden=tuple(p for p in tops if p not in scratch_paths), reveal=())


def revealing(layout: Layout, executables: Iterable[str]) -> Layout:
    """``layout`` plus, read-only, the installation of each executable it would hide."""
    prefixes = [install_prefix(exe) for exe in executables if layout.covers(os.path.realpath(exe))]
    reveal = tuple(p for p in _outermost(prefixes) if p not in _SPECIAL)
    return Layout(scratch=layout.scratch, hidden=layout.hidden, reveal=reveal)


def _others_can_reach(path: str) -> bool:
    try:
        return all(parent.stat().st_mode & stat.S_IXOTH for parent in Path(path).parents)
    except OSError:
        return False


def reachable_by_others(layout: Layout) -> Layout:
    """``layout`` without the directories other users can't even reach (as root the program
    runs as another uid, so those are hidden already, and bwrap, started as that uid,
    could not mount on them)."""
    return Layout(
        scratch=tuple(item for item in layout.scratch if _others_can_reach(item[0])),
        hidden=tuple(p for p in layout.hidden if _others_can_reach(p)),
        reveal=layout.reveal,
    )


def install_prefix(executable: str) -> str:
    """The installation an executable belongs to: ``/x/bin/python3`` -> ``/x``."""
    real = Path(os.path.realpath(executable))
    parent = real.parent
    return str(parent.parent if parent.name in ("bin", "sbin") else parent)


def sandbox_executable(executable: str, *, hidden: Layout | None = None) -> str:
    """The path the sandbox should run for ``executable``.

    A path the sandbox can see is kept as it is (a multi-call binary such as busybox
    needs its name). A path it can't see (in a directory replaced per run, e.g. a venv
    under /tmp) is resolved to the real file behind its symlinks; a venv's interpreter
    copy (``--copies``) is mapped to the base interpreter named by ``pyvenv.cfg``.
    """
    if hidden is not None and not hidden.covers(os.path.abspath(executable)):
        return executable
    real = Path(os.path.realpath(executable))
    base = _venv_base(real)
    return str(base) if base is not None else str(real)


def _venv_base(real: Path) -> Path | None:
    for config in (real.parent / "pyvenv.cfg", real.parent.parent / "pyvenv.cfg"):
        try:
            text = config.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for line in text.splitlines():
            key, sep, value = line.partition("=")
            if sep and key.strip() == "home":
                for name in (real.name, "python3", "python"):
                    candidate = Path(value.strip()) / name
                    if candidate.is_file():
                        return Path(os.path.realpath(candidate))
        return None
    return None
