"""Tool-name rules shared by tools and the registry."""

from __future__ import annotations

import re

from tools.errors import InvalidToolNameError

TOOL_NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def check_tool_name(name: object, *, owner: str) -> str:
    """Return ``name`` if OpenAI accepts it as a function name, else raise.

    Args:
        name: The candidate name.
        owner: What carries the name (a class or a registration), for the error message.

    Raises:
        InvalidToolNameError: ``name`` is not a string matching ``^[a-zA-Z0-9_-]{1,64}$``.
    """
    if isinstance(name, str) and TOOL_NAME_PATTERN.fullmatch(name):
        return name
    suggestion = re.sub(r"[^a-zA-Z0-9_-]+", "_", str(name)).strip("_")[:64] or "my_tool"
    raise InvalidToolNameError(
        f"{owner}: tool name {name!r} is invalid; names must match ^[a-zA-Z0-9_-]{{1,64}}$ "
        f"(letters, digits, '_' and '-', at most 64 characters), e.g. {suggestion!r}."
    )
