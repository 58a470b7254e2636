"""The namespaces launcher's filesystem: read-only host, private scratch, hidden dirs, /dev.

Part of :mod:`_launcher` (stdlib only, imported as a top-level module by the launcher
process). Runs in the launcher's new mount namespace, before the program starts:

1. make every mount private, then the whole tree read-only and ``nosuid``
   (``mount_setattr(2)`` with ``AT_RECURSIVE``, Linux 5.12+);
2. a minimal ``/dev`` (null, zero, full, random, urandom, tty bound from the host; the
   ``fd``/``std*`` links);
3. a private, size-limited tmpfs on each scratch directory (mode 1777);
4. an empty tmpfs on each hidden directory; interpreters installed below one are bound
   back (through an ``O_PATH`` descriptor opened before the directory was covered), then
   the tmpfs is made read-only;
5. a private tmpfs working directory holding the program file;
6. the run's binds (a workspace copy read-write, ``python_path`` directories read-only),
   through ``O_PATH`` descriptors opened before anything was covered;
7. a ``/proc`` of the new PID namespace.
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
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
_MOUNT_ATTR_RDONLY, _MOUNT_ATTR_NOSUID = 0x1, 0x2
_AT_FDCWD, _AT_RECURSIVE = -100, 0x8000
#: ``mount_setattr`` has the same number on every architecture (the unified table).
_NR_MOUNT_SETATTR = 442
_DEVICES = ("null", "zero", "full", "random", "urandom", "tty")
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


def _read_only_root() -> None:
    attr = _MountAttr(_MOUNT_ATTR_RDONLY | _MOUNT_ATTR_NOSUID, 0, 0, 0)
    size = ctypes.sizeof(attr)
    if _LIBC.syscall(_NR_MOUNT_SETATTR, _AT_FDCWD, b"/", _AT_RECURSIVE, ctypes.byref(attr), size) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"read-only host filesystem (mount_setattr): {os.strerror(errno)}")


def _tmpfs(path: str, size_mb: int, mode: str, flags: int = MS_NOSUID | MS_NODEV) -> None:
    os.makedirs(path, mode=0o755, exist_ok=True)
    mount("tmpfs", path, "tmpfs", flags, f"size={int(size_mb)}m,mode={mode}")


def _bind_from(fd: int, target: str, *, is_dir: bool) -> None:
    if is_dir:
        os.makedirs(target, mode=0o755, exist_ok=True)
    else:
        os.close(os.open(target, os.O_WRONLY | os.O_CREAT, 0o644))
    # The O_PATH descriptor still names the covered original.
    mount(f"/proc/self/fd/{fd}", target, None, MS_BIND | MS_REC)


def _open_paths(paths: list[str]) -> dict[str, int]:
    opened = {}
    for path in paths:
        try:
            opened[path] = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            continue
    return opened


def _minimal_dev(devices: dict[str, int]) -> None:
    _tmpfs("/dev", 1, "755", MS_NOSUID | MS_NOEXEC)
    for name, fd in devices.items():
        _bind_from(fd, "/dev/" + os.path.basename(name), is_dir=False)
    for name, target in _DEV_LINKS.items():
        os.symlink(target, "/dev/" + name)


def _set_writable(path: str, writable: bool) -> None:
    """Make the mount at ``path`` read-write or read-only, leaving its other flags."""
    flag = _MOUNT_ATTR_RDONLY
    attr = _MountAttr(0 if writable else flag, flag if writable else 0, 0, 0)
    if _LIBC.syscall(_NR_MOUNT_SETATTR, _AT_FDCWD, path.encode(), 0, ctypes.byref(attr), ctypes.sizeof(attr)) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"bind {path} (mount_setattr): {os.strerror(errno)}")


def _binds(config: dict[str, Any], opened: dict[str, int]) -> None:
    for source, dest, writable in config.get("binds", ()):
        if source not in opened:
            raise OSError(2, f"bind {dest}: {source} could not be opened")
        _bind_from(opened[source], dest, is_dir=True)
        _set_writable(dest, bool(writable))


def _working_dir(config: dict[str, Any], source: bytes) -> None:
    cwd, program = config.get("workdir", config["cwd"]), config["argv"][-1]
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


def build(config: dict[str, Any], *, new_proc: bool) -> None:
    """Set up the sandbox's filesystem in the current (new) mount namespace.

    Raises:
        OSError: A step failed; the message names it. The caller decides whether the
            run may go on without it.
    """
    with open(config["argv"][-1], "rb") as handle:
        source = handle.read()
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    reveal = _open_paths(list(config["reveal"]))
    bound = _open_paths([source for source, _, _ in config.get("binds", ())])
    devices = _open_paths(["/dev/" + name for name in _DEVICES])
    try:
        _read_only_root()
        _minimal_dev(devices)
        for path, size_mb in config["scratch"]:
            _tmpfs(path, size_mb, "1777")
        for path in config["hidden"]:
            _tmpfs(path, 1, "755")
        for path, fd in reveal.items():
            _bind_from(fd, path, is_dir=True)
        _working_dir(config, source)
        _binds(config, bound)
        for path in config["hidden"]:  # last: the working dir may have been created inside one
            mount(None, path, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
    finally:
        for fd in (*reveal.values(), *bound.values(), *devices.values()):
            os.close(fd)
    if new_proc:
        mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
