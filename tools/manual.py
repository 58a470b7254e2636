"""``ToolManual``, ``ToolCategory`` and ``RiskLevel``: what a tool is (the core risk model).

A manual is routing metadata, not a schema: which category of work the tool belongs to
(what an agent profile allows or denies), where it comes from, how risky it is, whether it
changes anything, how much of the prompt it costs, and free-form capability tags that
capability lookup and tool search use.
"""

from __future__ import annotations

from enum import Enum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from tools._names import TOOL_NAME_RULE

ToolSource = Literal["builtin", "function", "mcp", "http", "cli", "binary", "module"]
RiskLevel = Literal["safe", "moderate", "dangerous"]
TokenCost = Literal["low", "medium", "high"]


class ToolCategory(str, Enum):
    """The kind of work a tool does; agent profiles allow or deny whole categories.

    The first eight are the categories every agent profile speaks; ``context``, ``memory``
    and ``compute`` are tooldeck's own (the user's personal data, the knowledge store, math).
    """

    FILE_READ = "file-read"
    FILE_WRITE = "file-write"
    EXECUTION = "execution"
    WEB = "web"
    PLANNING = "planning"
    DELEGATION = "delegation"
    SEARCH = "search"
    NAVIGATION = "navigation"
    CONTEXT = "context"
    MEMORY = "memory"
    COMPUTE = "compute"

    def __str__(self) -> str:
        return self.value


class ToolManual(BaseModel):
    """Routing metadata of one tool (frozen).

    Attributes:
        name: The tool's registered name.
        display_name: A short human-readable name (default: ``name``).
        description: One or two sentences on what the tool does.
        category: The primary category.
        secondary_categories: Further categories the tool also belongs to.
        source: Where the tool comes from.
        server: The MCP server or host the tool runs on, when it runs elsewhere.
        risk: ``safe`` (reads only), ``moderate`` (changes local state or reaches out),
            ``dangerous`` (runs arbitrary commands, destroys data).
        mutating: Whether a call can change anything.
        token_cost: How much a definition and a typical result cost in the prompt.
        capabilities: Free-form tags for capability lookup and tool search
            (e.g. ``"current_time"``, ``"weather"``).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(pattern=TOOL_NAME_RULE)
    display_name: str = ""
    description: str = ""
    category: ToolCategory
    secondary_categories: tuple[ToolCategory, ...] = ()
    source: ToolSource = "builtin"
    server: str | None = None
    risk: RiskLevel = "safe"
    mutating: bool = False
    token_cost: TokenCost = "low"  # noqa: S105 - a cost level, not a secret
    capabilities: tuple[str, ...] = ()

    @field_validator("display_name")
    @classmethod
    def _strip(cls, value: str) -> str:
        return value.strip()

    @property
    def categories(self) -> tuple[ToolCategory, ...]:
        """The primary category followed by the secondary ones."""
        return (self.category, *self.secondary_categories)

    @property
    def label(self) -> str:
        """``display_name`` or, when empty, ``name``."""
        return self.display_name or self.name

    def renamed(self, name: str) -> ToolManual:
        """This manual for a tool registered under another name (an alias)."""
        return self if name == self.name else self.model_copy(update={"name": name})
