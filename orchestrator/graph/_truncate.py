"""Cutting an oversized tool result so that the tool message is still valid JSON.

The cut keeps the envelope (``status``, ``error``, ``error_type``), shortens ``data`` (whole
items of a list; otherwise a prefix of its text) and adds a ``truncated`` object that says
how much was cut, so the model knows it did not see everything.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

MIN_OUTPUT_CHARS = 512


# A constant encoder: json.dumps would build a new one per call (a third of the cost).
_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def dumps(value: Any) -> str:
    """Compact JSON (``separators=(",", ":")``), non-ASCII kept as is, NaN refused."""
    return _ENCODER.encode(value)


def _largest(low: int, high: int, fits: Callable[[int], bool]) -> int:
    """The largest n in [low, high] with fits(n), assuming fits is monotone and fits(low)."""
    while low < high:
        mid = (low + high + 1) // 2
        if fits(mid):
            low = mid
        else:
            high = mid - 1
    return low


def _note(original: int, kept: int, max_chars: int, items: tuple[int, int] | None) -> Any:
    note: dict[str, Any] = {
        "original_chars": original,
        "omitted_chars": max(0, original - kept),
        "note": f"Output cut to {max_chars} characters; ask for less (a narrower query, fewer items) to see the rest.",
    }
    if items is not None:
        note["items_shown"], note["items_total"] = items
    return note


def _slim(result: dict[str, Any]) -> dict[str, Any]:
    """The envelope without its payload, with bounded error text."""
    base = {k: v for k, v in result.items() if k not in ("data", "details")}
    if isinstance(base.get("error"), str) and len(base["error"]) > 2000:
        base["error"] = base["error"][:2000] + "..."
    return base


def fit(result: dict[str, Any], max_chars: int) -> tuple[str, bool]:
    """The compact JSON of ``result``, cut to at most ``max_chars`` characters.

    Args:
        result: A JSON-serialisable result dict (what the model is shown of a result).
        max_chars: The limit, at least `MIN_OUTPUT_CHARS`.

    Returns:
        The JSON text and whether it was cut.

    Raises:
        TypeError, ValueError: ``result`` is not JSON-serialisable.
        RecursionError: ``result`` is nested too deeply to encode.
    """
    text = dumps(result)
    if len(text) <= max_chars:
        return text, False
    original = len(text)
    base = _slim(result)
    data = result.get("data")
    if isinstance(data, list):

        def render_items(k: int) -> str:
            kept = len(dumps(data[:k]))
            note = _note(original, kept, max_chars, (k, len(data)))
            return dumps({**base, "data": data[:k], "truncated": note})

        if len(render_items(0)) <= max_chars:
            high = min(len(data), max_chars)  # every item costs at least one character
            k = _largest(0, high, lambda n: len(render_items(n)) <= max_chars)
            return render_items(k), True
    source = data if isinstance(data, str) else ("" if data is None else dumps(data))

    def render_text(n: int) -> str:
        note = _note(original, n, max_chars, None)
        return dumps({**base, "data": source[:n], "truncated": note})

    if len(render_text(0)) > max_chars:  # the envelope alone is too big: keep the bare minimum
        base = {k: base[k] for k in ("status", "error_type") if k in base}
        if len(render_text(0)) > max_chars:
            return dumps({"status": result.get("status"), "truncated": True}), True
    n = _largest(0, len(source), lambda m: len(render_text(m)) <= max_chars)
    return render_text(n), True
