"""The answer to a call of a tool that is not registered: the closest names and the others."""

from __future__ import annotations

from typing import Any

from tools.base import BaseTool
from tools.result import ErrorInfo

_SHOWN = 30


def unknown_tool(name: object, names: list[str]) -> tuple[BaseTool[Any, Any], ErrorInfo]:
    """A stand-in tool for the envelope's metadata and the ``unknown_tool`` error naming the
    closest registered names (and up to 30 of them)."""
    sent = str(name)
    close = _suggestions(sent, names)
    message = f"Unknown tool {sent[:100]!r}."
    if close:
        message += " Did you mean: " + ", ".join(repr(c) for c in close) + "?"
    shown = names[:_SHOWN]
    message += (
        " Available tools: "
        + (", ".join(shown) if shown else "none")
        + (f" (and {len(names) - _SHOWN} more)." if len(names) > _SHOWN else ".")
    )
    info = ErrorInfo("unknown_tool", message, False, {"suggestions": close, "available": shown})
    return _Placeholder(sent[:64]), info


def _suggestions(name: str, names: list[str]) -> list[str]:
    """Up to three registered names close to ``name``: by similarity, then by substring."""
    import difflib

    lowered = name.lower()
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.5)
    if lowered:
        close += [n for n in names if n not in close and (lowered in n.lower() or n.lower() in lowered)]
    return close[:3]


class _Placeholder(BaseTool[Any, Any]):
    """Stands in for a tool that does not exist, to build its error envelope."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.version = ""

    def execute_internal(self, request: Any) -> Any:  # pragma: no cover - never called
        raise NotImplementedError
