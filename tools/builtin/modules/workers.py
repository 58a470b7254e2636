"""Module workers in the code sandbox: :class:`SandboxWorkerLauncher` and :func:`sandboxed_workers`.

``shared.modules`` supervises module workers but cannot start them in a sandbox (the
sandbox is in the tool layer, and ``shared`` does not import it). This module is the
bridge the composition roots use:

- :class:`SandboxWorkerLauncher` starts each worker with
  :func:`~tools.builtin.code_executor.persistent.start_process`: bubblewrap or the
  namespaces launcher, as root (the worker runs as ``nobody``) and as an ordinary user;
  no network, no ``socket()`` at all, a read-only view of the host with the home
  directories, ``/tmp`` and the application's data directories hidden, a scrubbed
  environment, resource limits;
- :func:`sandboxed_workers` wires that launcher, a :class:`~.egress.PolicyEgress` (the web
  tool's address policy) and the limits into a ``shared.modules.ModuleWorkers``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from shared.modules import ModuleEgress, ModuleWorkers, WorkerLimits, WorkerStartError
from tools.builtin.code_executor import LocalSandbox, SandboxLimits
from tools.builtin.code_executor.local import LauncherChoice
from tools.builtin.code_executor.persistent import SandboxedProcess, start_process
from tools.builtin.modules.egress import PolicyEgress
from tools.builtin.web.address import AddressPolicy
from tools.errors import ToolError

__all__ = ["WORKER_SANDBOX_LIMITS", "SandboxWorkerLauncher", "sandboxed_workers"]

#: The sandbox limits of a module worker: a long-lived process, so a generous CPU budget
#: over its life (past it the worker is killed and restarted), few processes and files.
#: Memory is per worker, all its processes together (2 GiB). Without a delegated cgroup
#: the budget is divided over the process cap: 5 processes (threads count, and so do the
#: launcher's own; the worker uses 3 or 4 of them) of about 400 MiB of address space each,
#: room for Python, pydantic, the protocol's largest frame and a thread of the module's.
WORKER_SANDBOX_LIMITS = SandboxLimits(
    timeout_seconds=60.0,
    cpu_seconds=3600,
    memory_mb=2048,
    file_size_mb=8,
    max_processes=5,
    max_open_files=64,
    disk_mb=16,
)


class SandboxWorkerLauncher:
    """Starts module workers in a :class:`LocalSandbox` (a ``shared.modules.WorkerLauncher``).

    Workers are started, and restarted, from one dedicated thread that lives as long as
    the launcher: both sandbox launchers die with the thread that started them
    (bubblewrap's ``--die-with-parent``, ``PR_SET_PDEATHSIG`` in the namespaces launcher),
    and the caller's threads (a request handler, a pool thread) may come and go.

    Args:
        sandbox: The sandbox; the launcher owns it (:meth:`close` closes it).
    """

    def __init__(self, sandbox: LocalSandbox) -> None:
        self.sandbox = sandbox
        self._spawner = ThreadPoolExecutor(max_workers=1, thread_name_prefix="module-worker-start")

    def __repr__(self) -> str:
        return f"SandboxWorkerLauncher({self.sandbox!r})"

    def launch(self, *, program: str, python_path: Sequence[str]) -> SandboxedProcess:
        """Start ``program`` in the sandbox with ``python_path`` bound read-only.

        Raises:
            WorkerStartError: The sandbox can't start it here (the message says why).
        """
        try:
            return self._spawner.submit(start_process, self.sandbox, program, python_path=python_path).result()
        except ToolError as exc:
            raise WorkerStartError(exc.message) from None
        except RuntimeError as exc:  # the spawner was shut down
            raise WorkerStartError(f"the module workers are shut down ({exc})") from None

    def close(self) -> None:
        """Kill every worker still running and stop starting new ones."""
        self._spawner.shutdown(wait=False, cancel_futures=True)
        self.sandbox.close()


def sandboxed_workers(
    *,
    hidden_dirs: Sequence[str | os.PathLike[str]],
    allow_hosts: Sequence[str] = (),
    allow_networks: Sequence[str] = (),
    egress: ModuleEgress | None = None,
    limits: WorkerLimits | None = None,
    sandbox_limits: SandboxLimits | None = None,
    launcher: LauncherChoice = "auto",
) -> ModuleWorkers:
    """Module workers in the code sandbox, their HTTP through the web tool's address policy.

    Args:
        hidden_dirs: The application's data directories (the module store, the module
            keys, ...): empty inside the sandbox. Those that do not exist yet are created
            (mode 0700), so that what the application puts there later is hidden too.
        allow_hosts: Hosts modules may reach even on loopback or a private network (the
            operator's intranet, a local API). Ignored when ``egress`` is given.
        allow_networks: Networks (CIDR) likewise.
        egress: Sends the workers' requests (default: a :class:`PolicyEgress` with the
            two allow-lists; ``shared.modules.NoEgress`` for a process that never fetches).
        limits: Time limits and restart budget of the workers.
        sandbox_limits: Resource limits of each worker (default :data:`WORKER_SANDBOX_LIMITS`).
        launcher: ``"auto"``, ``"bwrap"`` or ``"namespaces"`` (see ``LocalSandbox``).
    """
    for folder in hidden_dirs:
        Path(folder).mkdir(mode=0o700, parents=True, exist_ok=True)
    sandbox = LocalSandbox(
        limits=sandbox_limits or WORKER_SANDBOX_LIMITS, hidden_dirs=list(hidden_dirs), launcher=launcher
    )
    if egress is None:
        egress = PolicyEgress(policy=AddressPolicy.build(allow_hosts=allow_hosts, allow_networks=allow_networks))
    return ModuleWorkers(launcher=SandboxWorkerLauncher(sandbox), egress=egress, limits=limits)
