"""``glob`` and ``grep``: find workspace files by path pattern and by content.

Both start from the directory the model names, opened through the workspace root's
descriptor (a symlink is followed only while it stays inside), and walk below it through
descriptors without entering a symlink: a link to ``/``, or a directory swapped for one
mid-walk, is not a way out. Patterns are compiled by RE2 within the workspace's limits
(``_patterns``): linear-time matching, a length limit, a memory budget; a bad one is a
validation error. ``grep`` runs in a child process killed at ``grep_timeout_s``
(``_grepengine``): ripgrep when installed, else the RE2 worker.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path

from pydantic import BaseModel, Field

from tools import _openat
from tools.base import BaseTool
from tools.builtin.workspace import _tree
from tools.builtin.workspace._grepengine import Found, RipgrepJob, run_ripgrep, run_worker
from tools.builtin.workspace._patterns import compile_glob, compile_regex, glob_regex, ripgrep_glob
from tools.builtin.workspace.workspace import TIMEOUT_GRACE_S, Workspace
from tools.errors import InvalidArgumentsError
from tools.routing import CODING_TOOL_MANUALS_BY_NAME

_SKIP_DIRS = frozenset({".git", "__pycache__", "node_modules", ".mypy_cache", ".ruff_cache", ".venv", ".tox"})
_SEARCH_PATH = "/usr/local/bin:/usr/bin:/bin"


def walk_files(base: Path) -> Iterator[Path]:
    """Regular files below ``base``, sorted, symlinks and tool caches skipped (walked
    through descriptors: nothing outside ``base`` is ever listed)."""
    fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for rel, _, _, info in _openat.walk(fd, skip_dirs=_SKIP_DIRS):
            if stat.S_ISREG(info.st_mode):
                yield base / rel
    finally:
        os.close(fd)


def _prefix(base: _tree.Opened) -> str:
    return "" if base.rel == "." else base.rel + "/"


class GlobRequest(BaseModel):
    """Arguments of ``glob``."""

    pattern: str = Field(description="Glob on paths relative to 'path', e.g. '**/*.py' or 'tests/test_*.py'.")
    path: str = Field(default=".", description="Directory to search, relative to the workspace. Defaults to '.'.")


class GlobResponse(BaseModel):
    """Matching files."""

    files: list[str] = Field(description="Paths relative to the workspace root, sorted.")
    truncated: bool = Field(description="More files matched than are listed.")


class GlobTool(BaseTool[GlobRequest, GlobResponse]):
    """Lists workspace files whose paths match a glob."""

    name = "glob"
    description = "List the workspace files matching a glob pattern ('**/*.py', 'src/*.ts'); paths are relative."
    manual = CODING_TOOL_MANUALS_BY_NAME["glob"]

    def __init__(self, workspace: Workspace) -> None:
        self._workspace = workspace

    def execute_internal(self, request: GlobRequest) -> GlobResponse:
        """Walk and match."""
        ws = self._workspace
        matcher = compile_glob(request.pattern.lstrip("/"), ws.limits, what="pattern")
        found: list[str] = []
        truncated = False
        with _tree.open_for_reading(ws, request.path) as base:
            if not base.is_dir:
                raise InvalidArgumentsError(
                    f"{request.path!r} is not a directory; pass a directory such as '.' or 'src'."
                )
            prefix = _prefix(base)
            for rel, _, _, info in _openat.walk(base.fd, skip_dirs=_SKIP_DIRS):
                if stat.S_ISREG(info.st_mode) and matcher.fullmatch(rel):
                    if len(found) == ws.limits.max_results:
                        truncated = True
                        break
                    found.append(prefix + rel)
        return GlobResponse(files=sorted(found), truncated=truncated)


class GrepRequest(BaseModel):
    """Arguments of ``grep``."""

    pattern: str = Field(
        description="Regular expression (RE2 syntax: like Python's re, without backreferences or lookaround), "
        "matched line by line, e.g. 'def \\w+_total'."
    )
    path: str = Field(default=".", description="File or directory to search, relative to the workspace.")
    include: str | None = Field(
        default=None, description="Only files whose names match this glob, e.g. '*.py' (with a '/': the path)."
    )
    ignore_case: bool = Field(default=False, description="Case-insensitive. Defaults to false.")


class GrepMatch(BaseModel):
    """One matching line."""

    path: str
    line: int
    text: str


class GrepResponse(BaseModel):
    """The matches."""

    matches: list[GrepMatch]
    truncated: bool = Field(description="More lines matched than are listed.")
    engine: str = Field(description="'ripgrep' or 're2'.")


class GrepTool(BaseTool[GrepRequest, GrepResponse]):
    """Searches workspace file contents for a regular expression."""

    name = "grep"
    description = "Search the workspace files for a regular expression; returns path, line number and line."
    manual = CODING_TOOL_MANUALS_BY_NAME["grep"]

    def __init__(self, workspace: Workspace, *, ripgrep: str | bool | None = True) -> None:
        """Args:
        workspace: The workspace.
        ripgrep: The ``rg`` executable; True finds it on the standard search path, False
            or None uses the RE2 worker.
        """
        self._workspace = workspace
        self.timeout = workspace.limits.grep_timeout_s + TIMEOUT_GRACE_S
        if ripgrep is True:
            self._rg = shutil.which("rg", path=_SEARCH_PATH)
        else:
            self._rg = ripgrep or None

    def execute_internal(self, request: GrepRequest) -> GrepResponse:
        """Check the pattern, then search in a child process (ripgrep or the RE2 worker)."""
        ws, limits = self._workspace, self._workspace.limits
        compile_regex(request.pattern, limits, ignore_case=request.ignore_case)
        if request.include:
            compile_glob(request.include, limits, what="include")
        with _tree.open_for_reading(ws, request.path) as base:
            found = self._ripgrep(self._rg, request, base) if self._rg else self._worker(request, base)
            prefix = _prefix(base)
        matches = [
            GrepMatch(path=base.rel if not base.is_dir else prefix + rel, line=line, text=text)
            for rel, line, text in found.matches
        ]
        return GrepResponse(matches=matches, truncated=found.truncated, engine="ripgrep" if self._rg else "re2")

    def _worker(self, request: GrepRequest, base: _tree.Opened) -> Found:
        limits = self._workspace.limits
        job = {
            "pattern": request.pattern,
            "ignore_case": request.ignore_case,
            "max_mem": limits.regex_max_mem,
            "kind": "dir" if base.is_dir else "file",
            "name": base.rel,
            "include": glob_regex(request.include) if request.include else None,
            "include_path": "/" in (request.include or ""),
            "skip_dirs": sorted(_SKIP_DIRS),
            "max_file_bytes": limits.grep_max_file_bytes,
            "max_results": limits.max_results,
            "max_line_chars": limits.max_line_chars,
        }
        return run_worker(job, base.fd, limits.grep_timeout_s)

    def _ripgrep(self, rg: str, request: GrepRequest, base: _tree.Opened) -> Found:
        ws, limits = self._workspace, self._workspace.limits
        argv = [rg, "--json", "--no-follow", "--no-config", "--no-messages", "--sort=path", "--color=never"]
        argv += [f"--max-filesize={limits.grep_max_file_bytes}"]
        argv += [f"--regex-size-limit={limits.regex_max_mem}", f"--dfa-size-limit={limits.regex_max_mem}"]
        if request.ignore_case:
            argv.append("--ignore-case")
        if request.include:
            argv += ["--glob", ripgrep_glob(request.include)]
        argv += ["--regexp", request.pattern]
        where = ws.root.joinpath(*_openat.components(base.rel))
        cwd, target = (str(where), ".") if base.is_dir else (str(where.parent), where.name)
        job = RipgrepJob(argv, cwd, target, limits.max_results, limits.max_line_chars)
        return run_ripgrep(job, base.fd, not base.is_dir, limits.grep_timeout_s)
