"""``categorize_tool``: where routing places a tool whose category nobody declared.

Placement is for routing only and never makes a tool safe: risk and ``mutating`` come from
declarations or fail closed (:mod:`tools.manual`), and read-only profiles ignore a guess.
The order is fixed: an explicit name map, then the server's default category, then a
heuristic on the words of the name, then ``unclassified`` (which only the permissive
profile allows).

:func:`derive_manual` and :func:`external_manual` live in the core
(:mod:`tools._fail_closed`) and are re-exported here.
"""

from __future__ import annotations

from collections.abc import Mapping

from tools._fail_closed import derive_manual, external_manual
from tools._risk_words import name_words
from tools.manual import ToolCategory

__all__ = ["categorize_tool", "derive_manual", "external_manual"]

# (words, category), tried in this order: "run_query" is search, "get_page" file-read.
_HEURISTIC: tuple[tuple[frozenset[str], ToolCategory], ...] = (
    (frozenset({"search", "find", "list", "query"}), ToolCategory.SEARCH),
    (frozenset({"create", "write", "update", "delete"}), ToolCategory.FILE_WRITE),
    (frozenset({"read", "get", "fetch", "view"}), ToolCategory.FILE_READ),
    (frozenset({"run", "execute", "invoke"}), ToolCategory.EXECUTION),
)


def categorize_tool(
    name: str,
    *,
    server: str | None = None,
    description: str | None = None,
    known: Mapping[str, ToolCategory | str] | None = None,
    server_defaults: Mapping[str, ToolCategory | str] | None = None,
) -> ToolCategory:
    """The category routing places a tool in, from its name (and server).

    Args:
        name: The tool's name (as the server or API calls it).
        server: The MCP server or host it comes from.
        description: Its description (reserved for richer heuristics; not used by the rules).
        known: An explicit map of tool names to categories (checked first).
        server_defaults: Each server's default category (checked second).

    Returns:
        The first category the rules give; ``unclassified`` when none applies.
    """
    del description  # the rules are name-based; kept for a stable signature
    if known and name in known:
        return ToolCategory(known[name])
    if server is not None and server_defaults and server in server_defaults:
        return ToolCategory(server_defaults[server])
    words = set(name_words(name))
    for keywords, category in _HEURISTIC:
        if words & keywords:
            return category
    return ToolCategory.UNCLASSIFIED
