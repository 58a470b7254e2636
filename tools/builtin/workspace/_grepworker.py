"""The RE2 ``grep`` worker: a child process that searches below an inherited descriptor.

RE2 matches in time linear in the text, but a linear bound is not a small one: a pattern
that compiles to 10,000 instructions (``(.*){1000}$``) needs minutes on a 10 MB line, and a
C call can't be interrupted from Python. So the search runs here, in a child the host
kills when the call's time is up (``tools.builtin.workspace._grepengine``).

The host opens the directory (or file) to search through the workspace root's descriptor
and passes the descriptor down; this process walks below it with ``openat`` and
``O_NOFOLLOW`` (``tools._openat.walk``), so a symlink, or a directory swapped for one
mid-search, never takes it out of the workspace. It imports only the stdlib, ``re2`` and
the stdlib-only ``tools`` modules (the host stubs the packages, so no ``__init__`` runs).

Job (JSON on stdin): ``pattern``, ``ignore_case``, ``max_mem``, ``fd``, ``kind``
(``dir``/``file``), ``name`` (the file's path when ``kind`` is ``file``), ``include`` (an
RE2 expression or null), ``include_path`` (match it against the relative path rather than
the name), ``skip_dirs``, ``max_file_bytes``, ``max_results``, ``max_line_chars``.
Output: one JSON object per line, ``{"p": path, "l": line, "t": text}`` per matching
line, then ``{"done": true, "truncated": bool}``.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Iterator
from typing import IO, Any

import re2

from tools import _openat
from tools.builtin.workspace._tree import looks_binary

_SNIFF = 8192


def regex_options(*, max_mem: int, ignore_case: bool = False) -> re2.Options:
    """RE2 options of every model-given expression: bounded memory, silent errors, and
    no match across a line break (grep matches lines)."""
    options = re2.Options()
    options.max_mem = max_mem
    options.log_errors = False
    options.never_nl = True
    options.case_sensitive = not ignore_case
    return options


def re2_message(exc: Exception) -> str:
    """The text of an ``re2.error`` (its argument is bytes)."""
    arg = exc.args[0] if exc.args else exc
    return arg.decode("utf-8", "replace") if isinstance(arg, bytes) else str(arg)


def compile_lines(pattern: str, *, max_mem: int, ignore_case: bool = False) -> Any:
    """``pattern`` compiled to search bytes line by line (``^``/``$`` at line ends).

    Raises:
        re2.error: not valid RE2 syntax, or over ``max_mem``.
    """
    return re2.compile(b"(?m)" + pattern.encode("utf-8"), regex_options(max_mem=max_mem, ignore_case=ignore_case))


def matching_lines(regex: Any, data: bytes) -> Iterator[tuple[int, bytes]]:
    """``(line number, line)`` of each line of ``data`` where ``regex`` matches (the end
    of a file after its last newline is not a line)."""
    end = len(data) - 1 if data.endswith(b"\n") else len(data)
    pos = counted = 0
    number = 1
    while data and pos <= end:
        match = regex.search(data, pos, end)
        if match is None:
            return
        start = data.rfind(b"\n", 0, match.start()) + 1
        stop = data.find(b"\n", match.end())
        stop = len(data) if stop < 0 else stop
        number += data.count(b"\n", counted, start)
        counted = start
        yield number, data[start:stop]
        pos = stop + 1


def _files(job: dict[str, Any]) -> Iterator[tuple[str, int | None, str]]:
    """``(relative path, parent fd, name)`` of each regular file to search; a ``None``
    parent means the job's descriptor is the file itself."""
    if job["kind"] == "file":
        yield job["name"], None, ""
        return
    include = re2.compile(job["include"], regex_options(max_mem=job["max_mem"])) if job["include"] else None
    for rel, name, parent, info in _openat.walk(job["fd"], skip_dirs=frozenset(job["skip_dirs"])):
        if not stat.S_ISREG(info.st_mode):
            continue
        if include is None or include.fullmatch(rel if job["include_path"] else name):
            yield rel, parent, name


def _read(job: dict[str, Any], parent: int | None, name: str) -> bytes | None:
    """The file's bytes, or None when it is too large, binary, or no longer a plain file."""
    try:
        fd = os.dup(job["fd"]) if parent is None else os.open(name, _openat.READ_FLAGS, dir_fd=parent)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > job["max_file_bytes"]:
            return None
        data = os.pread(fd, job["max_file_bytes"] + 1, 0)
    except OSError:
        return None
    finally:
        os.close(fd)
    if len(data) > job["max_file_bytes"] or looks_binary(data[:_SNIFF]):
        return None
    return data


def search(job: dict[str, Any], out: IO[str]) -> None:
    """Run one job, writing its JSON lines to ``out``."""
    regex = compile_lines(job["pattern"], max_mem=job["max_mem"], ignore_case=job["ignore_case"])
    found = 0
    cut = job["max_line_chars"]
    for rel, parent, name in _files(job):
        data = _read(job, parent, name)
        if data is None:
            continue
        for number, line in matching_lines(regex, data):
            if found == job["max_results"]:
                out.write(json.dumps({"done": True, "truncated": True}) + "\n")
                return
            text = line.rstrip(b"\r").decode("utf-8", "replace")[:cut]
            out.write(json.dumps({"p": rel, "l": number, "t": text}) + "\n")
            found += 1
    out.write(json.dumps({"done": True, "truncated": False}) + "\n")


def main() -> None:
    """Read the job from stdin, search, write the results to stdout."""
    job = json.loads(sys.stdin.read())
    try:
        search(job, sys.stdout)
    except re2.error as exc:
        sys.stdout.write(json.dumps({"error": re2_message(exc)}) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":  # pragma: no cover - started through the host's bootstrap
    main()
