"""What the sandbox's filesystem looks like: an allow-list of the host, nothing else.

Both launchers build the same view from a :class:`Layout`, on an empty root that is
read-only once built:

- **system** directories of the host, bound read-only and ``nosuid`` at their own path:
  ``/usr``, ``/etc`` and ``/bin``, ``/sbin``, ``/lib*`` (which merged-``/usr`` systems
  make symlinks: those are reproduced as the same symlinks, the **links**);
- **revealed** directories, bound read-only likewise: the installation of each
  interpreter that lies outside the system directories (``~/.pyenv/versions/3.12``,
  ``/opt/node``) and the directories the application lists in ``readable_dirs``;
- **scratch** directories: ``/tmp``, ``/var/tmp``, ``/dev/shm`` and the world-writable
  directories one level below a few system directories and each ``readable_dirs`` entry,
  each a private, empty, size-limited tmpfs per run;
- **hidden** directories inside the bound trees (the application's data directories):
  an empty, read-only tmpfs;
- **masked** entries (:mod:`._masks`): what only the application's own uid or groups may
  read inside the bound trees, covered, so that a program running as an ordinary user
  sees the system as any other user does;
- a fresh ``/dev`` and ``/proc``, and the run's working directory.

Nothing else of the host is there: not ``/run``, ``/var/run``, ``/home``, ``/root``,
``/srv``, ``/mnt`` nor ``/sys``, so no host UNIX socket (Docker, D-Bus, X11, a database)
is even visible (the seccomp filter refuses to connect to one as well).

:func:`sandbox_executable` maps an interpreter the view would not show (a venv under
/tmp) to the real interpreter behind it (the sandbox runs Python with ``-I -S``, so the
venv adds nothing).
"""

from __future__ import annotations

import os
import pwd
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

#: Host directories every run sees, read-only (those missing here are skipped).
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
#: Private writable directories every run gets.
SCRATCH = ("/tmp", "/var/tmp", "/dev/shm")  # noqa: S108 - private per run is the point
#: Directories with the users' files: hidden wherever a bound tree contains them.
HIDDEN = ("/home", "/root", "/run/user")
#: Parents searched (one level deep) for world-writable directories inside bound trees.
_WORLD_WRITABLE_PARENTS = ("/usr/local", "/usr/local/share", "/usr/share", "/usr/lib", "/etc", "/opt", "/srv")
#: Never bound or replaced: the sandbox builds its own root, /dev and /proc.
_SPECIAL = ("/", "/dev", "/proc", "/sys")
#: Size of the private tmpfs for scratch directories other than /tmp, /var/tmp, /dev/shm.
SMALL_SCRATCH_MB = 4


@dataclass(frozen=True, slots=True)
class Layout:
    """The filesystem view of every run.

    Attributes:
        system: Host directories bound read-only at their own path.
        links: ``(path, target)`` symlinks made at the top of the view (``/bin`` ->
            ``usr/bin`` on merged-``/usr`` systems).
        scratch: ``(path, size_mb)`` of each private writable tmpfs (mode 1777).
        hidden: Paths inside bound trees replaced by an empty, read-only tmpfs.
        reveal: More host directories bound read-only at their own path (interpreter
            installations outside the system directories, ``readable_dirs``).
        masked: ``(path, is_dir)`` of entries inside bound trees that only the
            application's uid or groups may read: a directory is covered by an empty
            read-only tmpfs, a file by ``/dev/null`` on a ``nodev`` mount (unreadable).
    """

    system: tuple[str, ...]
    links: tuple[tuple[str, str], ...]
    scratch: tuple[tuple[str, int], ...]
    hidden: tuple[str, ...]
    reveal: tuple[str, ...]
    masked: tuple[tuple[str, bool], ...] = ()

    @property
    def trees(self) -> tuple[str, ...]:
        """Every host directory bound into the view (system and revealed)."""
        return (*self.system, *self.reveal)

    def mounts(self) -> list[tuple[str, str, int]]:
        """``(kind, path, size_mb)`` after the system binds, parents before what they contain.

        Kinds: ``bind`` (a revealed directory, read-only), ``scratch`` (a private tmpfs),
        ``cover`` (an empty read-only tmpfs: hidden, or a masked directory) and ``null``
        (a masked file, covered by an unreadable node).
        """
        found = [("bind", path, 0) for path in self.reveal]
        found += [("scratch", path, size_mb) for path, size_mb in self.scratch]
        found += [("cover", path, 1) for path in self.hidden]
        found += [("cover" if is_dir else "null", path, 1) for path, is_dir in self.masked]
        return sorted(found, key=lambda item: item[1].rstrip("/").count("/"))

    def present(self) -> Layout:
        """This layout without what has left the host since it was made (a world-writable
        or hidden directory, a masked file, a revealed directory removed meanwhile): inside
        a read-only bound tree nothing can be created to mount on. Paths outside the bound
        trees (``/tmp``, ``/var/tmp``) are made in the sandbox's own root and always stay."""

        def mountable(path: str) -> bool:
            inside = any(_inside(path, top) and path != top for top in self.trees)
            return os.path.lexists(path) or not inside

        return replace(
            self,
            scratch=tuple(item for item in self.scratch if mountable(item[0])),
            hidden=tuple(path for path in self.hidden if mountable(path)),
            reveal=tuple(path for path in self.reveal if os.path.isdir(path)),
            masked=tuple(item for item in self.masked if os.path.lexists(item[0])),
        )

    def shows(self, path: str) -> bool:
        """Whether the host file at ``path`` (symlinks resolved) is visible in the view: the
        innermost mount holding it is a bound host directory."""
        real = os.path.realpath(path)
        best, visible = -1, False
        candidates = [(top, True) for top in self.system]
        candidates += [(top, kind == "bind") for kind, top, _ in self.mounts()]
        for top, shown in candidates:
            depth = top.rstrip("/").count("/")
            if _inside(real, top) and depth >= best:
                best, visible = depth, shown
        return visible


def _inside(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip("/") + "/")


def _real_dirs(paths: Iterable[str]) -> list[str]:
    found: list[str] = []
    for path in paths:
        real = os.path.realpath(path)
        if real not in found and real not in _SPECIAL and os.path.isdir(real):
            found.append(real)
    return found


def system_tree(candidates: Sequence[str] = SYSTEM_DIRS) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """The directories to bind and the top-level symlinks to reproduce, from ``candidates``.

    A candidate that is a symlink (``/lib`` -> ``usr/lib``) becomes the same symlink when
    its target is bound anyway, else its target directory is bound at the candidate's path.
    """
    dirs: list[str] = []
    links: list[tuple[str, str]] = []
    for path in candidates:
        if os.path.islink(path):
            real = os.path.realpath(path)
            if os.path.isdir(real):
                links.append((path, os.readlink(path)))
                dirs.append(real)
        elif os.path.isdir(path):
            dirs.append(path)
    return tuple(_outermost(dirs)), tuple(links)


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


def build_layout(
    *, hidden_dirs: Iterable[str], disk_mb: int, home: str | None, readable_dirs: Iterable[str] = ()
) -> Layout:
    """The layout of the system directories plus ``readable_dirs``, hiding ``hidden_dirs``
    (and the users' homes) wherever the bound trees contain them; nothing masked yet."""
    system, links = system_tree()
    reveal = tuple(p for p in _outermost(_real_dirs(readable_dirs)) if not any(_inside(p, t) for t in system))
    bare = Layout(system=system, links=links, scratch=(), hidden=(), reveal=reveal)
    primary = {"/tmp", "/var/tmp", "/dev/shm"}  # noqa: S108
    found = [p for p in _real_dirs(world_writable_dirs([*_WORLD_WRITABLE_PARENTS, *reveal])) if bare.shows(p)]
    scratch = tuple(
        (p, disk_mb if p in primary else min(disk_mb, SMALL_SCRATCH_MB)) for p in _outermost([*SCRATCH, *found])
    )
    view = replace(bare, scratch=scratch)
    hidden = [p for p in _real_dirs([*HIDDEN, *([home] if home else []), *hidden_dirs]) if view.shows(p)]
    return replace(view, hidden=tuple(_outermost(hidden)))


def revealing(layout: Layout, executables: Iterable[str]) -> Layout:
    """``layout`` plus, read-only, the installation of each executable it would not show."""
    prefixes = [install_prefix(exe) for exe in executables if not layout.shows(exe)]
    reveal = tuple(p for p in _outermost([*layout.reveal, *prefixes]) if p not in _SPECIAL)
    return replace(layout, reveal=reveal)


def _others_can_reach(path: str) -> bool:
    try:
        return all(parent.stat().st_mode & stat.S_IXOTH for parent in Path(path).parents)
    except OSError:
        return False


def unreachable_by_others(layout: Layout) -> list[str]:
    """Bound trees other users can't even reach (as root the program runs as another uid,
    and bubblewrap, started as that uid, could not bind them)."""
    return [path for path in layout.trees if not _others_can_reach(path)]


def reachable_by_others(layout: Layout) -> Layout:
    """``layout`` without the directories other users can't even reach (as root the program
    runs as another uid, so those are out of its reach already, and bwrap, started as that
    uid, could not mount on them)."""
    return replace(
        layout,
        scratch=tuple(item for item in layout.scratch if _others_can_reach(item[0])),
        hidden=tuple(p for p in layout.hidden if _others_can_reach(p)),
        reveal=tuple(p for p in layout.reveal if _others_can_reach(p)),
    )


def install_prefix(executable: str) -> str:
    """The installation an executable belongs to: ``/x/bin/python3`` -> ``/x``."""
    real = Path(os.path.realpath(executable))
    parent = real.parent
    return str(parent.parent if parent.name in ("bin", "sbin") else parent)


def sandbox_executable(executable: str, *, layout: Layout | None = None) -> str:
    """The path the sandbox should run for ``executable``.

    A path the view shows is kept as it is (a multi-call binary such as busybox needs its
    name). A path it does not show (e.g. a venv under /tmp) is resolved to the real file
    behind its symlinks; a venv's interpreter copy (``--copies``) is mapped to the base
    interpreter named by ``pyvenv.cfg``. The installation of the result is revealed later
    (:func:`revealing`) when the view does not show it either.
    """
    if layout is not None and layout.shows(executable) and layout.shows(os.path.dirname(os.path.abspath(executable))):
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
