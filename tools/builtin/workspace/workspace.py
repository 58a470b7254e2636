"""``Workspace``: the directory the workspace tools work in, and the rules every path obeys.

Every path a model sends is checked here: relative to the root (or absolute inside it),
refused when it leaves the root (``..``, an absolute path elsewhere), with an error naming
the path and saying what a correct one looks like. Files are then opened through the
root's descriptor (``_tree``): readers follow symlinks only while they stay inside,
writers follow none. A workspace may also be *write-scoped* (the test-writer's:
``edit``/``write``/``patch`` only on test paths, ``bash`` with the workspace read-only).
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from tools.builtin.workspace import _tree
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

#: Seconds a registry waits for ``grep``/``patch`` past their own deadline, which stops the
#: work cleanly (child killed, nothing written) and comes first.
TIMEOUT_GRACE_S = 5.0


@dataclass(frozen=True)
class WorkspaceLimits:
    """Bounds of the workspace tools (frozen).

    Attributes:
        max_read_lines: Most lines ``read`` returns per call (the model pages with ``offset``).
        max_line_chars: Longer lines are cut in ``read``/``grep`` output.
        max_file_bytes: Largest file ``edit``/``patch`` rewrite and ``write`` creates.
        max_results: Most paths ``glob`` and matches ``grep`` return.
        grep_timeout_s: Wall-clock limit of one ``grep``: the search runs in a child process
            (ripgrep, or the RE2 worker) that is killed when it passes.
        grep_max_file_bytes: Larger files are skipped by ``grep``.
        max_pattern_chars: Longest regular expression (``grep``) or glob (``glob``,
            ``grep``'s ``include``) accepted.
        regex_max_mem: Memory budget of one compiled expression, in bytes (RE2's
            ``max_mem``, ripgrep's ``--regex-size-limit``/``--dfa-size-limit``): a larger
            program is refused as a validation error.
        patch_timeout_s: Wall-clock limit of one ``patch``; past it nothing is written.
        bash_timeout_s: Default wall-clock limit of one ``bash`` command.
    """

    max_read_lines: int = 2000
    max_line_chars: int = 2000
    max_file_bytes: int = 5 * 1024 * 1024
    max_results: int = 200
    grep_timeout_s: float = 10.0
    grep_max_file_bytes: int = 10 * 1024 * 1024
    max_pattern_chars: int = 1000
    regex_max_mem: int = 8 * 1024 * 1024
    patch_timeout_s: float = 30.0
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

    def components(self, path: str) -> list[str]:
        """The components of ``path`` below the root, ``..`` folded lexically.

        Raises:
            InvalidArgumentsError: empty, NUL bytes, or outside the root (``..`` climbing
                out, another absolute path).
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
        return list(lexical.relative_to(self.root).parts)

    def resolve(self, path: str, *, write: bool = False) -> Path:
        """The real path of ``path`` inside the workspace, symlinks inside it followed.

        For showing and checking only: the tools open files through the root's
        descriptor (``tools.builtin.workspace._tree``), never by this path.

        Args:
            path: Relative to the root, or absolute inside it.
            write: The caller will change the file: the write scope applies.

        Raises:
            InvalidArgumentsError: empty, NUL bytes, outside the root (``..``, another
                absolute path, a symlink leading out).
            PermissionDeniedError: outside the write scope.
        """
        with _tree.resolved(self, path) as found:
            real = self.root.joinpath(*found.parts)
        if write:
            self.check_writable(real)
        return real

    def relative(self, path: Path) -> str:
        """``path`` relative to the root, with ``/`` separators ('.' for the root)."""
        rel = os.path.relpath(path, self.root)
        return rel.replace(os.sep, "/")

    def writable(self, path: Path | str) -> bool:
        """Whether the write scope allows changing ``path`` (a real path inside the root, or
        one relative to it with ``/`` separators)."""
        if self.write_scope is None:
            return True
        rel = self.relative(path) if isinstance(path, Path) else path
        return any(fnmatch.fnmatchcase(rel, pattern) for pattern in self.write_scope)

    def check_writable(self, path: Path | str) -> None:
        """Raise ``PermissionDeniedError`` when the write scope does not allow ``path``."""
        if not self.writable(path):
            rel = self.relative(path) if isinstance(path, Path) else path
            raise PermissionDeniedError(
                f"This agent may only change files matching {', '.join(self.write_scope or ())}; "
                f"{rel!r} is not one of them. Change test files only."
            )


def _within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents
