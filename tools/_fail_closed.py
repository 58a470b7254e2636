"""Manuals for tools that ship none, failing closed (the core half of the risk model).

:func:`derive_manual` is what ``tool.get_manual()`` returns for a tool without a manual;
:func:`external_manual` builds the manual of a tool that runs elsewhere (MCP, HTTP, CLI,
binary) from what is known of it. Neither guesses risk *down*: an undeclared tool is
``moderate`` and ``mutating``; a risky word in its name or in the program it runs makes it
``dangerous``; a remote party's hints may raise risk, and lower it only for a server the
operator trusts. Neither guesses a category either: an undeclared one is ``unclassified``,
and the routing package places such tools by name for routing only
(:func:`tools.routing.categorize_tool`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from tools._risk_words import risky_program, risky_word
from tools.manual import (
    PROGRAM_SOURCES,
    ManualOrigin,
    RiskLevel,
    TokenCost,
    ToolCategory,
    ToolManual,
    ToolSource,
    risk_rank,
    riskiest,
)

if TYPE_CHECKING:
    from tools.base import BaseTool

_LARGE_SCHEMA_CHARS = 2_000
_MEDIUM_SCHEMA_CHARS = 600
_EXTERNAL = frozenset({"http", "cli", "mcp", "binary"})


def token_cost(schema: Mapping[str, Any] | None, description: str) -> TokenCost:
    """``low``, ``medium`` or ``high`` from the size of a tool's schema and description."""
    size = len(json.dumps(schema, default=str)) if schema else 0
    size += len(description)
    return "high" if size > _LARGE_SCHEMA_CHARS else "medium" if size > _MEDIUM_SCHEMA_CHARS else "low"


def derive_manual(tool: BaseTool[Any, Any], *, source: ToolSource | None = None) -> ToolManual:
    """The manual of a tool that ships none: nothing declared, so it fails closed.

    Risk ``moderate`` (``dangerous`` when its name destroys, sends, pays, deploys or
    executes), ``mutating=True``, category ``unclassified``; token cost from the size of its
    schema.

    Args:
        tool: The tool.
        source: Where it comes from (default: ``function`` for a function tool, else
            ``builtin``).
    """
    from tools.function_tool import FunctionTool

    external = _external_source(tool)
    if external is not None and source is None:
        # An external tool (tools.external) built without a manual: it runs a program or
        # reaches a remote party; a CLI tool's program counts like its name.
        command = getattr(getattr(getattr(tool, "config", None), "config", None), "command", None)
        programs = [command[0]] if external == "cli" and isinstance(command, list) and command else []
        return external_manual(
            tool.name,
            source=external,
            description=tool.description,
            programs=[p for p in programs if isinstance(p, str)],
            schema=tool._input_schema(),
        )
    return ToolManual(
        name=tool.name,
        description=tool.description[:300],
        source=source or ("function" if isinstance(tool, FunctionTool) else "builtin"),
        token_cost=token_cost(tool._input_schema(), tool.description),
    )


def _external_source(tool: BaseTool[Any, Any]) -> ToolSource | None:
    """The adapter type of a tool that carries an external tool config (``tool.config``)."""
    adapter = getattr(getattr(tool, "config", None), "adapter_type", None)
    return adapter if adapter in _EXTERNAL else None


def _placed(
    name: str, remote: str, known: Mapping[str, ToolCategory | str] | None, server_default: ToolCategory | str | None
) -> ToolCategory | None:
    """The category the operator declared for the tool (by remote then local name, then the
    server's default), else None."""
    for key in (remote, name):
        if known and key in known:
            return ToolCategory(known[key])
    return ToolCategory(server_default) if server_default is not None else None


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
    trusted: bool = False,
    risk_hint: RiskLevel | None = None,
    category_hint: ToolCategory | str | None = None,
    programs: Iterable[str] = (),
    words: Iterable[str] = (),
    schema: Mapping[str, Any] | None = None,
    capabilities: Iterable[str] = (),
) -> ToolManual:
    """The manual of a tool that runs elsewhere (MCP, HTTP, CLI, binary, adopted).

    Nothing here is declared by the tool's author, so it fails closed: ``moderate`` and
    ``mutating``; ``dangerous`` when a word of its local or remote name (or a program it
    runs) destroys, sends, pays, deploys or executes. The remote party's hints (MCP's
    ``readOnlyHint`` / ``destructiveHint``, a catalog's claims) may raise risk; they lower
    it (and declare ``mutating=False``) only when ``trusted``, and never below ``moderate``
    for a tool that runs a program.

    Args:
        name: The local (registered) name, possibly prefixed.
        source: Where it runs (``mcp``, ``http``, ``cli``, ``binary``, ``module``).
        server: The MCP server or host.
        remote_name: The server's name for the tool (default: ``name``).
        description: The tool's description.
        known: Categories the operator declared, by tool name (the server's, then local).
        server_default: The category the operator declared for this server's other tools.
        read_only: The remote party says the tool changes nothing (True) or changes things.
        destructive: The remote party says the tool may (True) or may not destroy data.
        trusted: The operator trusts the remote party's hints (MCP server config ``trusted``).
        risk_hint: A risk level the remote party claims (a catalog entry's).
        category_hint: A category the remote party claims (used when none is declared).
        programs: The programs a CLI tool or binary runs (argv[0] of each command).
        words: More names whose words count like the tool's name (its actions, a CLI tool's
            literal arguments).
        schema: The tool's input schema (for the token cost).
        capabilities: Capability tags (the remote name is added when it differs).
    """
    remote = remote_name or name
    origin = ManualOrigin()
    risk: RiskLevel = "moderate"
    category = _placed(name, remote, known, server_default)
    if category is not None:
        origin = origin.model_copy(update={"category": "operator"})
    elif category_hint is not None:
        category = ToolCategory(category_hint)
        origin = origin.model_copy(update={"category": "hint"})
    risk, origin = _raise_by_name(
        risk, origin, names=(remote, name), words=tuple(words), programs=programs, source=source
    )
    risk, mutating, origin = _apply_hints(
        risk, origin, read_only=read_only, destructive=destructive, risk_hint=risk_hint, trusted=trusted, source=source
    )
    tags = tuple(dict.fromkeys((*capabilities, *((remote,) if remote != name else ()))))
    return ToolManual(
        name=name,
        description=description[:300],
        category=category or ToolCategory.UNCLASSIFIED,
        source=source,
        server=server or None,
        risk=risk,
        mutating=mutating,
        token_cost=token_cost(schema, description),
        capabilities=tags,
        origin=origin,
    )


def _raise_by_name(
    risk: RiskLevel,
    origin: ManualOrigin,
    *,
    names: Iterable[str],
    words: Iterable[str],
    programs: Iterable[str],
    source: str,
) -> tuple[RiskLevel, ManualOrigin]:
    """``dangerous`` when a name, word or program says so; the origin says which."""
    found = risky_word(*names)
    said = f"its name says {found[0]!r} ({found[1]})" if found else None
    if said is None:
        found = risky_word(*words)
        said = f"it says {found[0]!r} ({found[1]})" if found else None
    for program in () if said else programs:
        hit = risky_program(program)
        if hit is not None:
            said = f"it runs the program {program!r} ({hit[1]})"
            break
    if said is not None:
        return "dangerous", origin.model_copy(update={"risk": "name"}).noted(said)
    if source in PROGRAM_SOURCES:
        return risk, origin.model_copy(update={"risk": "program"})
    return risk, origin


def _apply_hints(
    risk: RiskLevel,
    origin: ManualOrigin,
    *,
    read_only: bool | None,
    destructive: bool | None,
    risk_hint: RiskLevel | None,
    trusted: bool,
    source: str,
) -> tuple[RiskLevel, bool, ManualOrigin]:
    """Risk and mutating after a remote party's hints: raise always, lower only if trusted."""
    mutating = True
    claimed: RiskLevel | None = risk_hint
    if destructive:
        claimed = "dangerous"
    elif trusted and read_only:
        claimed = claimed or "safe"
    elif trusted and (read_only is False or destructive is False):
        claimed = claimed or "moderate"
    if claimed is not None and risk_rank(claimed) > risk_rank(risk):
        risk = claimed
        origin = origin.model_copy(update={"risk": "trusted-hint" if trusted else "hint"}).noted(
            f"the {'trusted ' if trusted else ''}server marks it {claimed}"
            + (" (destructiveHint)" if destructive else "")
        )
    elif claimed is not None and trusted and risk_rank(claimed) < risk_rank(risk):
        floor: RiskLevel = "moderate" if source in PROGRAM_SOURCES else "safe"
        lowered = riskiest(claimed, floor)
        if lowered != risk:
            origin = origin.model_copy(update={"risk": "trusted-hint"}).noted(
                f"the trusted server marks it {claimed}, which lowers the risk to {lowered}"
            )
            risk = lowered
    elif claimed is not None and not trusted and risk_rank(claimed) < risk_rank(risk):
        origin = origin.noted(f"the server claims it is {claimed}; ignored: the server is not trusted")
    elif destructive:
        origin = origin.noted("the server marks it destructive (destructiveHint)")
    if read_only is not None and trusted and not (read_only and destructive):
        mutating = not read_only
        origin = origin.model_copy(update={"mutating": "trusted-hint"})
    elif read_only and not trusted:
        origin = origin.noted("readOnlyHint ignored: the server is not trusted (mutating assumed)")
    return risk, mutating, origin
