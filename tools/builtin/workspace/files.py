"""``read``, ``write`` and ``edit``: workspace files, paged and line-numbered, changed exactly."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

from pydantic import BaseModel, Field

from tools._files import atomic_write_text
from tools.base import BaseTool
from tools.builtin.workspace.workspace import Workspace
from tools.errors import InvalidArgumentsError
from tools.routing import CODING_TOOL_MANUALS_BY_NAME

_SNIFF = 8192


def is_binary(path: Path) -> bool:
    """Whether ``path`` looks binary (a NUL byte or undecodable UTF-8 in its first 8 KiB)."""
    with path.open("rb") as handle:
        head = handle.read(_SNIFF)
    if b"\x00" in head:
        return True
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start < len(head) - 4  # a character cut at the sniff boundary is fine
    return False


def existing_file(workspace: Workspace, path: str, *, write: bool = False) -> Path:
    """The real path of an existing text file, or a model-facing error."""
    real = workspace.resolve(path, write=write)
    if real.is_dir():
        raise InvalidArgumentsError(f"{path!r} is a directory; use glob to list its files, then read one of them.")
    if not real.is_file():
        raise InvalidArgumentsError(f"{path!r} does not exist in the workspace; use glob to find the right path.")
    if is_binary(real):
        raise InvalidArgumentsError(f"{path!r} is a binary file; only text files can be read or edited.")
    return real


def read_text(workspace: Workspace, real: Path, path: str) -> str:
    """The whole text of a file that edit/patch may rewrite (size-checked)."""
    size = real.stat().st_size
    if size > workspace.limits.max_file_bytes:
        raise InvalidArgumentsError(
            f"{path!r} is {size} bytes, over the {workspace.limits.max_file_bytes} bytes this tool rewrites; "
            "change it with bash in the sandbox instead."
        )
    try:
        return real.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InvalidArgumentsError(f"{path!r} is not UTF-8 text; it can't be edited here.") from None


def write_text(real: Path, text: str) -> None:
    """Replace the file atomically, keeping its permission bits."""
    atomic_write_text(real, text)


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
        real = existing_file(ws, request.path)
        limit = min(request.limit or ws.limits.max_read_lines, ws.limits.max_read_lines)
        cut = ws.limits.max_line_chars
        lines: list[str] = []
        more = False
        with real.open(encoding="utf-8", errors="replace") as handle:
            page = itertools.islice(handle, request.offset - 1, request.offset - 1 + limit + 1)
            for number, line in enumerate(page, request.offset):
                if len(lines) == limit:
                    more = True
                    break
                text = line.rstrip("\n")
                if len(text) > cut:
                    text = text[:cut] + f"... [line cut at {cut} characters]"
                lines.append(f"{number:6d}| {text}")
        if not lines and request.offset > 1:
            raise InvalidArgumentsError(
                f"{request.path!r} has fewer than {request.offset} lines; use a smaller offset."
            )
        last = request.offset + len(lines) - 1
        return ReadResponse(
            path=ws.relative(real),
            content="\n".join(lines),
            first_line=request.offset,
            last_line=last,
            total_lines=None if more else last,
            next_offset=last + 1 if more else None,
        )


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
        real = ws.resolve(request.path, write=True)
        if real.is_dir():
            raise InvalidArgumentsError(f"{request.path!r} is a directory; pass a file path such as 'src/new.py'.")
        size = len(request.content.encode("utf-8", "surrogatepass"))
        if size > ws.limits.max_file_bytes:
            raise InvalidArgumentsError(
                f"The content is {size} bytes, over the {ws.limits.max_file_bytes} bytes limit; write smaller files."
            )
        created = not real.exists()
        os.makedirs(real.parent, exist_ok=True)
        write_text(real, request.content)
        return WriteResponse(path=ws.relative(real), created=created, bytes=size)


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
        real = existing_file(ws, request.path, write=True)
        text = read_text(ws, real, request.path)
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
        write_text(real, text.replace(request.old_string, request.new_string))
        return EditResponse(path=ws.relative(real), replacements=count, first_line=first)


def _loose(text: str, request: EditRequest) -> bool:
    squeeze = " ".join
    return squeeze(request.old_string.split()) in squeeze(text.split())
