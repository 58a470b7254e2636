"""``categorize_tool``: a category for a tool that ships no manual (MCP, HTTP, CLI, ...).

The order is fixed: an explicit name map, then the server's default category, then a
heuristic on the words of the name, then ``file-read`` (the safe default).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from tools.manual import RiskLevel, TokenCost, ToolCategory, ToolManual, ToolSource

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


def _cost(schema: Mapping[str, Any] | None, description: str) -> TokenCost:
    import json

    size = len(json.dumps(schema, default=str)) if schema else 0
    size += len(description)
    return "high" if size > _LARGE_SCHEMA_CHARS else "medium" if size > _MEDIUM_SCHEMA_CHARS else "low"


def _risk(category: ToolCategory, mutating: bool, destructive: bool | None) -> RiskLevel:
    if destructive or category is ToolCategory.EXECUTION:
        return "dangerous"
    return "moderate" if mutating or category is ToolCategory.WEB else "safe"


def derive_manual(tool: BaseTool[Any, Any], *, source: ToolSource | None = None) -> ToolManual:
    """A manual for a tool that has none: category from :func:`categorize_tool`, token cost
    from the size of its schema, risk and mutation from the category."""
    from tools.function_tool import FunctionTool

    category = categorize_tool(tool.name, description=tool.description)
    mutating = category in (ToolCategory.FILE_WRITE, ToolCategory.EXECUTION)
    return ToolManual(
        name=tool.name,
        description=tool.description[:300],
        category=category,
        source=source or ("function" if isinstance(tool, FunctionTool) else "builtin"),
        risk=_risk(category, mutating, None),
        mutating=mutating,
        token_cost=_cost(tool._input_schema(), tool.description),
    )


def external_manual(
    name: str,
    *,
    source: ToolSource,
    server: str | None = None,
    remote_name: str | None = None,
    description: str = "",
    known: Mapping[str, ToolCategory | str] | None = None,
    server_default: ToolCategory | str | None = None,
    read_only: bool | None = None,
    destructive: bool | None = None,
    schema: Mapping[str, Any] | None = None,
) -> ToolManual:
    """The manual of a tool that runs elsewhere (MCP, HTTP, CLI, binary, adopted).

    The category comes from :func:`categorize_tool`: ``known`` (looked up by the server's
    name for the tool, then by the local name), then ``server_default``, then the name
    heuristic. The server's hints decide mutation and risk when given (MCP's
    ``readOnlyHint`` and ``destructiveHint``), else the category does; a tool the heuristic
    would call ``file-read`` but the server marks as not read-only (or destructive) is
    ``file-write``, so read-only agents never get it on a guess.

    Args:
        name: The local (registered) name, possibly prefixed.
        source: Where it runs (``mcp``, ``http``, ``cli``, ``binary``, ``module``).
        server: The MCP server or host.
        remote_name: The server's name for the tool (default: ``name``).
        description: The tool's description.
        known: Explicit categories by tool name.
        server_default: The category of this server's tools that ``known`` does not name.
        read_only: The server says the tool changes nothing (True) or changes things (False).
        destructive: The server says the tool may destroy data.
        schema: The tool's input schema (for the token cost).
    """
    remote = remote_name or name
    if known and remote not in known and name in known:
        remote = name
    defaults = {server or "": server_default} if server_default is not None else None
    category = categorize_tool(
        remote, server=server or "", description=description, known=known, server_defaults=defaults
    )
    explicit = bool(known and remote in known) or server_default is not None
    if not explicit and category is ToolCategory.FILE_READ and (read_only is False or destructive):
        # The name looked like a read, but the server says the tool changes things
        # (``git_commit``): never hand it to read-only agents on a guess.
        category = ToolCategory.FILE_WRITE
    mutating = (
        (not read_only) if read_only is not None else category in (ToolCategory.FILE_WRITE, ToolCategory.EXECUTION)
    )
    return ToolManual(
        name=name,
        description=description[:300],
        category=category,
        source=source,
        server=server or None,
        risk=_risk(category, mutating, destructive),
        mutating=mutating,
        token_cost=_cost(schema, description),
        capabilities=(remote,) if remote != name else (),
    )
