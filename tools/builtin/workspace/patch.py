"""``patch``: apply a unified diff to workspace files, all or nothing.

Every hunk of every file is checked against the current text first (its context and
removed lines must match exactly, at the stated line or the nearest place they do); only
when all of them apply is anything written. A diff that would half-apply changes nothing
and names the file and hunk that did not fit.
"""

from __future__ import annotations

import contextlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, Field

from tools.base import BaseTool
from tools.builtin.workspace.files import existing_file, read_text, write_text
from tools.builtin.workspace.workspace import Workspace
from tools.errors import InvalidArgumentsError
from tools.routing import CODING_TOOL_MANUALS_BY_NAME

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
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


def _find(lines: list[str], old: list[str], start: int) -> int | None:
    """Where ``old`` occurs in ``lines``: at ``start`` or the nearest other place."""
    if not old:
        return min(max(start, 0), len(lines))
    candidates = [at for at in range(len(lines) - len(old) + 1) if lines[at : at + len(old)] == old]
    return min(candidates, key=lambda at: abs(at - start)) if candidates else None


def apply_hunks(text: str, patch: FilePatch, label: str) -> str:
    """``text`` with every hunk applied, bottom-up position tracking included.

    Raises:
        InvalidArgumentsError: a hunk's context does not match the file.
    """
    lines = text.splitlines()
    trailing = text.endswith("\n") or not text
    offset = 0
    for number, hunk in enumerate(patch.hunks, 1):
        at = _find(lines, hunk.old, hunk.start - 1 + offset)
        if at is None:
            expected = "\n".join(hunk.old[:5])
            raise InvalidArgumentsError(
                f"Hunk {number} of {label} does not match the file (expected these lines near line {hunk.start}:\n"
                f"{expected}\n). Nothing was changed: read the file and make the diff from its current text."
            )
        lines[at : at + len(hunk.old)] = hunk.new
        offset += len(hunk.new) - len(hunk.old)
    return "\n".join(lines) + ("\n" if trailing and lines else "")


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

    def execute_internal(self, request: PatchRequest) -> PatchResponse:
        """Check every hunk, then write every file."""
        ws = self._workspace
        plan: list[tuple[Path, str | None, str | None]] = []  # (path, old text, new text)
        for patch in parse_diff(request.diff):
            label = patch.new_path or patch.old_path or "?"
            if patch.old_path is None:  # creation
                real = ws.resolve(label, write=True)
                if real.exists():
                    raise InvalidArgumentsError(f"The diff creates {label!r}, which already exists; diff against it.")
                plan.append((real, None, apply_hunks("", patch, repr(label))))
                continue
            real = existing_file(ws, patch.old_path, write=True)
            old = read_text(ws, real, patch.old_path)
            new = None if patch.new_path is None else apply_hunks(old, patch, repr(patch.old_path))
            if patch.new_path is not None and patch.new_path != patch.old_path:
                raise InvalidArgumentsError("Renames are not supported; patch the file in place, then use write.")
            plan.append((real, old, new))
        self._write(plan)
        rel = ws.relative
        return PatchResponse(
            changed=[rel(p) for p, old, new in plan if old is not None and new is not None],
            created=[rel(p) for p, old, _ in plan if old is None],
            deleted=[rel(p) for p, _, new in plan if new is None],
        )

    @staticmethod
    def _write(plan: list[tuple[Path, str | None, str | None]]) -> None:
        """Write every file; on a failure, put back those already written."""
        done: list[tuple[Path, str | None]] = []
        try:
            for path, old, new in plan:
                if new is None:
                    path.unlink()
                else:
                    os.makedirs(path.parent, exist_ok=True)
                    write_text(path, new)
                done.append((path, old))
        except OSError:
            for path, old in reversed(done):
                with contextlib.suppress(OSError):
                    if old is None:
                        path.unlink()
                    else:
                        write_text(path, old)
            raise
