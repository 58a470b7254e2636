"""What a tool message says to the model, and what the trace keeps of a call.

The model is shown ``{"status", "data"}`` or ``{"status", "error", "error_type"}``: what it
can act on. The envelope's metadata (request id, timestamps, durations, attempts) and the
error's structured ``details`` (the same field errors its message already states) cost
tokens on every call and change nothing the model does; they stay in the trace records.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping
from typing import Any

from orchestrator.graph._truncate import fit
from tools.result import ToolResult

_log = logging.getLogger(__name__)

_SURROGATES = re.compile("[\ud800-\udfff]")
TRACE_ARGUMENT_CHARS = 20_000
"""Longest argument text kept in a trace record (the rest is replaced by a note)."""


def model_view(result: ToolResult) -> dict[str, Any]:
    """The part of ``result`` the model is shown."""
    error = result.error
    if error is None:
        return {"status": result.status, "data": result.data}
    return {"status": result.status, "error": error.message, "error_type": error.type}


def wire_safe(text: str) -> str:
    """``text`` with lone surrogates (which UTF-8 cannot carry) replaced by U+FFFD.

    Length-preserving, so a text within a character limit stays within it; JSON text stays
    valid JSON (a surrogate can only stand inside a string literal).
    """
    if text.isascii():
        return text
    return _SURROGATES.sub("\ufffd", text)


def encode_view(view: dict[str, Any], max_chars: int) -> tuple[str, bool]:
    """The compact JSON of ``view`` cut to ``max_chars``, safe to send over the wire.

    Raises:
        TypeError, ValueError, RecursionError: ``view`` cannot be encoded as JSON (not
            serialisable, NaN, or nested too deeply).
    """
    text, truncated = fit(view, max_chars)
    return wire_safe(text), truncated


def shown_name(name: str, limit: int = 64) -> str:
    """A tool name as quoted in messages: bounded and wire-safe."""
    name = wire_safe(name)
    return name if len(name) <= limit else name[:limit] + "..."


def _reject_constant(value: str) -> Any:
    raise ValueError(f"{value} is not JSON")


def trace_arguments(arguments: Any) -> Any:
    """The arguments for the trace: a dict when they parse as a JSON object, else the text.

    Never raises: text that is not strict JSON (NaN, Infinity), nested too deeply to
    parse, or longer than `TRACE_ARGUMENT_CHARS` is kept as (cut) text.
    """
    if isinstance(arguments, Mapping):
        return dict(arguments)
    if isinstance(arguments, bytes):
        arguments = arguments.decode("utf-8", errors="replace")
    if not isinstance(arguments, str):
        return arguments
    if len(arguments) > TRACE_ARGUMENT_CHARS:
        omitted = len(arguments) - TRACE_ARGUMENT_CHARS
        return arguments[:TRACE_ARGUMENT_CHARS] + f"... ({omitted} more characters not kept)"
    try:
        parsed = json.loads(arguments, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return arguments
    return parsed if isinstance(parsed, dict) else arguments
