"""``patch``: apply a unified diff to workspace files, all or nothing.

Every hunk of every file is checked against the current text first (its context and
removed lines must match exactly, at the stated line or the nearest place they do); only
when all of them apply is anything written. A diff that would half-apply changes nothing
and names the file and hunk that did not fit.
"""

from __future__ import annotations

import contextlib
import re
import time
from dataclasses import dataclass, field

from pydantic import BaseModel, Field

from tools.base import BaseTool
from tools.builtin.workspace import _tree
from tools.builtin.workspace.workspace import TIMEOUT_GRACE_S, Workspace
from tools.errors import InvalidArgumentsError, ToolTimeoutError
from tools.routing import CODING_TOOL_MANUALS_BY_NAME

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
#: Distinct expected lines a diff may have (one character each; the rest of Unicode spare).
_MAX_DISTINCT = 0x10FFFF - 1
_EXAMPLE = "--- a/app.py\n+++ b/app.py\n@@ -1,2 +1,2 @@\n def f():\n-    return 1\n+    return 2"


@dataclass
class Hunk:
    """One ``@@`` block: the lines it expects (``old``) and what replaces them (``new``)."""

    start: int
    old: list[str] = field(default_factory=list)
    new: list[str] = field(default_factory=list)


@dataclass
class FilePatch:
    """The hunks for one file; ``None`` paths mean ``/dev/null`` (create or delete)."""

    old_path: str | None
    new_path: str | None
    hunks: list[Hunk] = field(default_factory=list)


def _path(header: str) -> str | None:
    name = header[4:].split("\t", 1)[0].strip()
    if name == "/dev/null":
        return None
    return name[2:] if name[:2] in ("a/", "b/") else name


def parse_diff(text: str) -> list[FilePatch]:
    """The file patches of a unified diff.

    Raises:
        InvalidArgumentsError: not a unified diff, or a hunk without its file headers.
    """
    patches: list[FilePatch] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            patches.append(FilePatch(_path(line), _path(lines[i + 1])))
            i += 2
            continue
        match = _HUNK.match(line)
        if match:
            if not patches:
                raise InvalidArgumentsError(
                    f"A hunk comes before any '--- a/file' / '+++ b/file' header. Example:\n{_EXAMPLE}"
                )
            hunk = Hunk(start=int(match.group(1)))
            i += 1
            while i < len(lines) and not lines[i].startswith(("@@", "--- ")):
                body = lines[i]
                if body.startswith("\\"):  # "\ No newline at end of file"
                    i += 1
                    continue
                tag, rest = (body[:1], body[1:]) if body else (" ", "")
                if tag in (" ", "-"):
                    hunk.old.append(rest)
                if tag in (" ", "+"):
                    hunk.new.append(rest)
                if tag not in (" ", "-", "+"):
                    raise InvalidArgumentsError(
                        f"Line {i + 1} of the diff starts with {tag!r}; hunk lines start with ' ', '-' or '+'."
                    )
                i += 1
            patches[-1].hunks.append(hunk)
            continue
        i += 1
    if not patches or not any(p.hunks for p in patches):
        raise InvalidArgumentsError(f"No unified diff found (no '@@' hunks). Example:\n{_EXAMPLE}")
    return patches


class _Haystack:
    """A file's lines as one string, a character per line, searched by ``str.find`` (C,
    linear in practice: CPython switches long searches to the Two-Way algorithm).

    Each distinct line that some hunk expects gets its own character; every other line
    becomes ``\\0``, which no hunk contains, so a match can never cover it.
    """

    def __init__(self, lines: list[str], hunks: list[Hunk]) -> None:
        codes: dict[str, str] = {}
        for hunk in hunks:
            for line in hunk.old:
                if line not in codes:
                    if len(codes) >= _MAX_DISTINCT:
                        raise InvalidArgumentsError("The diff is too large; send one with fewer lines.")
                    codes[line] = chr(len(codes) + 1)
        self._codes = codes
        self.text = "".join([codes.get(line, "\0") for line in lines])
        self._reversed = self.text[::-1]

    def needle(self, old: list[str]) -> str:
        """The characters of a hunk's expected lines."""
        return "".join([self._codes[line] for line in old])

    def nearest(self, needle: str, expected: int, lower: int) -> int | None:
        """The occurrence of ``needle`` at or after ``lower`` nearest to ``expected`` (ties:
        the earlier one), or None."""
        n, m = len(self.text), len(needle)
        expected = min(max(expected, lower), n)
        if self.text.startswith(needle, expected):
            return expected
        back = None
        j = self._reversed.find(needle[::-1], max(0, n - m - expected + 1), n - lower)
        if j >= 0:
            back = n - m - j
        end = n if back is None else 2 * expected - back - 1 + m
        forward = self.text.find(needle, expected, end)
        return forward if forward >= 0 else back


def apply_hunks(text: str, patch: FilePatch, label: str, *, deadline: float | None = None) -> str:
    """``text`` with every hunk applied, in order, each after the one before.

    A hunk goes where its expected lines occur nearest to the line it names (shifted by
    the drift of the hunk before, as ``patch`` does). Time: linear in the file and the diff
    (a character search per hunk, one pass to splice).

    Raises:
        InvalidArgumentsError: a hunk's context does not match the file.
        ToolTimeoutError: ``deadline`` (a ``time.monotonic()`` value) passed.
    """
    lines = text.splitlines()
    trailing = text.endswith("\n") or not text
    hay = _Haystack(lines, patch.hunks)
    out: list[str] = []
    done = drift = 0
    for number, hunk in enumerate(patch.hunks, 1):
        if deadline is not None and time.monotonic() > deadline:
            raise _too_slow()
        stated = hunk.start if not hunk.old else hunk.start - 1  # '-5,0' inserts after line 5
        at = hay.nearest(hay.needle(hunk.old), stated + drift, done)
        if at is None:
            expected = "\n".join(hunk.old[:5])
            raise InvalidArgumentsError(
                f"Hunk {number} of {label} does not match the file (expected these lines near line {hunk.start}:\n"
                f"{expected}\n). Nothing was changed: read the file and make the diff from its current text."
            )
        out += lines[done:at]
        out += hunk.new
        done = at + len(hunk.old)
        drift = at - stated
    out += lines[done:]
    return "\n".join(out) + ("\n" if trailing and out else "")


def _too_slow() -> ToolTimeoutError:
    return ToolTimeoutError(
        "patch ran out of time; nothing was changed. Send a smaller diff (fewer files or hunks).", trips_breaker=False
    )


class PatchRequest(BaseModel):
    """Arguments of ``patch``."""

    diff: str = Field(description="A unified diff ('--- a/path', '+++ b/path', '@@ -l,n +l,n @@' hunks).")


class PatchResponse(BaseModel):
    """What ``patch`` changed."""

    changed: list[str] = Field(description="Files written.")
    created: list[str]
    deleted: list[str]


class PatchTool(BaseTool[PatchRequest, PatchResponse]):
    """Applies a unified diff to workspace files, all or nothing."""

    name = "patch"
    description = (
        "Apply a unified diff to one or more workspace files. All hunks must match the current files; if any "
        "does not, nothing is changed. Paths are relative to the workspace ('a/' and 'b/' prefixes allowed)."
    )
    manual = CODING_TOOL_MANUALS_BY_NAME["patch"]

    def __init__(self, workspace: Workspace) -> None:
        self._workspace = workspace
        self.timeout = workspace.limits.patch_timeout_s + TIMEOUT_GRACE_S

    def execute_internal(self, request: PatchRequest) -> PatchResponse:
        """Check every hunk, then write every file (within ``patch_timeout_s``)."""
        ws = self._workspace
        deadline = time.monotonic() + ws.limits.patch_timeout_s
        plan: list[tuple[list[str], str, bytes | None, bytes | None]] = []  # (parts, label, old, new)
        for patch in parse_diff(request.diff):
            label = patch.new_path or patch.old_path or "?"
            if patch.old_path is None:  # creation
                parts = _tree.target(ws, label)
                if _tree.exists(ws, parts):
                    raise InvalidArgumentsError(f"The diff creates {label!r}, which already exists; diff against it.")
                plan.append((parts, label, None, self._checked(apply_hunks("", patch, repr(label), deadline=deadline))))
                continue
            if patch.new_path is not None and patch.new_path != patch.old_path:
                raise InvalidArgumentsError("Renames are not supported; patch the file in place, then use write.")
            loaded = _tree.load(ws, patch.old_path)
            new = None
            if patch.new_path is not None:
                new = self._checked(apply_hunks(loaded.text, patch, repr(patch.old_path), deadline=deadline))
            plan.append((loaded.parts, patch.old_path, loaded.text.encode("utf-8"), new))
        if time.monotonic() > deadline:
            raise _too_slow()
        self._write(plan)
        return PatchResponse(
            changed=["/".join(p) for p, _, old, new in plan if old is not None and new is not None],
            created=["/".join(p) for p, _, old, _ in plan if old is None],
            deleted=["/".join(p) for p, _, _, new in plan if new is None],
        )

    def _checked(self, text: str) -> bytes:
        data = _tree.encode(text, "The diff")
        limit = self._workspace.limits.max_file_bytes
        if len(data) > limit:
            raise InvalidArgumentsError(f"The patched file would be {len(data)} bytes, over the {limit} bytes limit.")
        return data

    def _write(self, plan: list[tuple[list[str], str, bytes | None, bytes | None]]) -> None:
        """Write every file; on a failure, put back those already written."""
        ws = self._workspace
        done: list[tuple[list[str], str, bytes | None]] = []
        try:
            for parts, label, old, new in plan:
                if new is None:
                    _tree.remove(ws, parts, label)
                else:
                    _tree.store(ws, parts, new, label)
                done.append((parts, label, old))
        except (OSError, InvalidArgumentsError):
            for parts, label, old in reversed(done):
                with contextlib.suppress(OSError, InvalidArgumentsError):
                    if old is None:
                        _tree.remove(ws, parts, label)
                    else:
                        _tree.store(ws, parts, old, label)
            raise
