"""``AgentToolProfile`` and ``DEFAULT_AGENT_PROFILES``: which tools each agent type is given.

A profile allows whole categories of tools, denies some tools by name (even when their
category is allowed: "the reviewer never gets edit") and requires others (even when their
category is not). The ten default profiles are those of the routing spec, written for the
coding tools of :data:`tools.routing.CODING_TOOL_MANUALS`; tooldeck's own categories
(``context``, ``memory``, ``compute``) are allowed only by ``main`` and by custom profiles.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from tools._names import is_tool_name
from tools.manual import ToolCategory
from tools.routing.errors import RoutingConfigError

_AGENT_TYPE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
ALL_CATEGORIES: tuple[ToolCategory, ...] = tuple(ToolCategory)
#: Every category a tool can be placed in (all but ``unclassified``).
PLACED_CATEGORIES: tuple[ToolCategory, ...] = tuple(c for c in ToolCategory if c is not ToolCategory.UNCLASSIFIED)


def allowed_values() -> str:
    """The category values, comma-separated (for error messages)."""
    return ", ".join(c.value for c in ToolCategory)


def as_categories(values: Iterable[ToolCategory | str], *, owner: str) -> tuple[ToolCategory, ...]:
    """Categories from enum members or their string values, duplicates dropped, order kept.

    Raises:
        RoutingConfigError: a value is not a category; the message lists the allowed ones.
    """
    if isinstance(values, str):
        raise RoutingConfigError(f"{owner}: expected a list of categories, got the string {values!r}")
    out: list[ToolCategory] = []
    for value in values:
        try:
            category = ToolCategory(value)
        except ValueError:
            raise RoutingConfigError(
                f"{owner}: unknown category {str(value)[:80]!r}; allowed values: {allowed_values()}"
            ) from None
        if category not in out:
            out.append(category)
    return tuple(out)


def as_tool_names(values: Iterable[str], *, owner: str) -> tuple[str, ...]:
    """Tool names, checked against the name rule, duplicates dropped, order kept.

    Raises:
        RoutingConfigError: a value is not a valid tool name.
    """
    if isinstance(values, str):
        raise RoutingConfigError(f"{owner}: expected a list of tool names, got the string {values!r}")
    out: list[str] = []
    for value in values:
        if not is_tool_name(value):
            raise RoutingConfigError(
                f"{owner}: {str(value)[:80]!r} is not a tool name (letters, digits, '_' and '-', 1-64 characters)"
            )
        if value not in out:
            out.append(value)
    return tuple(out)


@dataclass(frozen=True)
class AgentToolProfile:
    """The tools an agent type is given (frozen; validated when built).

    Attributes:
        agent_type: The agent type this profile is for (e.g. ``"reviewer"``).
        allowed_categories: Tools whose primary or a secondary category is among these are
            candidates.
        denied_tools: Tool names removed even when their category is allowed.
        required_tools: Tool names added even when their category is not allowed (when
            registered).
        max_tool_count: At most this many tools (required ones first, then registration
            order); None for no limit.
        description: What the agent does (for people reading ``explain``).
        read_only: Give only tools whose ``mutating=False`` was declared (by the tool's
            author, the operator or a trusted server), whatever their category, even
            required ones; a default never counts.

    Raises:
        RoutingConfigError: an unknown category, a bad tool name, a tool both denied and
            required, or ``max_tool_count`` below the number of required tools.
    """

    agent_type: str
    allowed_categories: tuple[ToolCategory, ...] = ()
    denied_tools: tuple[str, ...] = ()
    required_tools: tuple[str, ...] = ()
    max_tool_count: int | None = None
    description: str = field(default="", compare=False)
    read_only: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.agent_type, str) or not _AGENT_TYPE.match(self.agent_type):
            raise RoutingConfigError(
                f"agent type {str(self.agent_type)[:80]!r} is not valid: use 1-64 letters, digits, '_', '.' or '-'"
            )
        owner = f"profile {self.agent_type!r}"
        object.__setattr__(
            self, "allowed_categories", as_categories(self.allowed_categories, owner=f"{owner} allowed_categories")
        )
        object.__setattr__(self, "denied_tools", as_tool_names(self.denied_tools, owner=f"{owner} denied_tools"))
        object.__setattr__(self, "required_tools", as_tool_names(self.required_tools, owner=f"{owner} required_tools"))
        both = [name for name in self.required_tools if name in self.denied_tools]
        if both:
            raise RoutingConfigError(
                f"{owner} both denies and requires {', '.join(map(repr, both))}: "
                "remove each from denied_tools or from required_tools"
            )
        if not isinstance(self.read_only, bool):
            raise RoutingConfigError(f"{owner}: read_only must be True or False, got {self.read_only!r}")
        count = self.max_tool_count
        if count is not None and (isinstance(count, bool) or not isinstance(count, int) or count < 0):
            raise RoutingConfigError(f"{owner}: max_tool_count must be a whole number >= 0 or None, got {count!r}")
        if count is not None and count < len(self.required_tools):
            raise RoutingConfigError(
                f"{owner}: max_tool_count={count} is below its {len(self.required_tools)} required tools "
                f"({', '.join(self.required_tools)}): raise max_tool_count to at least "
                f"{len(self.required_tools)} or require fewer tools"
            )


def permissive_profile(agent_type: str) -> AgentToolProfile:
    """The profile used for an agent type that has none: every category, nothing denied."""
    return AgentToolProfile(
        agent_type=agent_type,
        allowed_categories=ALL_CATEGORIES,
        description="No profile for this agent type: every category is allowed.",
    )


_FR, _FW, _EX = ToolCategory.FILE_READ, ToolCategory.FILE_WRITE, ToolCategory.EXECUTION
_WEB, _PLAN, _DEL = ToolCategory.WEB, ToolCategory.PLANNING, ToolCategory.DELEGATION
_SEARCH, _NAV = ToolCategory.SEARCH, ToolCategory.NAVIGATION
_DOCS_DENY = ("write", "bash", "webfetch", "websearch", "task", "todowrite", "todoread", "patch", "skill")


def _default_profiles() -> dict[str, AgentToolProfile]:
    profiles = (
        AgentToolProfile(
            "main", PLACED_CATEGORIES, (), ("skill",), description="The orchestrating agent: every placed tool."
        ),
        AgentToolProfile(
            "plan",
            (_FR, _SEARCH, _WEB, _PLAN, _DEL, _NAV),
            ("write", "todowrite", "todoread", "patch"),
            ("skill",),
            description="Plans changes: reads, searches and delegates, never writes files.",
            read_only=True,
        ),
        AgentToolProfile(
            "explore",
            (_FR, _SEARCH, _NAV),
            ("edit", "write", "bash", "webfetch", "websearch", "todowrite", "todoread", "patch", "skill"),
            ("task",),
            description="Explores a code base read-only.",
            read_only=True,
        ),
        AgentToolProfile(
            "debugger",
            (_FR, _FW, _EX, _SEARCH, _NAV),
            ("write", "webfetch", "websearch", "todowrite", "todoread", "patch"),
            ("skill",),
            description="Reproduces and fixes bugs: reads, edits and runs code.",
        ),
        AgentToolProfile(
            "researcher",
            (_FR, _SEARCH, _WEB, _DEL, _NAV),
            ("edit", "write", "todowrite", "todoread", "patch"),
            ("skill",),
            description="Researches in the code and on the web; changes nothing.",
            read_only=True,
        ),
        AgentToolProfile(
            "docs-generator", (_FR, _FW, _SEARCH), _DOCS_DENY, (), description="Writes documentation by editing files."
        ),
        AgentToolProfile(
            "readme-generator", (_FR, _FW, _SEARCH), _DOCS_DENY, (), description="Writes README files by editing them."
        ),
        AgentToolProfile(
            "coder",
            (_FR, _FW, _EX, _SEARCH),
            ("task", "webfetch", "websearch", "todowrite", "todoread"),
            ("skill",),
            description="Implements a specification: reads, writes and runs code.",
        ),
        AgentToolProfile(
            "test-writer",
            (_FR, _FW, _EX, _SEARCH),
            ("task", "webfetch", "websearch", "todowrite", "todoread", "patch"),
            ("skill",),
            description="Writes and runs tests.",
        ),
        AgentToolProfile(
            "reviewer",
            (_FR, _SEARCH, _NAV),
            ("edit", "write", "bash", "webfetch", "websearch", "todowrite", "todoread", "task", "patch"),
            ("skill",),
            description="Reviews changes read-only and gives a verdict.",
            read_only=True,
        ),
    )
    return {profile.agent_type: profile for profile in profiles}


#: The ten agent types of the routing spec (read-only mapping).
DEFAULT_AGENT_PROFILES: Mapping[str, AgentToolProfile] = MappingProxyType(_default_profiles())
