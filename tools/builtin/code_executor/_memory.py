"""The memory limit of one run, all its processes together: a cgroup, or a divided budget.

``SandboxLimits.memory_mb`` bounds a whole run, not each process (a program that forks
twenty children, each allocating a bit under a per-process limit, must not multiply it).
Two ways, the first that this host allows:

- **cgroup** (cgroup v2 with the ``memory`` and ``pids`` controllers delegated to this
  process): each run gets a cgroup of its own under a delegated parent, with
  ``memory.max`` = the budget, ``memory.swap.max`` = 0 and ``pids.max`` = the process cap;
  the kernel accounts every page of every process of the run against it. Each process
  also keeps an address-space limit of the whole budget, so one large allocation is a
  ``MemoryError`` rather than the OOM killer.
- **address-space** (no delegated cgroup, e.g. cgroup v1 hosts and most CI): the budget is
  divided over the run's process cap: each process gets ``RLIMIT_AS`` = budget / cap, and
  ``RLIMIT_NPROC`` (per run, see ``docs/compute.md``) bounds how many there are, so their
  sum can't exceed the budget. The kernel counts threads against ``RLIMIT_NPROC`` too, so
  the cap bounds processes and threads together. A process needs some address space to
  do anything useful (:data:`MIN_PROCESS_MB`: Python with its standard library, pydantic
  or pytest): when the share would be smaller, the run gets fewer processes of that size
  instead. V8 reserves gigabytes of address space up front, so node runs in this mode
  with :data:`NODE_FLAGS` (no JIT, no WebAssembly, no V8 worker threads), which fit in
  :data:`NODE_PROCESS_MB`.

The result's ``isolation`` says which held (``memory_mode``) and the figures.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import time
from dataclasses import dataclass

logger = logging.getLogger(__name__)

#: Address space a process needs to start and do small work, in MiB.
MIN_PROCESS_MB = 64
#: node's share in address-space mode (with :data:`NODE_FLAGS`), and its address-space limit
#: in cgroup mode (where V8 may reserve as it likes: the cgroup counts what it uses).
NODE_PROCESS_MB = 256
NODE_RESERVE_MB = 2048
NODE_FLAGS = ("--jitless", "--no-expose-wasm", "--v8-pool-size=0")
#: Processes the sandbox itself runs inside a run's process count (its PID 1).
_OWN_PROCESSES = 1
_MIB = 1024 * 1024
_CGROUP_FS = "cgroup2"


@dataclass(frozen=True, slots=True)
class MemoryPlan:
    """How one run's memory is bounded.

    Attributes:
        mode: ``"cgroup"`` or ``"address-space"``.
        budget_mb: The run's memory, all processes together.
        process_mb: The address-space limit of each process.
        processes: The run's process cap (``RLIMIT_NPROC`` inside its user namespace).
        flags: Interpreter options that make the language fit its share (node in
            address-space mode), put right after the interpreter.
    """

    mode: str
    budget_mb: int
    process_mb: int
    processes: int
    flags: tuple[str, ...] = ()


class BudgetTooSmallError(ValueError):
    """The budget can't give even two processes what the language needs to start."""


def plan_memory(budget_mb: int, max_processes: int, language: str, *, cgroup: bool) -> MemoryPlan:
    """The :class:`MemoryPlan` of a run in ``language``.

    Raises:
        BudgetTooSmallError: address-space mode, and the budget is below twice what one
            process of ``language`` needs (the message names both figures).
    """
    node = language == "node"
    if cgroup:
        return MemoryPlan("cgroup", budget_mb, max(budget_mb, NODE_RESERVE_MB if node else 0), max_processes)
    need = NODE_PROCESS_MB if node else MIN_PROCESS_MB
    share = max(need, budget_mb // max_processes)
    processes = min(max_processes, budget_mb // share)
    if processes < _OWN_PROCESSES + 1:
        msg = (
            f"a {language} process needs {need} MiB of address space and this host gives no cgroup to "
            f"share the run's {budget_mb} MiB between processes"
        )
        raise BudgetTooSmallError(msg)
    return MemoryPlan("address-space", budget_mb, share, processes, NODE_FLAGS if node else ())


def _cgroup2_mount(mountinfo: str) -> str | None:
    for line in mountinfo.splitlines():
        left, sep, right = line.partition(" - ")
        if sep and right.split(" ", 1)[0] == _CGROUP_FS:
            return left.split(" ")[4]
    return None


def own_cgroup(proc: str = "/proc/self") -> str | None:
    """This process's cgroup v2 directory, or None (no unified hierarchy mounted)."""
    try:
        with open(f"{proc}/cgroup", encoding="utf-8") as handle:
            lines = handle.read().splitlines()
        with open(f"{proc}/mountinfo", encoding="utf-8") as handle:
            mount = _cgroup2_mount(handle.read())
    except OSError:
        return None
    relative = next((line[3:] for line in lines if line.startswith("0::")), None)
    if mount is None or relative is None:
        return None
    return os.path.join(mount, relative.lstrip("/"))


def _words(path: str) -> set[str]:
    try:
        with open(path, encoding="ascii") as handle:
            return set(handle.read().split())
    except OSError:
        return set()


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="ascii") as handle:
        handle.write(text)


class CgroupParent:
    """A delegated cgroup v2 directory in which each run gets a cgroup of its own.

    Args:
        path: The directory; its ``cgroup.subtree_control`` must enable (or allow this
            process to enable) ``memory`` and ``pids``, and it must hold no process.
    """

    def __init__(self, path: str) -> None:
        self.path = path

    @classmethod
    def detect(cls, path: str | None) -> tuple[CgroupParent | None, str]:
        """The parent at ``path`` (``None``: this process's own cgroup, delegated to it)
        when usable, else ``(None, why not)``."""
        if path is None:
            mine = own_cgroup()
            if mine is None:
                return None, "no cgroup v2 hierarchy is mounted"
            return cls._adopt(mine)
        return cls._ready(path)

    @classmethod
    def _ready(cls, path: str) -> tuple[CgroupParent | None, str]:
        wanted = {"memory", "pids"}
        if not wanted <= _words(os.path.join(path, "cgroup.controllers")):
            return None, f"the memory and pids controllers are not available in {path}"
        if not wanted <= _words(os.path.join(path, "cgroup.subtree_control")):
            try:
                _write(os.path.join(path, "cgroup.subtree_control"), "+memory +pids")
            except OSError as exc:
                return None, f"can't enable the memory controller below {path} ({exc.strerror})"
        if not os.access(path, os.W_OK | os.X_OK):
            return None, f"{path} is not writable by this user"
        return cls(path), f"cgroup v2 under {path}"

    @classmethod
    def _adopt(cls, mine: str) -> tuple[CgroupParent | None, str]:
        """Use this process's own cgroup when it is delegated to it: move this process
        into a leaf (a cgroup with processes can't enable controllers for children)."""
        if not {"memory", "pids"} <= _words(os.path.join(mine, "cgroup.controllers")):
            return None, "this process's cgroup has no memory controller (cgroup v1, or not delegated)"
        if not os.access(os.path.join(mine, "cgroup.procs"), os.W_OK):
            return None, f"this process's cgroup {mine} is not delegated to it"
        members = _words(os.path.join(mine, "cgroup.procs"))
        if members - {str(os.getpid())}:
            return None, f"this process shares its cgroup {mine} with other processes"
        if members:
            leaf = os.path.join(mine, "tooldeck-host")
            try:
                os.makedirs(leaf, exist_ok=True)
                _write(os.path.join(leaf, "cgroup.procs"), "0")
            except OSError as exc:
                return None, f"can't move this process into {leaf} ({exc.strerror})"
            logger.info("sandbox: moved this process into %s to give each run a cgroup", leaf)
        return cls._ready(mine)

    def create(self, name: str, plan: MemoryPlan) -> str:
        """A new run cgroup bounded by ``plan``; its path.

        Raises:
            OSError: it could not be created or bounded (nothing is left behind).
        """
        path = os.path.join(self.path, name)
        os.mkdir(path)
        try:
            _write(os.path.join(path, "memory.max"), str(plan.budget_mb * _MIB))
            with contextlib.suppress(FileNotFoundError):  # no swap accounting on this kernel
                _write(os.path.join(path, "memory.swap.max"), "0")
            _write(os.path.join(path, "pids.max"), str(plan.processes))
        except OSError:
            self.remove(path)
            raise
        return path

    @staticmethod
    def remove(path: str, timeout: float = 5.0) -> None:
        """Kill what is left in the run cgroup ``path`` and remove it."""
        with contextlib.suppress(OSError):
            _write(os.path.join(path, "cgroup.kill"), "1")  # Linux >= 5.14
        deadline = time.monotonic() + timeout
        while True:
            try:
                os.rmdir(path)
                return
            except FileNotFoundError:
                return
            except OSError as exc:
                if exc.errno != errno.EBUSY or time.monotonic() >= deadline:
                    logger.warning("sandbox: could not remove the run cgroup %s (%s)", path, exc.strerror)
                    return
            time.sleep(0.01)


def enter_argv(cgroup: str) -> list[str]:
    """An argv prefix that moves the process into ``cgroup`` before it execs the rest
    (everything it starts is then accounted there from its first page)."""
    script = 'echo 0 > "$1" && shift && exec "$@"'
    return ["/bin/sh", "-c", script, "sh", os.path.join(cgroup, "cgroup.procs")]
