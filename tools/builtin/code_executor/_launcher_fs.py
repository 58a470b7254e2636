"""The namespaces launcher's filesystem: an empty root holding an allow-list of the host.

Part of :mod:`_launcher` (stdlib only, imported as a top-level module by the launcher
process). Runs in the launcher's new mount namespace, before the program starts, and
builds the same view as bubblewrap (see :mod:`._layout`):

1. make every mount private; open an ``O_PATH`` descriptor on every host path that will
   be bound (nothing of the host is covered yet);
2. mount a tmpfs on ``/tmp`` as the new root (the *stage*), and in it: the system trees
   bound read-only, ``nosuid`` and ``nodev`` (``mount_setattr(2)`` with ``AT_RECURSIVE``,
   Linux 5.12+), the top-level symlinks, a minimal ``/dev`` (null, zero, full, random,
   urandom, tty bound from the host; the ``fd``/``std*`` links);
3. a private, size-limited tmpfs on each scratch directory (mode 1777); an empty tmpfs
   on each hidden and masked directory, an unreadable node on each masked file; the
   revealed directories bound read-only;
4. a private tmpfs working directory holding the program file, and the run's binds (a
   workspace copy read-write, ``python_path`` directories read-only);
5. a ``/proc`` of the new PID namespace; the root made read-only;
6. ``pivot_root`` into the stage and detach the host's root: nothing else of the host
   (``/run`` and its sockets, ``/home``, ``/sys``) is reachable any more.
"""

from __future__ import annotations

import ctypes
import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_LIBC = ctypes.CDLL(None, use_errno=True)
_LIBC.mount.argtypes = [ctypes.c_char_p] * 3 + [ctypes.c_ulong, ctypes.c_char_p]
_LIBC.syscall.restype = ctypes.c_long
_LIBC.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
_MOUNT_ATTR_RDONLY, _MOUNT_ATTR_NOSUID, _MOUNT_ATTR_NODEV = 0x1, 0x2, 0x4
_AT_FDCWD, _AT_RECURSIVE = -100, 0x8000
_MNT_DETACH = 2
_EROFS = 30
#: ``mount_setattr`` has the same number on every architecture (the unified table).
_NR_MOUNT_SETATTR = 442
#: ``pivot_root`` differs: the generic table (arm64, riscv64, loongarch64) and the others.
_NR_PIVOT_ROOT = {"x86_64": 155, "i686": 217, "i386": 217, "armv7l": 218, "armv8l": 218, "s390x": 217}
_NR_PIVOT_ROOT_GENERIC = 41
_NR_PIVOT_ROOT_PPC = 203
#: Where the new root is built (a directory every system has; covered only in this namespace).
STAGE = "/tmp"  # noqa: S108
_DEVICE_PATHS = tuple("/dev/" + name for name in ("null", "zero", "full", "random", "urandom", "tty"))
_DEV_LINKS = {
    "fd": "/proc/self/fd",
    "stdin": "/proc/self/fd/0",
    "stdout": "/proc/self/fd/1",
    "stderr": "/proc/self/fd/2",
}


class _MountAttr(ctypes.Structure):
    _fields_ = [
        ("attr_set", ctypes.c_uint64),
        ("attr_clr", ctypes.c_uint64),
        ("propagation", ctypes.c_uint64),
        ("userns_fd", ctypes.c_uint64),
    ]


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str = "") -> None:
    """``mount(2)``; raises OSError naming the target."""
    result = _LIBC.mount(
        source.encode() if source else None, target.encode(), fstype.encode() if fstype else None,
        flags, data.encode() if data else None,
    )  # fmt: skip
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"mount {target}: {os.strerror(errno)}")


def _set_attrs(path: str, *, read_only: bool, recursive: bool = False, nodev: bool = True) -> None:
    """Make the mount at ``path`` read-only (or writable), ``nosuid`` and (``nodev``) ``nodev``."""
    flags = _MOUNT_ATTR_NOSUID | (_MOUNT_ATTR_NODEV if nodev else 0)
    attr = _MountAttr(flags | (_MOUNT_ATTR_RDONLY if read_only else 0), 0 if read_only else _MOUNT_ATTR_RDONLY, 0, 0)
    where = _AT_RECURSIVE if recursive else 0
    if _LIBC.syscall(_NR_MOUNT_SETATTR, _AT_FDCWD, path.encode(), where, ctypes.byref(attr), ctypes.sizeof(attr)):
        errno = ctypes.get_errno()
        raise OSError(errno, f"mount attributes of {path} (mount_setattr): {os.strerror(errno)}")


def _tmpfs(path: str, size_mb: int, mode: str, flags: int = MS_NOSUID | MS_NODEV) -> None:
    os.makedirs(path, mode=0o755, exist_ok=True)
    mount("tmpfs", path, "tmpfs", flags, f"size={int(size_mb)}m,mode={mode}")


def _bind_from(fd: int, target: str, *, is_dir: bool) -> None:
    if is_dir:
        os.makedirs(target, mode=0o755, exist_ok=True)
    elif not os.path.lexists(target):
        os.makedirs(os.path.dirname(target), mode=0o755, exist_ok=True)
        os.close(os.open(target, os.O_WRONLY | os.O_CREAT, 0o644))
    # The O_PATH descriptor still names the original, wherever it is covered now.
    mount(f"/proc/self/fd/{fd}", target, None, MS_BIND | MS_REC)


def _bind_read_only(fd: int, target: str, *, is_dir: bool = True) -> None:
    _bind_from(fd, target, is_dir=is_dir)
    _set_attrs(target, read_only=True, recursive=True)


def _open_paths(paths: list[str]) -> dict[str, int]:
    opened = {}
    for path in paths:
        if path in opened:
            continue
        try:
            opened[path] = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            continue
    return opened


def _vanished(target: str, *, is_dir: bool) -> bool:
    """Whether a scratch, cover or mask target left the host after the layout was made
    (inside a read-only tree nothing can be created to mount on; nothing needs covering)."""
    if os.path.lexists(target):
        return False
    if not is_dir:
        return True
    try:
        os.makedirs(target, mode=0o755)
    except OSError as exc:
        if exc.errno == _EROFS:
            return True
        raise
    return False


def _minimal_dev(devices: dict[str, int]) -> None:
    _tmpfs(STAGE + "/dev", 1, "755", MS_NOSUID | MS_NOEXEC)
    for name, fd in devices.items():
        _bind_from(fd, STAGE + "/dev/" + os.path.basename(name), is_dir=False)
    for name, target in _DEV_LINKS.items():
        os.symlink(target, STAGE + "/dev/" + name)


def _binds(config: dict[str, Any], opened: dict[str, int]) -> None:
    for source, dest, writable in config.get("binds", ()):
        if source not in opened:
            raise OSError(2, f"bind {dest}: {source} could not be opened")
        _bind_from(opened[source], STAGE + dest, is_dir=True)
        _set_attrs(STAGE + dest, read_only=not writable)


def _working_dir(config: dict[str, Any], source: bytes) -> None:
    cwd, program = STAGE + config.get("workdir", config["cwd"]), STAGE + config["argv"][-1]
    _tmpfs(cwd, int(config["disk_mb"]), "700")
    with open(program, "wb") as handle:
        handle.write(source)
    uid = config.get("uid")
    if uid is not None:
        for path in (cwd, program):
            os.chown(path, int(uid), int(config["gid"]))


def own_proc(*, new_proc: bool) -> None:
    """Without filesystem isolation: only a ``/proc`` of the new PID namespace."""
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    if new_proc:
        mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)


def _pivot_number() -> int:
    machine = os.uname().machine
    if machine.startswith("ppc"):
        return _NR_PIVOT_ROOT_PPC
    return _NR_PIVOT_ROOT.get(machine, _NR_PIVOT_ROOT_GENERIC)


def _enter_stage() -> None:
    """Make the stage the root and detach the host's (``pivot_root(".", ".")``)."""
    os.chdir(STAGE)
    if _LIBC.syscall(_pivot_number(), b".", b".") != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"pivot_root: {os.strerror(errno)}")
    if _LIBC.umount2(b".", _MNT_DETACH) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"detaching the host's root: {os.strerror(errno)}")
    os.chdir("/")


def _populate(config: dict[str, Any], opened: dict[str, int], source: bytes, *, new_proc: bool) -> None:
    _tmpfs(STAGE, 1, "755")
    for path in config["system"]:
        _bind_read_only(opened[path], STAGE + path)
    for path, target in config["links"]:
        os.symlink(target, STAGE + path)
    _minimal_dev({name: opened[name] for name in _DEVICE_PATHS if name in opened})
    covered = []
    for kind, path, size_mb in config["mounts"]:
        if kind != "bind" and _vanished(STAGE + path, is_dir=kind != "null"):
            continue
        if kind == "bind":
            _bind_read_only(opened[path], STAGE + path)
        elif kind == "scratch":
            _tmpfs(STAGE + path, size_mb, "1777")
        elif kind == "cover":
            _tmpfs(STAGE + path, size_mb, "755")
            covered.append(path)
        else:  # a nodev bind of /dev/null: opening it is refused
            _bind_read_only(opened["/dev/null"], STAGE + path, is_dir=False)
    _working_dir(config, source)
    _binds(config, opened)
    for path in covered:  # last: the working dir may have been created inside one
        _set_attrs(STAGE + path, read_only=True)
    os.makedirs(STAGE + "/proc", mode=0o555, exist_ok=True)
    if new_proc:
        mount("proc", STAGE + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    else:  # no PID namespace (weaker isolation): the host's processes show anyway
        _bind_read_only(opened["/proc"], STAGE + "/proc")
    _set_attrs(STAGE, read_only=True, nodev=True)


def build(config: dict[str, Any], *, new_proc: bool) -> None:
    """Set up the sandbox's filesystem in the current (new) mount namespace and enter it.

    Raises:
        OSError: A step failed; the message names it. The caller decides whether the
            run may go on without it.
    """
    with open(config["argv"][-1], "rb") as handle:
        source = handle.read()
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    revealed = [path for kind, path, _ in config["mounts"] if kind == "bind"]
    wanted = [*config["system"], *revealed, *(src for src, _, _ in config.get("binds", ()))]
    opened = _open_paths([*wanted, *_DEVICE_PATHS, "/proc"])
    try:
        missing = [path for path in wanted if path not in opened]
        if missing:
            raise OSError(2, f"{missing[0]} could not be opened")
        _populate(config, opened, source, new_proc=new_proc)
    finally:
        for fd in opened.values():
            os.close(fd)
    _enter_stage()
