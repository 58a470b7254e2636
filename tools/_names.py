"""The tool-name rule (OpenAI's), in one place: checking and deriving names."""

from __future__ import annotations

import re

from tools.errors import InvalidToolNameError

#: OpenAI's function-name rule, as a pattern string (for pydantic ``Field(pattern=...)``).
TOOL_NAME_RULE = r"^[a-zA-Z0-9_-]{1,64}$"
MAX_TOOL_NAME = 64
TOOL_NAME_PATTERN = re.compile(TOOL_NAME_RULE)
_DISALLOWED = re.compile(r"[^a-zA-Z0-9_-]+")


def is_tool_name(name: object) -> bool:
    """True when ``name`` is a string OpenAI accepts as a function name."""
    return isinstance(name, str) and TOOL_NAME_PATTERN.fullmatch(name) is not None


def sanitize_tool_name(text: str, prefix: str | None = None, *, fallback: str = "tool") -> str:
    """A valid name from ``text``: runs of other characters -> ``_``, prefixed, cut to 64."""
    clean = _DISALLOWED.sub("_", text).strip("_") or fallback
    full = f"{prefix}_{clean}" if prefix else clean
    return full[:MAX_TOOL_NAME]


def check_tool_name(name: object, *, owner: str) -> str:
    """Return ``name`` if OpenAI accepts it as a function name, else raise.

    Args:
        name: The candidate name.
        owner: What carries the name (a class or a registration), for the error message.

    Raises:
        InvalidToolNameError: ``name`` is not a string matching ``^[a-zA-Z0-9_-]{1,64}$``.
    """
    if is_tool_name(name):
        return name  # type: ignore[return-value]
    suggestion = sanitize_tool_name(str(name), fallback="my_tool")
    raise InvalidToolNameError(
        f"{owner}: tool name {name!r} is invalid; names must match ^[a-zA-Z0-9_-]{{1,64}}$ "
        f"(letters, digits, '_' and '-', at most 64 characters), e.g. {suggestion!r}."
    )
