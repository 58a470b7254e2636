"""Where a value sits in a JSON text: the line of a path like ``tools/weather/http``.

Only used to word error messages, so it favours simplicity over speed: a small recursive
walk that mirrors :mod:`json`'s grammar and records the offset of every value.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

_WS = " \t\n\r"
_DECODER = json.JSONDecoder()


def _skip(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in _WS:
        pos += 1
    return pos


def _walk(text: str, pos: int, path: Sequence[str | int], depth: int) -> tuple[int, int | None]:
    """Parse the value at ``pos``; returns (end offset, offset of ``path`` inside it or None)."""
    pos = _skip(text, pos)
    found: int | None = pos if depth == len(path) else None
    if pos < len(text) and text[pos] == "{":
        pos = _skip(text, pos + 1)
        if text[pos] == "}":
            return pos + 1, found
        while True:
            key, pos = json.decoder.scanstring(text, pos + 1)  # type: ignore[attr-defined]
            pos = _skip(text, pos) + 1  # the colon
            wanted = found is None and depth < len(path) and str(path[depth]) == key
            pos, inner = _walk(text, pos, path, depth + 1) if wanted else (_walk(text, pos, (), 1)[0], None)
            found = found if found is not None else inner
            pos = _skip(text, pos)
            if text[pos] == "}":
                return pos + 1, found
            pos = _skip(text, pos + 1)
    if pos < len(text) and text[pos] == "[":
        pos = _skip(text, pos + 1)
        if text[pos] == "]":
            return pos + 1, found
        index = 0
        while True:
            wanted = found is None and depth < len(path) and path[depth] == index
            pos, inner = _walk(text, pos, path, depth + 1) if wanted else (_walk(text, pos, (), 1)[0], None)
            found = found if found is not None else inner
            pos = _skip(text, pos)
            if text[pos] == "]":
                return pos + 1, found
            pos, index = pos + 1, index + 1
    _, end = _DECODER.raw_decode(text, pos)
    return end, found


def line_of(text: str, path: Sequence[str | int]) -> int | None:
    """The 1-based line where the value at ``path`` starts, or of its deepest existing parent.

    Returns None when ``text`` is not valid JSON.
    """
    for size in range(len(path), -1, -1):
        try:
            _, offset = _walk(text, 0, path[:size], 0)
        except (ValueError, IndexError):
            return None
        if offset is not None:
            return text.count("\n", 0, offset) + 1
    return None
