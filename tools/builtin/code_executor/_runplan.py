"""The per-run part of the filesystem: the workspace copy and the ``python_path`` directories.

A run with neither has a private tmpfs working directory holding the program file. With a
workspace, the program still lives in that tmpfs, but its working directory is
``<workdir>/workspace``, the host copy made by :mod:`._workspace`, bound read-write. Each
``python_path`` directory is bound read-only at its own path (so it shows even inside a
hidden or scratch directory) and put first on ``sys.path`` by a bootstrap (the interpreter
runs ``-I -S``, which ignores ``PYTHONPATH``); other languages get ``PYTHONPATH``.

Stdlib only: the sandbox tests import this package without its dependencies.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tools.builtin.code_executor._workspace import STAGE_NAME
from tools.errors import InvalidArgumentsError

#: Puts the directories first on ``sys.path``, then runs the program as ``__main__``.
_BOOTSTRAP = (
    "import sys,runpy;sys.path[0:0]={paths!r};sys.argv[:]=sys.argv[1:];runpy.run_path(sys.argv[0],run_name='__main__')"
)


@dataclass(frozen=True)
class RunPlan:
    """Where one run's program works and what is bound into its view.

    Attributes:
        cwd: The program's working directory.
        binds: ``(host path, sandbox path, writable)`` bind mounts, in order.
        python_dirs: The ``python_path`` entries as the program sees them.
    """

    cwd: str
    binds: tuple[tuple[str, str, bool], ...] = ()
    python_dirs: tuple[str, ...] = field(default=())

    def command(self, argv: Sequence[str], program: str, language: str) -> list[str]:
        """The command line: ``argv`` plus the program, through the bootstrap for Python."""
        if language == "python" and self.python_dirs:
            return [*argv, "-c", _BOOTSTRAP.format(paths=list(self.python_dirs)), program]
        return [*argv, program]

    def environment(self, env: dict[str, str], language: str) -> dict[str, str]:
        """``env`` plus ``PYTHONPATH`` for languages other than Python."""
        if self.python_dirs and language != "python":
            return {**env, "PYTHONPATH": os.pathsep.join(self.python_dirs)}
        return env


def readable_by_others(path: Path) -> bool:
    """Every directory up to ``path`` is ``o+x`` and ``path`` itself ``o+rx``."""
    try:
        if path.stat().st_mode & (stat.S_IROTH | stat.S_IXOTH) != stat.S_IROTH | stat.S_IXOTH:
            return False
        return all(parent.stat().st_mode & stat.S_IXOTH for parent in path.parents)
    except OSError:
        return False


def plan(
    workdir: str,
    *,
    workspace: str | os.PathLike[str] | None,
    python_path: Sequence[str | os.PathLike[str]],
    other_uid: bool,
    stage_parent: str | None = None,
) -> RunPlan:
    """The :class:`RunPlan` of a run in ``workdir``.

    Args:
        workdir: The run's working directory (host path, also its path in the sandbox).
        workspace: The host workspace, if any (already checked to be a directory).
        python_path: Host directories for ``sys.path``.
        other_uid: The program runs as another uid than this process (as root): each
            ``python_path`` directory must be readable by others.
        stage_parent: The host directory holding the workspace copy (default
            ``workdir``); the program sees the copy at ``<workdir>/workspace`` either way.

    Raises:
        InvalidArgumentsError: an entry is not an existing directory, or the program's
            uid could not read it.
    """
    if isinstance(python_path, (str, os.PathLike)):
        raise InvalidArgumentsError("python_path must be a list of directories, not one path; wrap it in a list")
    root = os.path.realpath(os.fspath(workspace)) if workspace is not None else None
    stage = os.path.join(workdir, STAGE_NAME)
    binds: list[tuple[str, str, bool]] = []
    if root is not None:
        binds.append((os.path.join(stage_parent or workdir, STAGE_NAME), stage, True))
    dirs: list[str] = []
    for entry in python_path:
        real = os.path.realpath(os.fspath(entry))
        if root is not None and (real == root or real.startswith(root.rstrip("/") + "/")):
            dirs.append(stage + real[len(root) :])  # the program's copy of the workspace
            continue
        if not os.path.isdir(real):
            raise InvalidArgumentsError(f"python_path entry {os.fspath(entry)!r} is not an existing directory")
        if other_uid and not readable_by_others(Path(real)):
            raise InvalidArgumentsError(
                f"python_path entry {real!r} can't be read by the sandbox's uid (every directory on the way "
                "must be o+x and the directory o+rx); make it readable or use another directory"
            )
        if real not in dirs:
            dirs.append(real)
            binds.append((real, real, False))
    return RunPlan(cwd=stage if root is not None else workdir, binds=tuple(binds), python_dirs=tuple(dirs))
