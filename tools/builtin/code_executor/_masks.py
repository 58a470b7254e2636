"""Entries of the system trees that only the application's own uid or groups may read.

As root, the sandbox runs programs as ``sandbox_uid`` with no supplementary groups. An
ordinary user can't drop them: in a user namespace it may create, ``setgroups(2)`` is
refused (the kernel requires ``setgroups=deny`` before an unprivileged gid map), and the
groups keep granting access to files. So a user in ``docker``, ``shadow`` or ``ssl-cert``
would hand what those groups may read to the program. The sandbox therefore covers every
entry of the bound system trees that others may not read but this uid or one of its
groups may (a directory by an empty read-only tmpfs, a file by an unreadable node): the
program sees the system as any other user does. The sockets those groups guard (Docker's,
D-Bus) are not in the view at all, and ``connect`` is refused anyway (:mod:`._seccomp`).

The scan runs once per sandbox, at its first run, with ``find`` (``findutils``) when it is
installed, else a Python walk; it stops at directories others can't enter.
"""

from __future__ import annotations

import logging
import os
import shutil
import stat
import subprocess
from collections.abc import Iterable, Sequence

logger = logging.getLogger(__name__)

_SEARCH_PATH = "/usr/local/bin:/usr/bin:/bin"
#: A tree whose scan takes longer is left as it is (logged): the scan is a courtesy on
#: top of the seccomp filter and the allow-list, not worth blocking every run.
SCAN_TIMEOUT_S = 120.0


def _restricted(mode: int) -> bool:
    """Others may not read this entry (a directory: not list or not enter)."""
    need = stat.S_IROTH | stat.S_IXOTH if stat.S_ISDIR(mode) else stat.S_IROTH
    return mode & need != need


def _ours(info: os.stat_result, uid: int, gids: frozenset[int]) -> bool:
    return info.st_uid == uid or info.st_gid in gids


def _find_argv(find: str, trees: Sequence[str], uid: int, gids: frozenset[int]) -> list[str]:
    ours = ["(", "-user", str(uid)]
    for gid in sorted(gids):
        ours += ["-o", "-group", str(gid)]
    ours.append(")")
    closed_dir = ["-type", "d", "!", "-perm", "-o=rx"]
    closed_file = ["!", "-type", "d", "!", "-type", "l", "!", "-perm", "-o=r"]
    return [
        find, *trees, "-mindepth", "1",
        "(", *closed_dir, *ours, "-prune", "-print0", ")", "-o",
        "(", *closed_dir, "-prune", ")", "-o",
        "(", *closed_file, *ours, "-print0", ")",
    ]  # fmt: skip


def _walk(trees: Sequence[str], uid: int, gids: frozenset[int]) -> list[str]:
    found: list[str] = []
    stack = list(trees)
    while stack:
        directory = stack.pop()
        try:
            entries = os.scandir(directory)
        except OSError:
            continue
        with entries:
            for entry in entries:
                try:
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISLNK(info.st_mode):
                    continue
                closed = _restricted(info.st_mode)
                if closed and _ours(info, uid, gids):
                    found.append(entry.path)
                elif stat.S_ISDIR(info.st_mode) and not closed:
                    stack.append(entry.path)
    return found


def _listed(trees: Sequence[str], uid: int, gids: frozenset[int]) -> list[str]:
    find = shutil.which("find", path=_SEARCH_PATH)
    if find is None:
        return _walk(trees, uid, gids)
    argv = _find_argv(find, trees, uid, gids)
    try:
        done = subprocess.run(
            argv, capture_output=True, timeout=SCAN_TIMEOUT_S, check=False, env={"LC_ALL": "C"}, cwd="/"
        )
    except (OSError, subprocess.SubprocessError) as exc:
        logger.warning("sandbox: scanning %s with find failed (%s); walking it instead", trees, exc)
        return _walk(trees, uid, gids)
    # find exits 1 after "Permission denied" on directories it can't read: those are out
    # of the program's reach too, and what it printed is complete.
    return [item.decode("utf-8", "surrogateescape") for item in done.stdout.split(b"\0") if item]


def masked_entries(
    trees: Iterable[str], *, uid: int, gids: Iterable[int], skip: Iterable[str] = ()
) -> tuple[tuple[str, bool], ...]:
    """``(path, is_dir)`` of every entry below ``trees`` that others may not read and that
    ``uid`` or one of ``gids`` may (directories not descended into), outside ``skip``."""
    tops = [t for t in dict.fromkeys(trees) if os.path.isdir(t)]
    if not tops:
        return ()
    groups = frozenset(gids)
    covered = tuple(p.rstrip("/") + "/" for p in skip)
    masked: list[tuple[str, bool]] = []
    for path in _listed(tops, uid, groups):
        if any((path + "/").startswith(c) for c in covered):
            continue
        try:
            info = os.lstat(path)
        except OSError:
            continue
        masked.append((path, stat.S_ISDIR(info.st_mode)))
    return tuple(sorted(masked))


def current_credentials() -> tuple[int, frozenset[int]]:
    """This process's effective uid and every group it holds (primary and supplementary)."""
    return os.geteuid(), frozenset([os.getegid(), *os.getgroups()])
