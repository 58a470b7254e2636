"""Workspaces: copy a host directory in, let the program change the copy, sync changes back.

Copy-in/copy-out works the same whether the application runs as root (the program runs as
an unprivileged uid that could not read a 0700 directory nor write root's files) or as an
ordinary user:

1. :func:`stage` copies the workspace into ``<workdir>/workspace`` on the host, through
   directory descriptors opened with ``O_NOFOLLOW`` (a symlink in the workspace is copied
   as a symlink, never followed), skipping sockets, FIFOs and devices, owned by the
   sandbox uid, within a byte and file-count cap. It returns a :class:`Snapshot`.
2. The launcher binds the copy as the program's working directory (read-write).
3. With ``writable=True``, :func:`sync_back` compares the copy with the snapshot (size,
   mtime and ctime: a program can't set ctime) and writes what was created, changed or
   deleted back to the host directory: every path is opened component by component with
   ``O_NOFOLLOW`` from the workspace root's descriptor (``tools._openat``), so no
   symlink, whether in the host workspace or made by the program, can make the sync write
   outside it; files are replaced atomically (temporary file + rename); symlinks the
   program made are synced last, and only when relative and resolving inside the
   workspace in the host's real tree (its links and the ones being synced followed, not a
   lexical ``normpath``); a host file changed by someone else during the run is left
   alone (a conflict, reported).

Stdlib only: the sandbox tests import this package without its dependencies.
"""

from __future__ import annotations

import contextlib
import errno
import os
import posixpath
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field

from tools import _openat
from tools.errors import InvalidArgumentsError

_DIR_FLAGS = _openat.DIR_FLAGS
_CHUNK = 1 << 20
_MIB = 1024 * 1024
#: The name of the workspace copy inside the run's working directory.
STAGE_NAME = "workspace"


class WorkspaceTooLargeError(InvalidArgumentsError):
    """The workspace (or what the program left in it) is over the sandbox's caps."""


@dataclass(frozen=True, slots=True)
class Entry:
    """One path of a workspace: ``kind`` ``f`` (file), ``d`` (directory) or ``l`` (symlink)."""

    kind: str
    size: int = 0
    mtime_ns: int = 0
    ctime_ns: int = 0
    mode: int = 0
    target: str = ""


@dataclass
class Snapshot:
    """The staged copy as the program found it, and the host's files as they were copied.

    Attributes:
        root: The host workspace (resolved).
        stage: The host path of the copy.
        staged: Relative path -> entry of the copy, taken after staging.
        host: Relative path -> entry of the host file it was copied from (conflict check).
    """

    root: str
    stage: str
    staged: dict[str, Entry] = field(default_factory=dict)
    host: dict[str, Entry] = field(default_factory=dict)


@dataclass
class _Budget:
    max_bytes: int
    max_files: int
    what: str
    files: int = 0
    size: int = 0

    def add(self, path: str, size: int) -> None:
        self.files += 1
        self.size += size
        if self.files > self.max_files:
            raise WorkspaceTooLargeError(
                f"{self.what} has more than {self.max_files} files (at {path!r}); use a smaller "
                "workspace or raise SandboxLimits.workspace_files"
            )
        if self.size > self.max_bytes:
            raise WorkspaceTooLargeError(
                f"{self.what} is larger than {self.max_bytes // _MIB} MiB (at {path!r}); use a smaller "
                "workspace or raise SandboxLimits.workspace_mb"
            )


def _entry(info: os.stat_result, target: str = "") -> Entry:
    mode = info.st_mode
    kind = "l" if stat.S_ISLNK(mode) else "d" if stat.S_ISDIR(mode) else "f"
    size = info.st_size if kind == "f" else 0
    return Entry(kind, size, info.st_mtime_ns, info.st_ctime_ns, stat.S_IMODE(mode), target)


def _walk(dir_fd: int, prefix: str, budget: _Budget) -> Iterator[tuple[str, str, int, os.stat_result]]:
    """``(relative path, name, parent fd, lstat)`` of every file, directory and symlink
    below ``dir_fd``, parents before children; other kinds are skipped. A directory that
    can't be opened is an error: a partial scan would read as deletions."""
    for rel, name, parent_fd, info in _openat.walk(dir_fd, prefix, strict=True):
        mode = info.st_mode
        if stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode):
            budget.add(rel, info.st_size if stat.S_ISREG(mode) else 0)
            yield rel, name, parent_fd, info


def _copy_file(src_dir: int, name: str, dst_dir: int, dst_name: str, mode: int) -> None:
    src = os.open(name, _openat.READ_FLAGS, dir_fd=src_dir)
    try:
        if not stat.S_ISREG(os.fstat(src).st_mode):  # swapped for something else meanwhile
            raise OSError(errno.EINVAL, f"{name} is no longer a regular file")
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        dst = os.open(dst_name, flags, 0o600, dir_fd=dst_dir)
        try:
            while chunk := os.read(src, _CHUNK):
                os.write(dst, chunk)
            os.fchmod(dst, mode & 0o777)
        finally:
            os.close(dst)
    finally:
        os.close(src)


def stage(
    workspace: str | os.PathLike[str], workdir: str, *, uid: int | None, max_bytes: int, max_files: int
) -> Snapshot:
    """Copy ``workspace`` to ``<workdir>/workspace``, owned by ``uid`` (None: unchanged).

    Raises:
        InvalidArgumentsError: ``workspace`` is not a directory.
        WorkspaceTooLargeError: it is over ``max_bytes`` or ``max_files``.
        OSError: it could not be read or the copy written.
    """
    root = os.path.realpath(os.fspath(workspace))
    if not os.path.isdir(root):
        raise InvalidArgumentsError(
            f"workspace {os.fspath(workspace)!r} is not a directory; pass an existing directory"
        )
    target = os.path.join(workdir, STAGE_NAME)
    os.mkdir(target, 0o700)
    snapshot = Snapshot(root=root, stage=target)
    budget = _Budget(max_bytes, max_files, f"workspace {root!r}")
    src_root = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    current: list[tuple[str, int]] = []  # the destination directory last written to
    try:
        for rel, name, parent_fd, info in _walk(src_root, "", budget):
            parent = posixpath.dirname(rel)
            if not current or current[0][0] != parent:
                if current:
                    os.close(current.pop()[1])
                current.append((parent, os.open(os.path.join(target, parent), _DIR_FLAGS)))
            dst_parent = current[0][1]
            kind = _entry(info).kind
            if kind == "d":
                os.mkdir(name, 0o700, dir_fd=dst_parent)
                os.chmod(name, stat.S_IMODE(info.st_mode) | 0o700, dir_fd=dst_parent)  # just made: ours
            elif kind == "l":
                link = os.readlink(name, dir_fd=parent_fd)
                os.symlink(link, name, dir_fd=dst_parent)
                snapshot.host[rel] = _entry(info, link)
            else:
                _copy_file(parent_fd, name, dst_parent, name, stat.S_IMODE(info.st_mode) | 0o600)
                snapshot.host[rel] = _entry(info)
            if uid is not None:
                os.chown(name, uid, uid, dir_fd=dst_parent, follow_symlinks=False)
        if uid is not None:
            os.chown(target, uid, uid)
        snapshot.staged = scan(target, max_bytes=max_bytes, max_files=max_files, what="the staged workspace")
    finally:
        for _, fd in current:
            os.close(fd)
        os.close(src_root)
    return snapshot


def scan(path: str, *, max_bytes: int, max_files: int, what: str) -> dict[str, Entry]:
    """Relative path -> :class:`Entry` of everything below ``path`` (symlinks not followed).

    Raises:
        WorkspaceTooLargeError: over ``max_bytes`` or ``max_files``.
    """
    out: dict[str, Entry] = {}
    fd = os.open(path, _DIR_FLAGS)
    try:
        for rel, name, parent_fd, info in _walk(fd, "", _Budget(max_bytes, max_files, what)):
            target = os.readlink(name, dir_fd=parent_fd) if stat.S_ISLNK(info.st_mode) else ""
            out[rel] = _entry(info, target)
    finally:
        os.close(fd)
    return out


@dataclass
class SyncReport:
    """What :func:`sync_back` did: paths written, deleted, and skipped with the reason."""

    written: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)


class _Host:
    """The host workspace, opened from its root: every path component without following."""

    def __init__(self, root: str) -> None:
        self.fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)

    def close(self) -> None:
        os.close(self.fd)

    @contextlib.contextmanager
    def parent(self, rel: str, *, create: bool) -> Iterator[int]:
        """The descriptor of ``rel``'s parent directory (created when ``create``).

        Raises:
            OSError: a component is a symlink (``ELOOP``/``ENOTDIR``) or missing.
        """
        fd = _openat.open_dir(self.fd, rel.split("/")[:-1], create=create)
        try:
            yield fd
        finally:
            os.close(fd)


def _unchanged(info: os.stat_result | None, before: Entry | None) -> bool:
    """Whether the host path still is what was copied (None/None: still absent)."""
    if before is None:
        return info is None
    if info is None:
        return False
    now = _entry(info)
    return (now.kind, now.size, now.mtime_ns) == (before.kind, before.size, before.mtime_ns)


def _write_file(stage_fd: int, rel: str, dir_fd: int, name: str, mode: int) -> None:
    tmp = f".{name}.tooldeck-sync-{os.urandom(4).hex()}"
    src_parent = _openat.open_dir(stage_fd, _openat.components(posixpath.dirname(rel)))
    try:
        _copy_file(src_parent, name, dir_fd, tmp, mode)
    finally:
        os.close(src_parent)
    try:
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise


def _inside(host: _Host, rel: str, target: str, links: dict[str, str]) -> bool:
    """Whether a symlink at ``rel`` pointing to ``target`` stays inside the workspace,
    resolved against the host's real tree (its symlinks followed, ``links`` about to be
    made counted), not lexically: ``a -> .`` makes ``b -> a/../x`` point outside."""
    if not target or target.startswith("/"):
        return False
    return _openat.stays_beneath(host.fd, [*rel.split("/")[:-1], *target.split("/")], links=links)


def sync_back(snapshot: Snapshot, *, max_bytes: int, max_files: int) -> SyncReport:
    """Write the program's changes to the copy back to the host workspace.

    Raises:
        WorkspaceTooLargeError: the program left more than the caps allow (nothing synced).
        OSError: the host workspace can't be opened.
    """
    after = scan(
        snapshot.stage, max_bytes=max_bytes, max_files=max_files, what="what the program left in the workspace"
    )
    before = snapshot.staged
    report = SyncReport()
    host = _Host(snapshot.root)
    stage_fd = os.open(snapshot.stage, _DIR_FLAGS)
    try:
        gone = [rel for rel in before if rel not in after or after[rel].kind != before[rel].kind]
        for rel in sorted(gone, key=lambda r: r.count("/"), reverse=True):
            _delete(host, rel, snapshot, report)
        links = {rel: entry.target for rel, entry in after.items() if entry.kind == "l"}
        for rel, entry in sorted(after.items(), key=lambda item: item[1].kind == "l"):  # links last
            old = before.get(rel)
            if old is not None and old.kind == entry.kind and _same(old, entry):
                continue
            _apply(host, stage_fd, rel, entry, snapshot, report, links)
    finally:
        os.close(stage_fd)
        host.close()
    return report


def _same(old: Entry, new: Entry) -> bool:
    if new.kind == "d":
        return True
    if new.kind == "l":
        return old.target == new.target
    return (old.size, old.mtime_ns, old.ctime_ns, old.mode) == (new.size, new.mtime_ns, new.ctime_ns, new.mode)


def _delete(host: _Host, rel: str, snapshot: Snapshot, report: SyncReport) -> None:
    name = posixpath.basename(rel)
    try:
        with host.parent(rel, create=False) as dir_fd:
            info = _openat.lstat_at(dir_fd, name)
            if info is None:
                return
            if stat.S_ISDIR(info.st_mode):
                try:
                    os.rmdir(name, dir_fd=dir_fd)
                except OSError:
                    report.skipped.append((rel, "directory not empty on the host; left in place"))
                    return
            elif not _unchanged(info, snapshot.host.get(rel)):
                report.skipped.append((rel, "changed on the host during the run; not deleted"))
                return
            else:
                os.unlink(name, dir_fd=dir_fd)
            report.deleted.append(rel)
    except OSError as exc:
        report.skipped.append((rel, _why(exc)))


def _apply(  # noqa: PLR0917 - one private step of sync_back
    host: _Host, stage_fd: int, rel: str, entry: Entry, snapshot: Snapshot, report: SyncReport, links: dict[str, str]
) -> None:
    name = posixpath.basename(rel)
    if entry.kind == "l" and not _inside(host, rel, entry.target, links):
        report.skipped.append((rel, f"symlink to {entry.target!r} leaves the workspace; not synced"))
        return
    try:
        with host.parent(rel, create=True) as dir_fd:
            info = _openat.lstat_at(dir_fd, name)
            if info is not None and stat.S_ISDIR(info.st_mode):
                if entry.kind != "d":
                    report.skipped.append((rel, "a directory on the host; not replaced"))
                return
            if entry.kind == "d":
                if info is not None:
                    report.skipped.append((rel, "a file on the host where the program made a directory"))
                    return
                os.mkdir(name, 0o755, dir_fd=dir_fd)
            else:
                if not _unchanged(info, snapshot.host.get(rel)):
                    report.skipped.append((rel, "changed on the host during the run; not overwritten"))
                    return
                if entry.kind == "l":
                    if info is not None:
                        os.unlink(name, dir_fd=dir_fd)
                    os.symlink(entry.target, name, dir_fd=dir_fd)
                else:
                    _write_file(stage_fd, rel, dir_fd, name, entry.mode & 0o777)
            report.written.append(rel)
    except OSError as exc:
        report.skipped.append((rel, _why(exc)))


def _why(exc: OSError) -> str:
    if exc.errno in (errno.ELOOP, errno.ENOTDIR):
        return "a path component is a symlink or not a directory on the host; not synced"
    return f"{type(exc).__name__}: {exc.strerror or exc}"
