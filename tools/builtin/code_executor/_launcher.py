"""Sandbox launcher: isolate, limit, drop privileges, then exec the user's program.

Run as ``python -I -S _launcher.py CONFIG_JSON`` by :class:`LocalSandbox`, never imported
by the parent. It is self-contained (stdlib only) so it starts fast and doesn't depend on
``sys.path``. Steps:

1. Try to enter new network and PID namespaces (``unshare(2)``; as non-root inside a new
   user namespace that maps the caller's uid to itself). Whatever worked is reported as one
   JSON line on the status file descriptor.
2. With a PID namespace, fork: the child is PID 1 of the namespace and reaps; when the
   program exits, PID 1 exits and the kernel kills every process left in the namespace,
   including ones that left the process group with ``setsid``.
3. The program's process sets resource limits, drops to an unprivileged uid when the
   launcher runs as root, changes into the working directory and ``execve``\\ s the
   interpreter with the scrubbed environment.

The program's wait status is sent on the status descriptor (``{"wait_status": n}``) when
it ran below a PID 1 of ours; otherwise the launcher *is* the program after ``execve``.
Doing this in a launcher process rather than ``preexec_fn`` keeps the parent thread-safe.
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import signal
import sys
from typing import Any

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000

_RLIMITS = {
    "cpu": resource.RLIMIT_CPU,
    "as": resource.RLIMIT_AS,
    "fsize": resource.RLIMIT_FSIZE,
    "nproc": resource.RLIMIT_NPROC,
    "nofile": resource.RLIMIT_NOFILE,
    "core": resource.RLIMIT_CORE,
}


def _unshare(flags: int) -> bool:
    libc = ctypes.CDLL(None, use_errno=True)
    return int(libc.unshare(flags)) == 0


def _write_file(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _enter_namespaces(want_net: bool, want_pid: bool) -> dict[str, bool]:
    """Enter new net/pid namespaces where the kernel allows; report what worked."""
    uid, gid = os.geteuid(), os.getegid()
    user_ns = 0 if uid == 0 else CLONE_NEWUSER
    attempts: list[tuple[bool, bool]] = []
    if want_net and want_pid:
        attempts.append((True, True))
    if want_net:
        attempts.append((True, False))
    if want_pid:
        attempts.append((False, True))
    for net, pid in attempts:
        flags = user_ns | (CLONE_NEWNET if net else 0) | (CLONE_NEWPID if pid else 0)
        if not _unshare(flags):
            continue
        if user_ns:
            try:
                _write_file("/proc/self/setgroups", "deny")
                _write_file("/proc/self/uid_map", f"{uid} {uid} 1")
                _write_file("/proc/self/gid_map", f"{gid} {gid} 1")
            except OSError:
                return {"net": False, "pid": False}
        return {"net": net, "pid": pid}
    return {"net": False, "pid": False}


def _exit_like(status: int) -> None:
    """Exit the way a child with wait ``status`` did (re-raise its signal)."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            signal.signal(sig, signal.SIG_DFL)
            os.kill(os.getpid(), sig)
        except (OSError, ValueError):
            pass
        os._exit(128 + sig)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def _wait_for(pid: int, *, reap_all: bool) -> int:
    """Wait for ``pid``; as PID 1 of a namespace also reap orphans meanwhile."""
    while True:
        try:
            done, status = os.waitpid(-1 if reap_all else pid, 0)
        except ChildProcessError:
            return 1 << 8
        except InterruptedError:
            continue
        if done == pid:
            return status


def _exec_program(config: dict[str, Any], status_fd: int) -> None:
    """In the program's process: limits, privileges, cwd, exec. Never returns."""
    try:
        os.umask(0o077)
        for key, value in config["rlimits"].items():
            # CPU: the soft limit sends SIGXCPU (a clear cause), the hard one SIGKILL.
            hard = int(value) + 1 if key == "cpu" else int(value)
            resource.setrlimit(_RLIMITS[key], (int(value), hard))
        uid = config.get("uid")
        if uid is not None and os.geteuid() == 0:
            os.setgroups([])
            os.setgid(int(config["gid"]))
            os.setuid(int(uid))
        os.chdir(config["cwd"])
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        os.execve(config["argv"][0], config["argv"], config["env"])  # noqa: S606 - no shell
    except BaseException as exc:  # report anything, the parent decides
        try:
            os.write(
                status_fd, (json.dumps({"error": f"{type(exc).__name__}: {exc}"}) + "\n").encode()
            )
        finally:
            os._exit(127)


def main() -> None:
    """Entry point: ``_launcher.py CONFIG_JSON``."""
    config: dict[str, Any] = json.loads(sys.argv[1])
    status_fd = int(config["status_fd"])
    os.set_inheritable(status_fd, False)
    isolation = _enter_namespaces(bool(config.get("isolate_net")), bool(config.get("isolate_pid")))
    if config.get("require_net") and not isolation["net"]:
        isolation["refused"] = True
        os.write(status_fd, (json.dumps(isolation) + "\n").encode())
        os._exit(126)
    os.write(status_fd, (json.dumps(isolation) + "\n").encode())
    if not isolation["pid"]:
        _exec_program(config, status_fd)
    init = os.fork()  # the first child is PID 1 of the new namespace
    if init == 0:
        program = os.fork()
        if program == 0:
            _exec_program(config, status_fd)
        # PID 1 ignores its own fatal signals, so the wait status travels by the pipe.
        status = _wait_for(program, reap_all=True)
        os.write(status_fd, (json.dumps({"wait_status": status}) + "\n").encode())
        os._exit(0)
    os.close(status_fd)
    _exit_like(_wait_for(init, reap_all=False))


if __name__ == "__main__":
    main()
