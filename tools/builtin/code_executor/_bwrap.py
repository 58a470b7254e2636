"""The bubblewrap launcher: the command line for one run, and a probe that it works here.

bubblewrap (``bwrap``, >= 0.8) builds the sandbox in C, with no Python start-up: new user
(one per run, nested once more with ``--disable-userns`` so the program can't create
another), PID, network, IPC, UTS and cgroup namespaces; an empty root holding the
:class:`Layout`'s host directories bound read-only, ``nosuid`` and ``nodev`` (not the whole
host: no ``/run``, no ``/home``), a fresh ``/dev`` and ``/proc`` and the layout's tmpfs
mounts, then made read-only; ``PR_SET_NO_NEW_PRIVS`` (always); the seccomp program from an
inherited descriptor; and it dies with its parent. The program is started through util-linux
``prlimit``, which sets the resource limits *inside* the per-run user namespace: set
before bwrap creates it, ``RLIMIT_NPROC`` would count every process of the uid on the
machine again (and the parent can't set limits on the sandbox's processes when they run
as another uid without ``CAP_SYS_RESOURCE``).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping, Sequence
from typing import Any

from tools.builtin.code_executor._layout import Layout

_MIB = 1024 * 1024
#: What every bwrap run unshares; ``--unshare-user`` is implied when not setuid, but explicit
#: is needed for ``--disable-userns``.
_NAMESPACES = ("--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent")


def prlimit_argv(prlimit: str, rlimits: Mapping[str, int]) -> list[str]:
    """``prlimit --cpu=S:S+1 --as=... -- `` for ``rlimits`` (the launcher's key names)."""
    argv = [prlimit]
    for key, value in rlimits.items():
        if key == "cpu":  # the soft limit sends SIGXCPU (a clear cause), the hard one SIGKILL
            argv.append(f"--cpu={int(value)}:{int(value) + 1}")
        else:
            argv.append(f"--{key}={int(value)}")
    return [*argv, "--"]


def _filesystem(layout: Layout, workdir: list[str]) -> list[str]:
    """An empty root (bwrap's own tmpfs), the allow-listed host trees bound read-only, the
    private and hidden directories, the working dir; then the root is made read-only."""
    args: list[str] = []
    for path in layout.system:
        args += ["--ro-bind", path, path]
    for path, target in layout.links:
        args += ["--symlink", target, path]
    args += ["--dev", "/dev", "--proc", "/proc"]
    covered: list[str] = []
    for kind, path, size_mb in layout.mounts():
        if kind == "bind":
            args += ["--ro-bind", path, path]
        elif kind == "scratch":
            args += ["--size", str(size_mb * _MIB), "--perms", "1777", "--tmpfs", path]
        elif kind == "cover":
            args += ["--size", str(size_mb * _MIB), "--perms", "0755", "--tmpfs", path]
            covered.append(path)
        else:  # a nodev bind of a device node: opening it is refused
            args += ["--ro-bind", "/dev/null", path]
    args += workdir
    for path in covered:  # last: the working dir may have been created inside one
        args += ["--remount-ro", path]
    return [*args, "--remount-ro", "/"]


def bwrap_argv(
    bwrap: str,
    *,
    command: Sequence[str],
    cwd: str,
    layout: Layout,
    disk_mb: int,
    program_fd: int,
    status_fd: int,
    seccomp_fd: int | None,
    isolate_network: bool,
    isolate_filesystem: bool,
    binds: Sequence[tuple[str, str, bool]] = (),
    chdir: str | None = None,
) -> list[str]:
    """The bwrap command line for one run.

    Args:
        bwrap: The bwrap executable.
        command: What runs inside (``prlimit ... -- interpreter ... program``); its last
            item is the program file, placed in ``cwd`` from ``program_fd``.
        cwd: The working directory (a private tmpfs of ``disk_mb``).
        layout: Hidden, scratch and revealed directories.
        disk_mb: Size of each private tmpfs.
        program_fd: An inherited descriptor to read the program file from.
        status_fd: An inherited descriptor for bwrap's JSON status (child pid, exit code).
        seccomp_fd: An inherited descriptor holding the compiled seccomp program, or None.
        isolate_network: Unshare the network (else ``--share-net``).
        isolate_filesystem: Build the private, read-only view (else the host is bound
            read-write and the program runs in the host working directory).
        binds: ``(host path, sandbox path, writable)`` mounts added after the working
            directory (a workspace copy, ``python_path`` directories). As root bwrap
            runs as the sandbox uid, which must be able to reach each host path.
        chdir: The program's working directory (default ``cwd``).
    """
    argv = [bwrap, *_NAMESPACES]
    if not isolate_network:
        argv.append("--share-net")
    if isolate_filesystem:
        workdir = ["--size", str(disk_mb * _MIB), "--perms", "0700", "--tmpfs", cwd]
        workdir += ["--perms", "0600", "--file", str(program_fd), command[-1]]
        for source, dest, writable in binds:
            workdir += ["--bind" if writable else "--ro-bind", source, dest]
        argv += _filesystem(layout, workdir)
    else:
        argv += ["--bind", "/", "/", "--dev-bind", "/dev", "/dev", "--proc", "/proc"]
    argv += ["--chdir", chdir or cwd, "--json-status-fd", str(status_fd)]
    if seccomp_fd is not None:
        argv += ["--seccomp", str(seccomp_fd)]
    return [*argv, "--", *command]


def probe_argv(bwrap: str, prlimit: str, true: str, *, layout: Layout, isolate_network: bool) -> list[str]:
    """A bwrap run with every namespace and mount of a real run, running ``true``."""
    argv = [bwrap, *_NAMESPACES, *([] if isolate_network else ["--share-net"])]
    argv += _filesystem(layout, [])
    return [*argv, "--", prlimit, "--nproc=16", "--", true]


def probe(argv: list[str], *, user: int | None, timeout: float = 20.0) -> str | None:
    """Run :func:`probe_argv`'s command; None when it worked, else why it did not."""
    extra: dict[str, Any] = {}
    if user is not None:
        extra = {"user": user, "group": user, "extra_groups": []}
    try:
        done = subprocess.run(
            argv, capture_output=True, timeout=timeout, check=False, cwd="/", env={"LANG": "C.UTF-8"}, **extra
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"{type(exc).__name__}: {exc}"
    if done.returncode == 0:
        return None
    lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
    return lines[-1][:300] if lines else f"exit status {done.returncode}"


def parse_status(raw: bytes) -> dict[str, Any]:
    """bwrap's ``--json-status-fd`` output (one JSON document per line), merged."""
    merged: dict[str, Any] = {}
    for line in raw.decode("utf-8", "replace").splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, dict):
            merged.update(item)
    return merged
