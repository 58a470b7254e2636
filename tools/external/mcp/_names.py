"""Model-facing names for server tools: ``^[a-zA-Z0-9_-]{1,64}$``, unique, optionally prefixed."""

from __future__ import annotations

from collections.abc import Iterable

from tools._names import MAX_TOOL_NAME, is_tool_name, sanitize_tool_name
from tools.external.mcp._connect import MCPConfigError


def check_prefix(prefix: str | None) -> str | None:
    """Return ``prefix`` if it can start a tool name (at most 32 characters), else raise.

    Raises:
        MCPConfigError: the prefix has characters outside ``[a-zA-Z0-9_-]`` or is too long.
    """
    if prefix is None or prefix == "":
        return None
    if not is_tool_name(prefix) or len(prefix) > 32:
        raise MCPConfigError(
            f"MCP tool prefix {prefix!r} is invalid: use 1-32 letters, digits, '_' or '-', e.g. 'git'."
        )
    return prefix


def local_names(remote: Iterable[str], prefix: str | None = None) -> dict[str, str]:
    """Map each remote tool name to a unique valid local name (``_2``, ``_3``... on clashes).

    Names are assigned in the given order, so the mapping is stable for a stable listing.
    """
    taken: set[str] = set()
    out: dict[str, str] = {}
    for name in remote:
        if name in out:
            continue
        base = sanitize_tool_name(name, prefix)
        candidate, n = base, 1
        while candidate in taken:
            n += 1
            suffix = f"_{n}"
            candidate = base[: MAX_TOOL_NAME - len(suffix)] + suffix
        taken.add(candidate)
        out[name] = candidate
    return out
