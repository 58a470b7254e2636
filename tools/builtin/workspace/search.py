"""``glob`` and ``grep``: find workspace files by path pattern and by content.

Both walk the workspace without following symlinks (a link to ``/`` is not a way out).
``grep`` uses ripgrep when it is installed (``rg``: fast, ``.gitignore``-aware), else the
``regex`` engine with a per-search time limit (``re`` has none: a catastrophic pattern
would hang the tool) and a file-size limit.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import regex
from pydantic import BaseModel, Field

from tools._procgroup import kill_group
from tools.base import BaseTool
from tools.builtin.workspace.files import is_binary
from tools.builtin.workspace.workspace import Workspace
from tools.errors import InvalidArgumentsError, ToolTimeoutError
from tools.routing import CODING_TOOL_MANUALS_BY_NAME

_SKIP_DIRS = frozenset({".git", "__pycache__", "node_modules", ".mypy_cache", ".ruff_cache", ".venv", ".tox"})
_SEARCH_PATH = "/usr/local/bin:/usr/bin:/bin"


def glob_regex(pattern: str) -> re.Pattern[str]:
    """A regex for a glob on ``/``-separated relative paths: ``**`` spans directories,
    ``*`` and ``?`` stay within one, ``[...]`` is a class."""
    out, i = [], 0
    while i < len(pattern):
        char = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[" and "]" in pattern[i + 1 :]:
            end = pattern.index("]", i + 1)
            out.append("[" + pattern[i + 1 : end].replace("!", "^", 1) + "]")
            i = end
        else:
            out.append(re.escape(char))
        i += 1
    return re.compile("".join(out) + r"\Z")


def walk_files(base: Path) -> Iterator[Path]:
    """Files below ``base``, sorted, symlinks and tool caches skipped."""
    for current, dirs, files in os.walk(base, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not os.path.islink(os.path.join(current, d)))
        for name in sorted(files):
            path = Path(current, name)
            if not path.is_symlink():
                yield path


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
        base = ws.resolve(request.path)
        if not base.is_dir():
            raise InvalidArgumentsError(f"{request.path!r} is not a directory; pass a directory such as '.' or 'src'.")
        matcher = glob_regex(request.pattern.lstrip("/"))
        found: list[str] = []
        for path in walk_files(base):
            if matcher.match(os.path.relpath(path, base).replace(os.sep, "/")):
                found.append(ws.relative(path))
                if len(found) > ws.limits.max_results:
                    return GlobResponse(files=found[:-1], truncated=True)
        return GlobResponse(files=found, truncated=False)


class GrepRequest(BaseModel):
    """Arguments of ``grep``."""

    pattern: str = Field(description="Regular expression to search for, e.g. 'def \\w+_total'.")
    path: str = Field(default=".", description="File or directory to search, relative to the workspace.")
    include: str | None = Field(default=None, description="Only files whose names match this glob, e.g. '*.py'.")
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
    engine: str = Field(description="'ripgrep' or 'regex'.")


class GrepTool(BaseTool[GrepRequest, GrepResponse]):
    """Searches workspace file contents for a regular expression."""

    name = "grep"
    description = "Search the workspace files for a regular expression; returns path, line number and line."
    manual = CODING_TOOL_MANUALS_BY_NAME["grep"]

    def __init__(self, workspace: Workspace, *, ripgrep: str | bool | None = True) -> None:
        """Args:
        workspace: The workspace.
        ripgrep: The ``rg`` executable; True finds it on the standard search path, False
            or None uses the ``regex`` engine.
        """
        self._workspace = workspace
        if ripgrep is True:
            self._rg = shutil.which("rg", path=_SEARCH_PATH)
        else:
            self._rg = ripgrep or None

    def execute_internal(self, request: GrepRequest) -> GrepResponse:
        """Search with ripgrep or the regex engine."""
        ws = self._workspace
        base = ws.resolve(request.path)
        flags = regex.IGNORECASE if request.ignore_case else 0
        try:
            compiled = regex.compile(request.pattern, flags)
        except regex.error as exc:
            raise InvalidArgumentsError(
                f"pattern is not a valid regular expression ({exc}); escape special characters like '(' as '\\('."
            ) from None
        if self._rg:
            return self._ripgrep(self._rg, request, base)
        return self._python(compiled, request, base)

    def _files(self, base: Path, include: str | None) -> Iterator[Path]:
        if base.is_file():
            yield base
            return
        matcher = glob_regex(include) if include else None
        for path in walk_files(base):
            if matcher is None or matcher.match(path.name):
                yield path

    def _python(self, compiled: regex.Pattern[str], request: GrepRequest, base: Path) -> GrepResponse:
        ws, limits = self._workspace, self._workspace.limits
        deadline = time.monotonic() + limits.grep_timeout_s
        matches: list[GrepMatch] = []
        for path in self._files(base, request.include):
            try:
                if path.stat().st_size > limits.grep_max_file_bytes or is_binary(path):
                    continue
                with path.open(encoding="utf-8", errors="replace") as handle:
                    for number, line in enumerate(handle, 1):
                        left = deadline - time.monotonic()
                        if left <= 0:
                            raise _timed_out(limits.grep_timeout_s)
                        if compiled.search(line, timeout=left):
                            text = line.rstrip("\n")[: limits.max_line_chars]
                            matches.append(GrepMatch(path=ws.relative(path), line=number, text=text))
                            if len(matches) > limits.max_results:
                                return GrepResponse(matches=matches[:-1], truncated=True, engine="regex")
            except TimeoutError:
                raise _timed_out(limits.grep_timeout_s) from None
            except OSError:
                continue
        return GrepResponse(matches=matches, truncated=False, engine="regex")

    def _ripgrep(self, rg: str, request: GrepRequest, base: Path) -> GrepResponse:
        ws, limits = self._workspace, self._workspace.limits
        argv = [rg, "--no-heading", "--line-number", "--color=never", "--no-follow", "--no-config"]
        argv += [f"--max-filesize={limits.grep_max_file_bytes}", "--max-columns", str(limits.max_line_chars)]
        if request.ignore_case:
            argv.append("--ignore-case")
        if request.include:
            argv += ["--glob", request.include]
        argv += ["--regexp", request.pattern, "--", str(base)]
        proc = subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, cwd=ws.root
        )
        try:
            out, _ = proc.communicate(timeout=limits.grep_timeout_s)
        except subprocess.TimeoutExpired:
            kill_group(proc.pid)
            proc.communicate()
            raise _timed_out(limits.grep_timeout_s) from None
        matches: list[GrepMatch] = []
        for raw in out.decode("utf-8", "replace").splitlines():
            file, _, rest = raw.partition(":")
            number, _, text = rest.partition(":")
            if not number.isdigit():  # a single file: rg prints no name
                file, number, text = str(base), file, rest
            matches.append(GrepMatch(path=ws.relative(Path(file)), line=int(number), text=text))
            if len(matches) > limits.max_results:
                return GrepResponse(matches=matches[:-1], truncated=True, engine="ripgrep")
        return GrepResponse(matches=matches, truncated=False, engine="ripgrep")


def _timed_out(seconds: float) -> ToolTimeoutError:
    return ToolTimeoutError(
        f"grep stopped after {seconds:g} s; use a simpler pattern or search a smaller path.", trips_breaker=False
    )
