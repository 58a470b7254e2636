"""Sandbox launcher: isolate, limit, drop privileges, then exec the user's program.

Started by :class:`LocalSandbox` as ``python -I -S -c "...import _launcher; _launcher.main()"
CONFIG`` (imported, so its bytecode is cached; ``CONFIG`` is a dict, ``marshal``-ed and
hex-encoded, which needs no import). It is self-contained (stdlib only, no ``json``,
``typing`` or ``signal``: imports are most of its start-up time) and reports on the status
descriptor in ``key=value`` lines. Steps:

1. Try to enter new network, PID and mount namespaces (``unshare(2)``; as non-root inside
   a new user namespace that maps the caller's uid to itself). Whatever worked is reported
   as one set of lines on the status file descriptor.
2. With a PID namespace, fork: the child is PID 1 of the namespace and reaps; when the
   program exits, PID 1 exits and the kernel kills every process left in the namespace,
   including ones that left the process group with ``setsid``.
3. With a mount namespace, give /tmp, /var/tmp, /dev/shm and the working directory private,
   size-limited tmpfs mounts (and a /proc of the new PID namespace).
4. The program's process sets resource limits, drops to an unprivileged uid when the
   launcher runs as root, changes into the working directory and ``execve``\\ s the
   interpreter with the scrubbed environment.

The program's wait status is sent on the status descriptor (``wait_status=n``) when
it ran below a PID 1 of ours; otherwise the launcher *is* the program after ``execve``.
Doing this in a launcher process rather than ``preexec_fn`` keeps the parent thread-safe.
"""

from __future__ import annotations

# Start-up time matters here: ``typing`` and ``signal`` (which imports ``enum``) cost more
# than the rest of the launcher; use the C module and type-only imports instead.
import _signal as signal  # type: ignore[import-not-found,unused-ignore]
import ctypes
import marshal
import os
import resource
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
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


_LIBC = ctypes.CDLL(None, use_errno=True)
_LIBC.mount.argtypes = [ctypes.c_char_p] * 3 + [ctypes.c_ulong, ctypes.c_char_p]
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 2, 4, 8, 16384, 1 << 18
#: Directories any user may write to; each gets a private, size-limited tmpfs.
_SCRATCH = ("/tmp", "/var/tmp", "/dev/shm")  # noqa: S108 - hiding them is the point


def _report(status_fd: int, **items: object) -> None:
    """Write ``key=value`` lines (bools as 0/1, text on one line) to the status pipe."""
    lines = []
    for key, value in items.items():
        text = str(int(value)) if isinstance(value, bool) else str(value)
        lines.append(f"{key}={text.replace(chr(10), ' ')[:500]}\n")
    os.write(status_fd, "".join(lines).encode("utf-8", "replace"))


def _unshare(flags: int) -> bool:
    return int(_LIBC.unshare(flags)) == 0


def _mount(source: str, target: str, fstype: str | None, flags: int, data: str = "") -> None:
    result = _LIBC.mount(
        source.encode(), target.encode(), fstype.encode() if fstype else None, flags,
        data.encode() if data else None,
    )  # fmt: skip
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"mount {target}: {os.strerror(errno)}")


def _write_file(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _enter_namespaces(want: dict[str, bool]) -> dict[str, bool]:
    """Enter new net/pid/mount namespaces where the kernel allows; report what worked."""
    uid, gid = os.geteuid(), os.getegid()
    user_ns = 0 if uid == 0 else CLONE_NEWUSER
    bits = {"net": CLONE_NEWNET, "pid": CLONE_NEWPID, "fs": CLONE_NEWNS}
    wanted = [name for name in ("net", "pid", "fs") if want.get(name)]
    # Most isolation first; then give up the mount namespace, then the others.
    attempts = [wanted, [n for n in wanted if n != "fs"], *([n] for n in wanted), []]
    for names in attempts:
        flags = user_ns if names else 0
        for name in names:
            flags |= bits[name]
        if flags and not _unshare(flags):
            continue
        if flags and user_ns:
            try:
                _write_file("/proc/self/setgroups", "deny")
                _write_file("/proc/self/uid_map", f"{uid} {uid} 1")
                _write_file("/proc/self/gid_map", f"{gid} {gid} 1")
            except OSError:
                break
        return {name: name in names for name in bits}
    return dict.fromkeys(bits, False)


def _private_filesystem(config: dict[str, Any], *, new_proc: bool) -> None:
    """In a new mount namespace: size-limited private scratch dirs and working dir.

    The working dir (usually under /tmp) is recreated on the new tmpfs with the program
    file copied in, so nothing the program writes reaches the real disk and ``../``
    leads only to empty directories. With a PID namespace, /proc shows only its processes.
    """
    cwd, program = config["cwd"], config["argv"][-1]
    with open(program, "rb") as handle:
        source = handle.read()
    _mount("none", "/", None, MS_REC | MS_PRIVATE)
    tmpfs = MS_NOSUID | MS_NODEV
    size = f"size={int(config['disk_mb'])}m,mode=1777"
    for path in _SCRATCH:
        if os.path.isdir(path):
            _mount("tmpfs", path, "tmpfs", tmpfs, size)
    if os.path.isdir(cwd):
        _mount("tmpfs", cwd, "tmpfs", tmpfs, size)
    else:
        os.makedirs(cwd, mode=0o755)
    with open(program, "wb") as handle:
        handle.write(source)
    uid = config.get("uid")
    if uid is not None:
        for path in (cwd, program):
            os.chown(path, int(uid), int(config["gid"]))
    os.chmod(cwd, 0o700)
    if new_proc:
        _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)


def _setup_filesystem(config: dict[str, Any], isolation: dict[str, bool], status_fd: int) -> None:
    if not isolation["fs"]:
        return
    try:
        _private_filesystem(config, new_proc=isolation["pid"])
    except OSError as exc:
        isolation["fs"] = False
        _report(status_fd, fs=0, fs_error=str(exc))


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
        # Python ignores these and ignored signals survive execve: restore the defaults.
        for sig in (signal.SIGPIPE, signal.SIGXFSZ):
            signal.signal(sig, signal.SIG_DFL)
        os.execve(config["argv"][0], config["argv"], config["env"])  # noqa: S606 - no shell
    except BaseException as exc:  # report anything, the parent decides
        try:
            _report(status_fd, error=f"{type(exc).__name__}: {exc}")
        finally:
            os._exit(127)


def main() -> None:
    """Entry point: ``_launcher.py CONFIG``."""
    # The config comes from our own parent (argv), not from the program: marshal is safe.
    config: dict[str, Any] = marshal.loads(bytes.fromhex(sys.argv[1]))  # noqa: S302
    status_fd = int(config["status_fd"])
    os.set_inheritable(status_fd, False)
    wanted = {name: bool(config.get(f"isolate_{name}")) for name in ("net", "pid", "fs")}
    isolation = _enter_namespaces(wanted)
    if config.get("require_net") and not isolation["net"]:
        _report(status_fd, refused=1, **isolation)
        os._exit(126)
    _report(status_fd, **isolation)
    if not isolation["pid"]:
        _setup_filesystem(config, isolation, status_fd)
        _exec_program(config, status_fd)
    init = os.fork()  # the first child is PID 1 of the new namespace
    if init == 0:
        _setup_filesystem(config, isolation, status_fd)
        program = os.fork()
        if program == 0:
            _exec_program(config, status_fd)
        # PID 1 ignores its own fatal signals, so the wait status travels by the pipe.
        status = _wait_for(program, reap_all=True)
        _report(status_fd, wait_status=status)
        os._exit(0)
    os.close(status_fd)
    _exit_like(_wait_for(init, reap_all=False))


if __name__ == "__main__":
    main()
