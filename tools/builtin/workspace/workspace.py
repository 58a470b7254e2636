"""``Workspace``: the directory the workspace tools work in, and the rules every path obeys.

Every path a model sends is resolved here, once: relative to the root (or absolute inside
it), symlinks resolved, and refused when it leaves the root (``..``, an absolute path
elsewhere, a symlink pointing out), with an error naming the path and saying what a
correct one looks like. A workspace may also be *write-scoped* (the test-writer's:
``edit``/``write``/``patch`` only on test paths, ``bash`` with the workspace read-only).
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from tools.errors import InvalidArgumentsError, PermissionDeniedError, ToolDefinitionError

if TYPE_CHECKING:
    from tools.builtin.code_executor import SandboxClient
    from tools.builtin.workspace.skill import SkillLibrary
    from tools.builtin.workspace.todo import TodoStore

#: Test paths (``fnmatch`` patterns on the path relative to the root; ``*`` crosses ``/``).
TEST_PATHS: tuple[str, ...] = (
    "tests/*", "test/*", "*/tests/*", "*/test/*", "test_*.py", "*/test_*.py", "*_test.py",
    "conftest.py", "*/conftest.py", "*.test.js", "*.test.ts", "*.spec.js", "*.spec.ts", "*_test.go",
)  # fmt: skip


@dataclass(frozen=True)
class WorkspaceLimits:
    """Bounds of the workspace tools (frozen).

    Attributes:
        max_read_lines: Most lines ``read`` returns per call (the model pages with ``offset``).
        max_line_chars: Longer lines are cut in ``read``/``grep`` output.
        max_file_bytes: Largest file ``edit``/``patch`` rewrite and ``write`` creates.
        max_results: Most paths ``glob`` and matches ``grep`` return.
        grep_timeout_s: Wall-clock limit of one ``grep``.
        grep_max_file_bytes: Larger files are skipped by ``grep``.
        bash_timeout_s: Default wall-clock limit of one ``bash`` command.
    """

    max_read_lines: int = 2000
    max_line_chars: int = 2000
    max_file_bytes: int = 5 * 1024 * 1024
    max_results: int = 200
    grep_timeout_s: float = 10.0
    grep_max_file_bytes: int = 10 * 1024 * 1024
    bash_timeout_s: float = 120.0

    def __post_init__(self) -> None:
        for name in self.__dataclass_fields__:
            if not getattr(self, name) > 0:
                raise ToolDefinitionError(f"WorkspaceLimits.{name} must be positive, got {getattr(self, name)!r}")


@dataclass(frozen=True)
class Workspace:
    """A workspace root and the collaborators of its tools (frozen).

    Args:
        root: The directory every path is confined to (must exist).
        sandbox: Where ``bash`` runs (None: ``bash`` answers that no sandbox is configured).
        todos: The session's todo list (``todowrite``/``todoread``).
        skills: The skills ``skill`` loads.
        write_scope: ``fnmatch`` patterns of the paths ``edit``/``write``/``patch`` may
            change (None: any path in the workspace). A scoped workspace's ``bash`` runs
            with the workspace read-only.
        python_path: Directories ``bash`` programs see on ``PYTHONPATH`` (e.g. the
            project's site-packages, so ``python3 -m pytest`` works in the sandbox).
        limits: Output and size bounds.

    Raises:
        ToolDefinitionError: ``root`` is not a directory.
    """

    root: Path
    sandbox: SandboxClient | None = None
    todos: TodoStore | None = None
    skills: SkillLibrary | None = None
    write_scope: tuple[str, ...] | None = None
    python_path: tuple[str, ...] = ()
    limits: WorkspaceLimits = field(default_factory=WorkspaceLimits)

    def __post_init__(self) -> None:
        root = Path(os.path.realpath(os.fspath(self.root)))
        if not root.is_dir():
            raise ToolDefinitionError(f"Workspace root {os.fspath(self.root)!r} is not a directory; create it first")
        object.__setattr__(self, "root", root)
        if self.write_scope is not None:
            object.__setattr__(self, "write_scope", tuple(self.write_scope))
        object.__setattr__(self, "python_path", tuple(os.fspath(p) for p in self.python_path))

    def scoped(self, write_scope: Sequence[str] | None) -> Workspace:
        """The same workspace with another write scope (None: unrestricted)."""
        return replace(self, write_scope=tuple(write_scope) if write_scope is not None else None)

    # ------------------------------------------------------------------ paths

    def resolve(self, path: str, *, write: bool = False) -> Path:
        """The real path of ``path`` inside the workspace.

        Args:
            path: Relative to the root, or absolute inside it.
            write: The caller will change the file: the write scope applies.

        Raises:
            InvalidArgumentsError: empty, NUL bytes, outside the root (``..``, another
                absolute path, a symlink leading out).
            PermissionDeniedError: outside the write scope.
        """
        if not isinstance(path, str) or not path.strip():
            raise InvalidArgumentsError("The path is empty; pass a path relative to the workspace, e.g. 'src/app.py'.")
        if "\x00" in path:
            raise InvalidArgumentsError(f"The path {path[:200]!r} contains a NUL byte; pass a plain path.")
        given = Path(path)
        lexical = Path(os.path.normpath(given if given.is_absolute() else self.root / given))
        if not _within(lexical, self.root):
            raise InvalidArgumentsError(
                f"The path {path[:200]!r} is outside the workspace {str(self.root)!r}. Use a path relative to "
                "the workspace (e.g. 'src/app.py') without '..'."
            )
        real = Path(os.path.realpath(lexical))
        if not _within(real, self.root):
            raise InvalidArgumentsError(
                f"The path {path[:200]!r} leads outside the workspace through a symlink; only files inside the "
                "workspace can be used."
            )
        if write:
            self.check_writable(real)
        return real

    def relative(self, path: Path) -> str:
        """``path`` relative to the root, with ``/`` separators ('.' for the root)."""
        rel = os.path.relpath(path, self.root)
        return rel.replace(os.sep, "/")

    def writable(self, path: Path) -> bool:
        """Whether the write scope allows changing ``path`` (a real path inside the root)."""
        if self.write_scope is None:
            return True
        rel = self.relative(path)
        return any(fnmatch.fnmatchcase(rel, pattern) for pattern in self.write_scope)

    def check_writable(self, path: Path) -> None:
        """Raise ``PermissionDeniedError`` when the write scope does not allow ``path``."""
        if not self.writable(path):
            raise PermissionDeniedError(
                f"This agent may only change files matching {', '.join(self.write_scope or ())}; "
                f"{self.relative(path)!r} is not one of them. Change test files only."
            )


def _within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents
