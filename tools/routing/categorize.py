"""``categorize_tool``: a category for a tool that ships no manual (MCP, HTTP, CLI, ...).

The order is fixed: an explicit name map, then the server's default category, then a
heuristic on the words of the name, then ``file-read`` (the safe default).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from tools.routing.manual import RiskLevel, TokenCost, ToolCategory, ToolManual, ToolSource

if TYPE_CHECKING:
    from tools.base import BaseTool

# (words, category), tried in this order: "run_query" is search, "get_page" file-read.
_HEURISTIC: tuple[tuple[frozenset[str], ToolCategory], ...] = (
    (frozenset({"search", "find", "list", "query"}), ToolCategory.SEARCH),
    (frozenset({"create", "write", "update", "delete"}), ToolCategory.FILE_WRITE),
    (frozenset({"read", "get", "fetch", "view"}), ToolCategory.FILE_READ),
    (frozenset({"run", "execute", "invoke"}), ToolCategory.EXECUTION),
)
_WORD = re.compile(r"[A-Za-z][a-z]*|[0-9]+")
_LARGE_SCHEMA_CHARS = 2_000
_MEDIUM_SCHEMA_CHARS = 600


def _words(name: str) -> set[str]:
    """The lower-cased words of ``snake_case``, ``kebab-case`` and ``camelCase`` names."""
    return {word.lower() for word in _WORD.findall(name)}


def categorize_tool(
    name: str,
    *,
    server: str | None = None,
    description: str | None = None,
    known: Mapping[str, ToolCategory | str] | None = None,
    server_defaults: Mapping[str, ToolCategory | str] | None = None,
) -> ToolCategory:
    """The category of a tool from its name (and server).

    Args:
        name: The tool's name (as the server or API calls it).
        server: The MCP server or host it comes from.
        description: Its description (reserved for richer heuristics; not used by the rules).
        known: An explicit map of tool names to categories (checked first).
        server_defaults: Each server's default category (checked second).

    Returns:
        The first category the rules give; ``file-read`` when none applies.
    """
    del description  # the rules are name-based; kept for a stable signature
    if known and name in known:
        return ToolCategory(known[name])
    if server is not None and server_defaults and server in server_defaults:
        return ToolCategory(server_defaults[server])
    words = _words(name)
    for keywords, category in _HEURISTIC:
        if words & keywords:
            return category
    return ToolCategory.FILE_READ


def derive_manual(tool: BaseTool[Any, Any], *, source: ToolSource | None = None) -> ToolManual:
    """A manual for a tool that has none: category from :func:`categorize_tool`, token cost
    from the size of its schema, risk and mutation from the category."""
    import json

    name = tool.name
    category = categorize_tool(name, description=tool.description)
    size = len(json.dumps(tool._input_schema())) + len(tool.description)
    cost: TokenCost = "high" if size > _LARGE_SCHEMA_CHARS else "medium" if size > _MEDIUM_SCHEMA_CHARS else "low"
    mutating = category in (ToolCategory.FILE_WRITE, ToolCategory.EXECUTION)
    risk: RiskLevel = "dangerous" if category is ToolCategory.EXECUTION else "moderate" if mutating else "safe"
    from tools.function_tool import FunctionTool

    return ToolManual(
        name=name,
        description=tool.description[:300],
        category=category,
        source=source or ("function" if isinstance(tool, FunctionTool) else "builtin"),
        risk=risk,
        mutating=mutating,
        token_cost=cost,
    )
