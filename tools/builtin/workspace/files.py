"""``read``, ``write`` and ``edit``: workspace files, paged and line-numbered, changed exactly."""

from __future__ import annotations

import itertools
import os

from pydantic import BaseModel, Field

from tools.base import BaseTool
from tools.builtin.workspace import _tree
from tools.builtin.workspace.workspace import Workspace
from tools.errors import InvalidArgumentsError
from tools.routing import CODING_TOOL_MANUALS_BY_NAME


class ReadRequest(BaseModel):
    """Arguments of ``read``."""

    path: str = Field(description="File path relative to the workspace root, e.g. 'src/app.py'.")
    offset: int = Field(default=1, ge=1, description="First line to return (1-based). Defaults to 1.")
    limit: int | None = Field(
        default=None, ge=1, description="Most lines to return. Defaults to the tool's maximum (2000)."
    )


class ReadResponse(BaseModel):
    """A page of a file."""

    path: str
    content: str = Field(description="The lines, each prefixed with its number and '|'.")
    first_line: int
    last_line: int
    total_lines: int | None = Field(description="Lines in the file, when the page reached its end.")
    next_offset: int | None = Field(description="Pass as offset to read on; None at the end of the file.")


class ReadTool(BaseTool[ReadRequest, ReadResponse]):
    """Reads a workspace text file in pages of numbered lines."""

    name = "read"
    description = (
        "Read a text file of the workspace. Returns numbered lines ('  12| text'); long files come in "
        "pages: call again with offset=next_offset to continue. Binary files are refused."
    )
    manual = CODING_TOOL_MANUALS_BY_NAME["read"]

    def __init__(self, workspace: Workspace) -> None:
        self._workspace = workspace

    def execute_internal(self, request: ReadRequest) -> ReadResponse:
        """Return one page of the file."""
        ws = self._workspace
        limit = min(request.limit or ws.limits.max_read_lines, ws.limits.max_read_lines)
        with _tree.open_for_reading(ws, request.path) as opened:
            if opened.is_dir:
                raise InvalidArgumentsError(
                    f"{request.path!r} is a directory; use glob to list its files, then read one of them."
                )
            if _tree.looks_binary(_tree.read_head(opened.fd)):
                raise InvalidArgumentsError(
                    f"{request.path!r} is a binary file; only text files can be read or edited."
                )
            lines, more = _page(opened.fd, request.offset, limit, ws.limits.max_line_chars)
        if not lines and request.offset > 1:
            raise InvalidArgumentsError(
                f"{request.path!r} has fewer than {request.offset} lines; use a smaller offset."
            )
        last = request.offset + len(lines) - 1
        return ReadResponse(
            path=opened.rel,
            content="\n".join(lines),
            first_line=request.offset,
            last_line=last,
            total_lines=None if more else last,
            next_offset=last + 1 if more else None,
        )


def _page(fd: int, offset: int, limit: int, cut: int) -> tuple[list[str], bool]:
    """Up to ``limit`` numbered lines from line ``offset``, and whether more follow."""
    lines: list[str] = []
    with open(os.dup(fd), encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(itertools.islice(handle, offset - 1, offset + limit), offset):
            if len(lines) == limit:
                return lines, True
            text = line.rstrip("\n")
            if len(text) > cut:
                text = text[:cut] + f"... [line cut at {cut} characters]"
            lines.append(f"{number:6d}| {text}")
    return lines, False


class WriteRequest(BaseModel):
    """Arguments of ``write``."""

    path: str = Field(description="File path relative to the workspace root; parent directories are created.")
    content: str = Field(description="The whole new content of the file.")


class WriteResponse(BaseModel):
    """What ``write`` did."""

    path: str
    created: bool
    bytes: int


class WriteTool(BaseTool[WriteRequest, WriteResponse]):
    """Creates or overwrites a workspace file."""

    name = "write"
    description = (
        "Create a file in the workspace, or replace a whole file. To change part of an existing file use "
        "edit (exact replacement) instead."
    )
    manual = CODING_TOOL_MANUALS_BY_NAME["write"]

    def __init__(self, workspace: Workspace) -> None:
        self._workspace = workspace

    def execute_internal(self, request: WriteRequest) -> WriteResponse:
        """Write the file atomically."""
        ws = self._workspace
        parts = _tree.target(ws, request.path)
        data = _tree.encode(request.content, "content")
        if len(data) > ws.limits.max_file_bytes:
            raise InvalidArgumentsError(
                f"The content is {len(data)} bytes, over the {ws.limits.max_file_bytes} bytes limit; "
                "write smaller files."
            )
        created = _tree.store(ws, parts, data, request.path)
        return WriteResponse(path="/".join(parts), created=created, bytes=len(data))


class EditRequest(BaseModel):
    """Arguments of ``edit``."""

    path: str = Field(description="File path relative to the workspace root.")
    old_string: str = Field(description="The exact text to replace, including indentation; must occur once.")
    new_string: str = Field(description="The text to put in its place.")
    replace_all: bool = Field(default=False, description="Replace every occurrence. Defaults to false.")


class EditResponse(BaseModel):
    """What ``edit`` did."""

    path: str
    replacements: int
    first_line: int = Field(description="Line of the first replacement.")


def _lines_of(text: str, needle: str, limit: int = 5) -> list[int]:
    lines: list[int] = []
    start = 0
    while len(lines) < limit:
        at = text.find(needle, start)
        if at < 0:
            break
        lines.append(text.count("\n", 0, at) + 1)
        start = at + max(len(needle), 1)
    return lines


class EditTool(BaseTool[EditRequest, EditResponse]):
    """Replaces an exact piece of text in a workspace file; refuses ambiguous matches."""

    name = "edit"
    description = (
        "Replace an exact piece of text in a workspace file. old_string must match the file exactly "
        "(whitespace included) and occur once; add surrounding lines to make it unique, or set "
        "replace_all=true. Read the file first."
    )
    manual = CODING_TOOL_MANUALS_BY_NAME["edit"]

    def __init__(self, workspace: Workspace) -> None:
        self._workspace = workspace

    def execute_internal(self, request: EditRequest) -> EditResponse:
        """Apply the replacement, or explain why not."""
        ws = self._workspace
        if request.old_string == request.new_string:
            raise InvalidArgumentsError("old_string and new_string are the same; there is nothing to change.")
        if not request.old_string:
            raise InvalidArgumentsError("old_string is empty; to create or replace a whole file use write.")
        loaded = _tree.load(ws, request.path)
        text = loaded.text
        count = text.count(request.old_string)
        if count == 0:
            hint = (
                " (it matches if whitespace is ignored: copy the indentation exactly)" if _loose(text, request) else ""
            )
            raise InvalidArgumentsError(
                f"old_string was not found in {request.path!r}{hint}. Read the file and copy the exact text."
            )
        if count > 1 and not request.replace_all:
            where = ", ".join(map(str, _lines_of(text, request.old_string)))
            raise InvalidArgumentsError(
                f"old_string occurs {count} times in {request.path!r} (lines {where}); include more surrounding "
                "lines so that it occurs once, or set replace_all=true."
            )
        first = _lines_of(text, request.old_string, 1)[0]
        new = _tree.encode(text.replace(request.old_string, request.new_string), "new_string")
        if len(new) > ws.limits.max_file_bytes:
            raise InvalidArgumentsError(
                f"The edited file would be {len(new)} bytes, over the {ws.limits.max_file_bytes} bytes limit."
            )
        _tree.store(ws, loaded.parts, new, request.path)
        return EditResponse(path=loaded.rel, replacements=count, first_line=first)


def _loose(text: str, request: EditRequest) -> bool:
    squeeze = " ".join
    return squeeze(request.old_string.split()) in squeeze(text.split())
