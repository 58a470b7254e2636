"""The sandbox's seccomp filter, compiled to classic BPF with libseccomp.

:func:`compile_filter` builds the program once per :class:`LocalSandbox` with the system's
``libseccomp.so.2`` (through :mod:`ctypes`; Debian's ``libseccomp2``, installed almost
everywhere because systemd and util-linux use it) and returns the raw ``struct
sock_filter`` array. Both launchers load those bytes: bubblewrap through ``--seccomp FD``,
the namespaces launcher with ``prctl(PR_SET_SECCOMP)``. libseccomp resolves syscall
numbers for the machine's architecture and rejects other ABIs (32-bit ``int 0x80``
calls, x32) with a kill, so the filter can't be bypassed through a compat entry point.

Denied (``EPERM`` unless noted): debugging other processes (``ptrace``,
``process_vm_*``), the kernel keyring, ``bpf``, ``userfaultfd``, ``perf_event_open``,
every mount call (old and new API), ``unshare``/``setns`` and ``clone`` with
``CLONE_NEWUSER``, ``kexec_*``, file handles (``open_by_handle_at``), module loading,
swap, reboot, accounting, quotas, the kernel log, port I/O; ``clone3`` and ``io_uring``
answer ``ENOSYS`` (their arguments can't be inspected; libc and libuv fall back to
``clone`` and plain I/O). Everything else is allowed.

**No side door through a host socket.** With the network isolated, ``socket`` for any
family but ``AF_UNIX`` answers ``EAFNOSUPPORT``, so every socket is a UNIX socket and
``connect`` is refused (``EPERM``) outright: the program can't reach a host UNIX socket
(Docker, D-Bus, a database), by path or abstract name. ``AF_UNIX`` datagram sockets
(``SOCK_DGRAM``, and ``SOCK_RAW``, which the kernel makes a datagram socket) are refused
too, from ``socket`` and ``socketpair``: they can ``sendto``/``sendmsg`` a path without
connecting, and ``sendmsg``'s address can't be inspected by a filter. Stream and
seqpacket sockets can't send to an address they are not connected to, so
``socketpair(AF_UNIX, SOCK_STREAM)`` (pipes between processes, ``multiprocessing``) and
``bind``/``listen`` keep working. Without network isolation (``allow_network``),
``connect`` must work for TCP, so ``socket(AF_UNIX, ...)`` is refused altogether instead.
A program that talks only over the pipes it was given (a module worker) gets
``deny_sockets``: ``socket`` of every family and ``connect`` are refused, whatever the
network setting.
"""

from __future__ import annotations

import ctypes
import errno
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager

logger = logging.getLogger(__name__)

_ALLOW = 0x7FFF0000
_CMP_NE = 1
_CMP_EQ = 4
_CMP_MASKED_EQ = 7
_CLONE_NEWUSER = 0x10000000
_AF_UNIX = 1
#: ``type & SOCK_TYPE_MASK`` values that make an ``AF_UNIX`` datagram socket.
_SOCK_TYPE_MASK = 0xF
_UNIX_DATAGRAM_TYPES = (2, 3)  # SOCK_DGRAM, SOCK_RAW

DENIED = (
    "ptrace", "process_vm_readv", "process_vm_writev",
    "keyctl", "add_key", "request_key",
    "bpf", "userfaultfd", "perf_event_open",
    "mount", "umount", "umount2", "pivot_root", "chroot",
    "move_mount", "open_tree", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
    "unshare", "setns",
    "kexec_load", "kexec_file_load",
    "open_by_handle_at", "name_to_handle_at",
    "init_module", "finit_module", "delete_module",
    "reboot", "swapon", "swapoff", "acct", "quotactl", "syslog",
    "iopl", "ioperm", "lookup_dcookie", "uselib", "vhangup",
)  # fmt: skip
NOT_IMPLEMENTED = ("clone3", "io_uring_setup", "io_uring_enter", "io_uring_register")


class _ArgCmp(ctypes.Structure):
    _fields_ = [
        ("arg", ctypes.c_uint),
        ("op", ctypes.c_int),
        ("datum_a", ctypes.c_uint64),
        ("datum_b", ctypes.c_uint64),
    ]


def _errno_action(number: int) -> int:
    return 0x00050000 | (number & 0xFFFF)


class SeccompUnavailableError(Exception):
    """The filter can't be built here; the message says why."""


def _load() -> ctypes.CDLL:
    try:
        lib = ctypes.CDLL("libseccomp.so.2", use_errno=True)
    except OSError as exc:
        msg = "libseccomp.so.2 is not installed (Debian/Ubuntu: apt-get install libseccomp2)"
        raise SeccompUnavailableError(msg) from exc
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_rule_add_array.argtypes = [
        ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint, ctypes.POINTER(_ArgCmp),
    ]  # fmt: skip
    lib.seccomp_export_bpf.argtypes = [ctypes.c_void_p, ctypes.c_int]
    return lib


@contextmanager
def _context(lib: ctypes.CDLL) -> Iterator[int]:
    ctx = lib.seccomp_init(_ALLOW)
    if not ctx:
        msg = "seccomp_init failed"
        raise SeccompUnavailableError(msg)
    try:
        yield ctx
    finally:
        lib.seccomp_release(ctx)


def _rule(lib: ctypes.CDLL, ctx: int, action: int, name: str, *conditions: tuple[int, int, int, int]) -> None:
    number = lib.seccomp_syscall_resolve_name(name.encode())
    if number < 0:  # not a system call on this architecture (iopl on arm64, ...)
        return
    array = (_ArgCmp * max(1, len(conditions)))(*(_ArgCmp(*c) for c in conditions))
    result = lib.seccomp_rule_add_array(ctx, action, number, len(conditions), array)
    if result != 0:
        msg = f"seccomp_rule_add({name}) failed: {os.strerror(-result)}"
        raise SeccompUnavailableError(msg)


def _export(lib: ctypes.CDLL, ctx: int) -> bytes:
    read_fd, write_fd = os.pipe()
    try:
        result = lib.seccomp_export_bpf(ctx, write_fd)
        os.close(write_fd)
        write_fd = -1
        if result != 0:
            msg = f"seccomp_export_bpf failed: {os.strerror(-result)}"
            raise SeccompUnavailableError(msg)
        chunks = []
        while chunk := os.read(read_fd, 65_536):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(read_fd)
        if write_fd >= 0:
            os.close(write_fd)


def _socket_rules(lib: ctypes.CDLL, ctx: int, *, allow_network: bool, deny_sockets: bool) -> None:
    deny = _errno_action(errno.EPERM)
    for sock_type in _UNIX_DATAGRAM_TYPES:
        datagram = (1, _CMP_MASKED_EQ, _SOCK_TYPE_MASK, sock_type)
        _rule(lib, ctx, deny, "socketpair", (0, _CMP_EQ, _AF_UNIX, 0), datagram)
        if not allow_network and not deny_sockets:
            _rule(lib, ctx, deny, "socket", (0, _CMP_EQ, _AF_UNIX, 0), datagram)
    if deny_sockets:
        _rule(lib, ctx, deny, "socket")
        _rule(lib, ctx, deny, "connect")
    elif allow_network:
        _rule(lib, ctx, deny, "socket", (0, _CMP_EQ, _AF_UNIX, 0))
    else:
        _rule(lib, ctx, _errno_action(errno.EAFNOSUPPORT), "socket", (0, _CMP_NE, _AF_UNIX, 0))
        _rule(lib, ctx, deny, "connect")


def compile_filter(*, allow_network: bool = False, deny_sockets: bool = False) -> bytes:
    """The filter as a ``struct sock_filter`` array (8 bytes per instruction).

    Args:
        allow_network: Leave ``socket`` and ``connect`` to other families alone (for a
            sandbox that shares the host's network on purpose; ``AF_UNIX`` sockets are
            refused then); otherwise only ``AF_UNIX`` stream sockets can be created and
            ``connect`` is refused.
        deny_sockets: No ``socket`` of any family, ``AF_UNIX`` included, and no
            ``connect`` (for a program that talks only over the pipes it was given, such
            as a module worker); overrides ``allow_network``.

    Raises:
        SeccompUnavailableError: libseccomp is missing or refused a rule.
    """
    lib = _load()
    with _context(lib) as ctx:
        for name in DENIED:
            _rule(lib, ctx, _errno_action(errno.EPERM), name)
        for name in NOT_IMPLEMENTED:
            _rule(lib, ctx, _errno_action(errno.ENOSYS), name)
        _rule(lib, ctx, _errno_action(errno.EPERM), "clone", (0, _CMP_MASKED_EQ, _CLONE_NEWUSER, _CLONE_NEWUSER))
        _socket_rules(lib, ctx, allow_network=allow_network, deny_sockets=deny_sockets)
        program = _export(lib, ctx)
    if not program or len(program) % 8:
        msg = f"libseccomp exported a malformed program ({len(program)} bytes)"
        raise SeccompUnavailableError(msg)
    return program
