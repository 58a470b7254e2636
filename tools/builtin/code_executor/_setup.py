"""What one sandbox decides once, at its first run: launcher, seccomp, masks, memory mode.

:func:`set_up` compiles the seccomp filter, picks the launcher (bubblewrap when it is
installed and a probe run works here, else the namespaces launcher), scans the system
trees for what only the application's own uid or groups may read (not root), and finds a
delegated cgroup v2 for per-run memory accounting. The result, a :class:`Setup`, is
shared by every run of the sandbox.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import shutil
from dataclasses import dataclass
from pathlib import Path

from tools.builtin.code_executor import _bwrap
from tools.builtin.code_executor._launch import Launcher
from tools.builtin.code_executor._layout import Layout
from tools.builtin.code_executor._masks import current_credentials, masked_entries
from tools.builtin.code_executor._memory import CgroupParent
from tools.builtin.code_executor._seccomp import SeccompUnavailableError, compile_filter

logger = logging.getLogger(__name__)

SEARCH_PATH = "/usr/local/bin:/usr/bin:/bin"
#: ``LocalSandbox(cgroup=AUTO)``: this process's own cgroup, when it is delegated to it.
AUTO = "auto"


@dataclass(frozen=True)
class Options:
    """A sandbox's constructor choices that the set-up needs.

    Attributes:
        launcher: ``"auto"``, ``"bwrap"`` or ``"namespaces"``.
        layout: The filesystem view (nothing masked yet).
        uid: The sandbox uid (this process is root), or None.
        isolate_network: An empty network namespace.
        isolate_filesystem: The private, read-only view.
        require_network: Refuse to run without network isolation.
        strict: Refuse to run when containment can't be established.
        seccomp: Load the seccomp filter (when libseccomp is installed).
        bwrap: The bwrap executable, if any.
        python_argv: The namespaces launcher's argv prefix.
        cgroup: ``"auto"``, a delegated cgroup v2 directory, or None (never a cgroup).
    """

    launcher: str
    layout: Layout
    uid: int | None
    isolate_network: bool
    isolate_filesystem: bool
    require_network: bool
    strict: bool
    seccomp: bool
    bwrap: str | None
    python_argv: tuple[str, ...]
    cgroup: str | None


@dataclass(frozen=True)
class Setup:
    """The outcome of :func:`set_up`.

    Attributes:
        launcher: The launcher every run uses, or None when ``launcher="bwrap"`` was asked
            for and bubblewrap can't be used here.
        bwrap_problem: Why bubblewrap is not used (None when it is, or was not tried).
        cgroup: Where run cgroups are created, or None (address-space budget).
        memory_reason: Which memory mode holds and why, for the log and the docs.
    """

    launcher: Launcher | None
    bwrap_problem: str | None
    cgroup: CgroupParent | None
    memory_reason: str


def userns_hint() -> str:
    """Which kernel setting (if any) keeps this user from creating user namespaces."""
    settings = {
        "user.max_user_namespaces": ("/proc/sys/user/max_user_namespaces", "0"),
        "kernel.unprivileged_userns_clone": ("/proc/sys/kernel/unprivileged_userns_clone", "0"),
        "kernel.apparmor_restrict_unprivileged_userns": ("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", "1"),
    }
    blocking = []
    for name, (path, bad) in settings.items():
        with contextlib.suppress(OSError):
            if Path(path).read_text().strip() == bad:
                blocking.append(f"{name}={bad}")
    if blocking:
        return f"user namespaces are disabled here ({', '.join(blocking)})"
    return "user namespaces could not be created"


def _probe_bwrap(options: Options, layout: Layout, prlimit: str | None) -> str | None:
    true = shutil.which("true", path=SEARCH_PATH)
    if not options.bwrap:
        return "not installed (Debian/Ubuntu: apt-get install bubblewrap)"
    if not (prlimit and true):
        return "util-linux prlimit (or coreutils true) is not installed"
    argv = _bwrap.probe_argv(options.bwrap, prlimit, true, layout=layout, isolate_network=options.isolate_network)
    problem = _bwrap.probe(argv, user=options.uid)
    if problem is not None and "namespace" in problem.lower():
        problem += f" ({userns_hint()})"
    return problem


def _masked(options: Options) -> Layout:
    """The layout with what only this uid or its groups may read masked (not root: as
    root programs run as the sandbox uid with no groups)."""
    layout = options.layout
    if options.uid is not None or not options.isolate_filesystem or current_credentials()[0] == 0:
        return layout
    uid, gids = current_credentials()
    skip = [*layout.hidden, *(path for path, _ in layout.scratch)]
    masked = masked_entries(layout.system, uid=uid, gids=gids, skip=skip)
    if masked:
        logger.info("sandbox: %d entries only this user or its groups may read are masked", len(masked))
    return dataclasses.replace(layout, masked=masked)


def _cgroup(options: Options) -> tuple[CgroupParent | None, str]:
    if options.cgroup is None:
        return None, "address-space budget (cgroups turned off: LocalSandbox(cgroup=None))"
    parent, reason = CgroupParent.detect(None if options.cgroup == AUTO else options.cgroup)
    if parent is None:
        return None, f"address-space budget ({reason})"
    return parent, reason


def set_up(options: Options) -> Setup:
    """Decide the launcher, seccomp, masks and memory mode of a sandbox (see the module)."""
    program: bytes | None = None
    if options.seccomp:
        try:
            program = compile_filter(allow_network=not options.isolate_network)
        except SeccompUnavailableError as exc:
            logger.warning("sandbox: no seccomp filter (%s)", exc)
    layout = _masked(options)
    prlimit = shutil.which("prlimit", path=SEARCH_PATH)
    kind, problem = "namespaces", None
    if options.launcher != "namespaces":
        problem = _probe_bwrap(options, layout, prlimit)
        if problem is None:
            kind = "bwrap"
        elif options.launcher == "bwrap":
            return Setup(None, problem, None, "")
        else:
            logger.warning("sandbox: bubblewrap not used (%s); using the namespaces launcher", problem)
    cgroup, reason = _cgroup(options)
    logger.info("sandbox: memory per run: %s", reason)
    launcher = Launcher(
        kind=kind,
        layout=layout,
        uid=options.uid,
        isolate_network=options.isolate_network,
        isolate_filesystem=options.isolate_filesystem,
        require_network=options.require_network,
        strict=options.strict,
        seccomp=program,
        bwrap=options.bwrap or "bwrap",
        prlimit=prlimit or "prlimit",
        setpriv=shutil.which("setpriv", path=SEARCH_PATH),
        python_argv=options.python_argv,
    )
    return Setup(launcher, problem, cgroup, reason)
