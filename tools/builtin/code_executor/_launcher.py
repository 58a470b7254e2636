"""The namespaces launcher: isolate, limit, drop privileges, then exec the user's program.

Used by :class:`LocalSandbox` when bubblewrap is not installed (or not usable). Started as
``python -I -S -c "...import _launcher; _launcher.main()" CONFIG`` (imported, so its
bytecode is cached; ``CONFIG`` is a dict, ``marshal``-ed and hex-encoded). It is
self-contained (stdlib only, no ``json``, ``typing`` or ``signal``: imports are most of
its start-up time) and reports on the status descriptor in ``key=value`` lines. Steps:

1. Enter new network, PID, IPC and mount namespaces (``unshare(2)``). Not root: inside a
   new user namespace that maps the caller's uid to itself. What worked is reported.
2. Fork PID 1 of the new PID namespace: it builds the filesystem (:mod:`_launcher_fs`),
   forks the program and reaps; when the program exits, PID 1 exits and the kernel kills
   every process left in the namespace.
3. Root: the program's process enters a user namespace of its own (PID 1, still root,
   writes its uid map) and becomes the sandbox uid inside it. Either way the program runs
   in a user namespace created for this run, which is what makes ``RLIMIT_NPROC`` a
   per-run cap: the kernel counts processes per (user namespace, uid).
4. The program's process sets its resource limits, ``PR_SET_NO_NEW_PRIVS`` and the
   seccomp filter, changes into the working directory and ``execve``\\ s the interpreter.

With ``strict`` set, a run where any of this did not hold is refused before the program
starts (``refused=1`` and the ``missing`` items are reported). The program's wait status
is sent as ``wait_status=n``. Doing this in a launcher process rather than
``preexec_fn`` keeps the parent thread-safe.
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

    from tools.builtin.code_executor import _launcher_fs as filesystem
else:
    import _launcher_fs as filesystem

CLONE_NEWNS = 0x00020000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 38, 22, 2
_PR_SET_PDEATHSIG = 1

_RLIMITS = {
    "cpu": resource.RLIMIT_CPU,
    "as": resource.RLIMIT_AS,
    "fsize": resource.RLIMIT_FSIZE,
    "nproc": resource.RLIMIT_NPROC,
    "nofile": resource.RLIMIT_NOFILE,
    "core": resource.RLIMIT_CORE,
}

_LIBC = ctypes.CDLL(None, use_errno=True)
_LIBC.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def _report(status_fd: int, **items: object) -> None:
    """Write ``key=value`` lines (bools as 0/1, text on one line) to the status pipe."""
    lines = []
    for key, value in items.items():
        text = str(int(value)) if isinstance(value, bool) else str(value)
        lines.append(f"{key}={text.replace(chr(10), ' ')[:500]}\n")
    os.write(status_fd, "".join(lines).encode("utf-8", "replace"))


def _die_with_parent(parent: int | None = None, alive_fd: int | None = None) -> None:
    """SIGKILL this process when its parent (the thread that started it) ends, like
    bubblewrap's ``--die-with-parent``; exit now if it already has.

    Whether it has: ``getppid()`` is still ``parent``, or, in a new PID namespace (where
    the parent is not visible), ``alive_fd`` (a pipe the parent holds open) is not at EOF.
    """
    _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, None, 0, 0)
    gone = parent is not None and os.getppid() != parent
    if alive_fd is not None:
        os.set_blocking(alive_fd, False)
        try:  # noqa: SIM105 - no contextlib import: start-up time matters here
            gone = gone or os.read(alive_fd, 1) == b""
        except BlockingIOError:
            pass
        os.close(alive_fd)
    if gone:
        os._exit(137)


def _errno_text() -> str:
    return os.strerror(ctypes.get_errno())


def _write_file(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _map_ids(pid: str, uid: int, gid: int, *, deny_setgroups: bool) -> None:
    if deny_setgroups:
        _write_file(f"/proc/{pid}/setgroups", "deny")
    _write_file(f"/proc/{pid}/uid_map", f"{uid} {uid} 1")
    _write_file(f"/proc/{pid}/gid_map", f"{gid} {gid} 1")


def _enter_namespaces(want: dict[str, bool], *, root: bool) -> dict[str, Any]:
    """Enter new net/pid/mount namespaces (not root: in a new user namespace); report."""
    user_ns = 0 if root else CLONE_NEWUSER
    # Our ids from before the unshare: inside a new, unmapped user namespace geteuid() is the
    # overflow id (65534), which only the real uid 65534 could map.
    uid, gid = os.geteuid(), os.getegid()
    bits = {"net": CLONE_NEWNET, "pid": CLONE_NEWPID | CLONE_NEWIPC, "fs": CLONE_NEWNS}
    wanted = [name for name in ("net", "pid", "fs") if want.get(name)]
    # Most isolation first; then give up the mount namespace, then the others.
    attempts = [wanted, [n for n in wanted if n != "fs"], *([n] for n in wanted), []]
    error = ""
    for names in attempts:
        flags = user_ns if names else 0
        for name in names:
            flags |= bits[name]
        if flags and int(_LIBC.unshare(flags)) != 0:
            error = error or _errno_text()
            continue
        userns = bool(flags and user_ns)
        if userns:
            try:
                _map_ids("self", uid, gid, deny_setgroups=True)
            except OSError as exc:
                return {"net": False, "pid": False, "fs": False, "userns": False, "ns_error": str(exc)}
        found: dict[str, Any] = {name: name in names for name in bits}
        found["userns"] = userns
        if error:
            found["ns_error"] = error
        return found
    return {"net": False, "pid": False, "fs": False, "userns": False, "ns_error": error}


def _own_user_namespace(sync: tuple[int, int]) -> bool:
    """Root's program process: a new user namespace, mapped by PID 1 (``sync`` pipes)."""
    ready_w, go_r = sync
    entered = int(_LIBC.unshare(CLONE_NEWUSER)) == 0
    os.write(ready_w, b"1" if entered else b"0")
    return entered and os.read(go_r, 1) == b"1"


def _map_child(pid: int, config: dict[str, Any], sync: tuple[int, int]) -> None:
    """PID 1 (root): write the uid/gid map of the program's new user namespace."""
    ready_r, go_w = sync
    ok = os.read(ready_r, 1) == b"1"
    if ok:
        try:
            _map_ids(str(pid), int(config["uid"]), int(config["gid"]), deny_setgroups=False)
        except OSError:
            ok = False
    os.write(go_w, b"1" if ok else b"0")


def _seccomp(program: bytes) -> None:
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = _SockFprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    if _LIBC.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.addressof(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), f"seccomp: {_errno_text()}")


def _limit_and_drop(config: dict[str, Any], *, per_run_userns: bool, root: bool) -> None:
    for key, value in config["rlimits"].items():
        if key == "nproc" and not per_run_userns:
            continue  # outside a per-run user namespace the count is shared: not a per-run cap
        # CPU: the soft limit sends SIGXCPU (a clear cause), the hard one SIGKILL.
        hard = int(value) + 1 if key == "cpu" else int(value)
        resource.setrlimit(_RLIMITS[key], (int(value), hard))
    uid = config.get("uid")
    # ``root``: how the launcher started. In the program's own user namespace root is
    # unmapped (geteuid() shows the overflow uid), yet it is still uid 0 to the kernel.
    if uid is not None and root:
        uid, gid = int(uid), int(config["gid"])
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)
        if os.getresuid() != (uid, uid, uid) or os.getresgid() != (gid, gid, gid):
            raise OSError(f"could not become uid {uid}")


def _exec_program(config: dict[str, Any], status_fd: int, held: dict[str, Any], sync: Any, *, root: bool) -> None:
    """In the program's process: own user ns (root), limits, privileges, filter, exec."""
    try:
        os.umask(0o077)
        per_run = bool(held["userns"])
        if sync is not None:
            per_run = _own_user_namespace(sync)
            _report(status_fd, userns=per_run)
        if config["strict"] and not per_run:
            _report(status_fd, refused=1, missing="a user namespace of its own (per-run process cap)")
            os._exit(126)
        _limit_and_drop(config, per_run_userns=per_run, root=root)
        os.chdir(config["cwd"])
        # Python ignores these and ignored signals survive execve: restore the defaults.
        for sig in (signal.SIGPIPE, signal.SIGXFSZ):
            signal.signal(sig, signal.SIG_DFL)
        nnp = _LIBC.prctl(_PR_SET_NO_NEW_PRIVS, 1, None, 0, 0) == 0
        filtered = False
        if config["seccomp"] and nnp:
            _seccomp(config["seccomp"])
            filtered = True
        _report(status_fd, nnp=nnp, seccomp=filtered)
        os.execve(config["argv"][0], config["argv"], config["env"])  # noqa: S606 - no shell
    except BaseException as exc:  # report anything, the parent decides
        try:
            _report(status_fd, error=f"{type(exc).__name__}: {exc}")
        finally:
            os._exit(127)


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


def _init(config: dict[str, Any], status_fd: int, held: dict[str, Any], *, root: bool, alive_fd: int) -> None:
    """PID 1 (or the parent, without a PID namespace): filesystem, program, reaping."""
    _die_with_parent(alive_fd=alive_fd)  # then the kernel ends the whole PID namespace with it
    new_proc = False
    if held["fs"]:
        try:
            if config["isolate_fs"]:
                filesystem.build(config, new_proc=held["pid"])
            else:
                filesystem.own_proc(new_proc=held["pid"])
            new_proc = held["pid"]
        except OSError as exc:
            held["fs"] = False
            _report(status_fd, fs=0, fs_error=str(exc))
    if config["isolate_fs"] and not held["fs"] and config["strict"]:
        _report(status_fd, refused=1, missing="a private, read-only filesystem")
        os._exit(126)
    # Root maps the program's own user namespace through /proc/<pid>: only sound when
    # /proc shows this PID namespace (or there is none).
    sync = map_pipes = None
    if root and config.get("uid") is not None and (new_proc or not held["pid"]):
        ready_r, ready_w = os.pipe()
        go_r, go_w = os.pipe()
        sync, map_pipes = (ready_w, go_r), (ready_r, go_w)
    program = os.fork()
    if program == 0:
        _exec_program(config, status_fd, held, sync, root=root)
    if map_pipes is not None:
        _map_child(program, config, map_pipes)
    status = _wait_for(program, reap_all=held["pid"])
    _report(status_fd, wait_status=status)
    os._exit(0)


def main() -> None:
    """Entry point: ``_launcher.py CONFIG``."""
    # The config comes from our own parent (argv), not from the program: marshal is safe.
    config: dict[str, Any] = marshal.loads(bytes.fromhex(sys.argv[1]))  # noqa: S302
    status_fd = int(config["status_fd"])
    os.set_inheritable(status_fd, False)
    _die_with_parent(parent=int(config["parent"]))
    root = os.geteuid() == 0
    wanted = {"net": config["isolate_net"], "pid": True, "fs": True}
    held = _enter_namespaces(wanted, root=root)
    _report(status_fd, **held)
    missing = [name for name, want in (("net", config["isolate_net"]), ("pid", True)) if want and not held[name]]
    if not root and not held["userns"]:
        missing.append("userns")
    if config["isolate_fs"] and not held["fs"]:
        missing.append("fs")
    if (config["strict"] and missing) or (config["require_net"] and not held["net"]):
        _report(status_fd, refused=1, missing=",".join(missing) or "net")
        os._exit(126)
    alive_r, alive_w = os.pipe()  # EOF for PID 1 once this process is gone
    init = os.fork()  # with a PID namespace, the first child is its PID 1
    if init == 0:
        os.close(alive_w)
        _init(config, status_fd, held, root=root, alive_fd=alive_r)
    os.close(alive_r)
    os.close(status_fd)
    _exit_like(_wait_for(init, reap_all=False))


if __name__ == "__main__":
    main()
