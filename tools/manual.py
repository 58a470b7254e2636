"""``ToolManual``, ``ToolCategory`` and ``RiskLevel``: what a tool is (the core risk model).

A manual is routing and approval metadata, not a schema: which category of work the tool
belongs to (what an agent profile allows), where it comes from, how risky it is, whether
it changes anything, how much of the prompt it costs, and free-form capability tags.

Risk and ``mutating`` are declared, never guessed down. Each of ``risk``, ``category`` and
``mutating`` records where it came from (:class:`ManualOrigin`), in this order of
precedence:

=================  ===========================================================================
origin             meaning
=================  ===========================================================================
``operator``       the person running tooldeck: a registry file's ``manual``, a routing
                   config's ``manuals``, ``registry.register(tool, manual=...)``
``author``         the tool's author: the ``manual`` the tool ships
``trusted-hint``   a hint from an MCP server the operator marked ``trusted`` (may lower risk)
``hint``           a hint from a remote party (MCP annotations, a catalog): may only raise risk
``name``           a word of the name says it destroys, sends, pays, deploys or executes:
                   raised to ``dangerous``
``program``        a CLI tool or binary runs a program: at least ``moderate``
``default``        nothing declared: ``moderate``, ``mutating=True``, category ``unclassified``
``heuristic``      the routing name heuristic placed an undeclared category (routing only)
=================  ===========================================================================

Only ``operator``, ``author`` and ``trusted-hint`` count as *declared*: read-only agent
profiles get a tool only when its ``mutating=False`` was declared
(:attr:`ToolManual.read_only_declared`).
"""

from __future__ import annotations

from enum import Enum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from tools._names import TOOL_NAME_RULE
from tools._risk_words import risky_word

__all__ = [
    "DECLARED_ORIGINS",
    "PROGRAM_SOURCES",
    "ActionRisk",
    "ManualOrigin",
    "Origin",
    "RiskLevel",
    "TokenCost",
    "ToolCategory",
    "ToolManual",
    "ToolSource",
    "risk_rank",
    "riskiest",
]

ToolSource = Literal["builtin", "function", "mcp", "http", "cli", "binary", "module"]
RiskLevel = Literal["safe", "moderate", "dangerous"]
TokenCost = Literal["low", "medium", "high"]
Origin = Literal["operator", "author", "trusted-hint", "hint", "name", "program", "default", "heuristic"]

#: The origins that count as a declaration (read-only profiles trust only these).
DECLARED_ORIGINS: frozenset[str] = frozenset({"operator", "author", "trusted-hint"})
#: Sources whose tools run programs: never below ``moderate`` unless the operator says so.
PROGRAM_SOURCES: frozenset[str] = frozenset({"cli", "binary"})
_RANK: dict[str, int] = {"safe": 0, "moderate": 1, "dangerous": 2}
_ORIGIN_TEXT: dict[str, str] = {
    "operator": "declared by the operator",
    "author": "declared by the tool's author",
    "trusted-hint": "declared by a trusted server's hint",
    "hint": "raised by a remote party's hint",
    "name": "raised by its name",
    "program": "it runs a program (never below moderate)",
    "default": "not declared: the fail-closed default",
    "heuristic": "placed by the routing name heuristic",
}


def riskiest(*levels: RiskLevel) -> RiskLevel:
    """The highest of ``levels`` (``safe`` < ``moderate`` < ``dangerous``)."""
    return max(levels, key=_RANK.__getitem__)


def risk_rank(level: RiskLevel) -> int:
    """0 for ``safe``, 1 for ``moderate``, 2 for ``dangerous``."""
    return _RANK[level]


class ToolCategory(str, Enum):
    """The kind of work a tool does; agent profiles allow or deny whole categories.

    The first eight are the categories every agent profile speaks; ``context``, ``memory``
    and ``compute`` are tooldeck's own (the user's personal data, the knowledge store,
    math). ``unclassified`` is a tool nobody placed: no built-in profile allows it, only
    the permissive profile of an agent type that has none.
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
    UNCLASSIFIED = "unclassified"

    def __str__(self) -> str:
        return self.value


class ManualOrigin(BaseModel):
    """Where a manual's ``risk``, ``category`` and ``mutating`` came from (frozen).

    Attributes:
        risk: The origin of the risk level (see the module docstring).
        category: The origin of the category.
        mutating: The origin of the mutating flag.
        notes: Sentences a person can read on what raised, lowered or ignored something
            (``"name says 'delete' (destroys data)"``, ``"readOnlyHint ignored: ..."``).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    risk: Origin = "default"
    category: Origin = "default"
    mutating: Origin = "default"
    notes: tuple[str, ...] = ()

    def describe(self, field: Literal["risk", "category", "mutating"]) -> str:
        """What the origin of ``field`` means, e.g. ``"declared by the operator"``."""
        return _ORIGIN_TEXT[getattr(self, field)]

    def declared(self, field: Literal["risk", "category", "mutating"]) -> bool:
        """True when ``field`` was declared (operator, author or a trusted server)."""
        return getattr(self, field) in DECLARED_ORIGINS

    def noted(self, *notes: str) -> ManualOrigin:
        """This origin with ``notes`` added (duplicates dropped)."""
        return self.model_copy(update={"notes": tuple(dict.fromkeys((*self.notes, *notes)))})


class ActionRisk(BaseModel):
    """The risk of one action of a multi-action tool (frozen).

    Attributes:
        name: The value of ``action`` that selects it.
        risk: Its risk level.
        mutating: Whether it can change anything.
        declared: Whether the author declared both (else the fail-closed defaults applied).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1)
    risk: RiskLevel
    mutating: bool
    declared: bool = True


class ToolManual(BaseModel):
    """Routing and approval metadata of one tool (frozen).

    Unset ``risk``, ``mutating`` and ``category`` fail closed: ``moderate`` (``dangerous``
    when a word of the name destroys, sends, pays, deploys or executes), ``True`` and
    ``unclassified``; :attr:`origin` says which values were declared.

    Attributes:
        name: The tool's registered name.
        display_name: A short human-readable name (default: ``name``).
        description: One or two sentences on what the tool does.
        category: The primary category.
        secondary_categories: Further categories the tool also belongs to.
        source: Where the tool comes from.
        server: The MCP server or host the tool runs on, when it runs elsewhere.
        risk: ``safe`` (runs freely at level ``medium``: reads, or changes only tooldeck's
            own data or a sandbox), ``moderate`` (changes the user's things or reaches out),
            ``dangerous`` (destroys, sends, pays, deploys, runs arbitrary commands). With
            :attr:`actions`, the highest of the actions' risks.
        mutating: Whether a call can change anything (with :attr:`actions`: any action).
        token_cost: How much a definition and a typical result cost in the prompt.
        capabilities: Free-form tags for capability lookup and tool search.
        actions: Per-action risk of a multi-action tool; the approval gate uses the risk of
            the call's ``action`` (an unknown or missing one: :attr:`risk`, the highest).
        alias_of: The tool this one is an old name of: every routing decision about that
            tool applies to this name too.
        origin: Where ``risk``, ``category`` and ``mutating`` came from (filled in when not
            given).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(pattern=TOOL_NAME_RULE)
    display_name: str = ""
    description: str = ""
    category: ToolCategory = ToolCategory.UNCLASSIFIED
    secondary_categories: tuple[ToolCategory, ...] = ()
    source: ToolSource = "builtin"
    server: str | None = None
    risk: RiskLevel = "moderate"
    mutating: bool = True
    token_cost: TokenCost = "low"  # noqa: S105 - a cost level, not a secret
    capabilities: tuple[str, ...] = ()
    actions: tuple[ActionRisk, ...] = ()
    alias_of: str | None = Field(default=None, pattern=TOOL_NAME_RULE)
    origin: ManualOrigin = ManualOrigin()

    @field_validator("display_name")
    @classmethod
    def _strip(cls, value: str) -> str:
        return value.strip()

    @model_validator(mode="after")
    def _fail_closed(self) -> ToolManual:
        if self.actions:
            names = [a.name for a in self.actions]
            if len(set(names)) != len(names):
                raise ValueError(f"actions repeat a name: {names}")
            # The tool as a whole is as risky as its riskiest action.
            object.__setattr__(self, "risk", riskiest(*(a.risk for a in self.actions)))
            object.__setattr__(self, "mutating", any(a.mutating for a in self.actions))
        if "origin" in self.model_fields_set:
            return self
        given = self.model_fields_set
        all_declared = all(a.declared for a in self.actions)
        notes: list[str] = []
        risk: Origin = "author" if "risk" in given or (self.actions and all_declared) else "default"
        if risk == "default" and self.risk != "dangerous":
            found = risky_word(self.name)
            if found is not None:
                object.__setattr__(self, "risk", "dangerous")
                risk = "name"
                notes.append(f"its name says {found[0]!r} ({found[1]})")
            elif self.source in PROGRAM_SOURCES:
                risk = "program"
        mutating: Origin = "author" if "mutating" in given or (self.actions and all_declared) else "default"
        category: Origin = "author" if "category" in given else "default"
        object.__setattr__(
            self, "origin", ManualOrigin(risk=risk, category=category, mutating=mutating, notes=tuple(notes))
        )
        return self

    @property
    def categories(self) -> tuple[ToolCategory, ...]:
        """The primary category followed by the secondary ones."""
        return (self.category, *self.secondary_categories)

    @property
    def label(self) -> str:
        """``display_name`` or, when empty, ``name``."""
        return self.display_name or self.name

    @property
    def read_only_declared(self) -> bool:
        """True when ``mutating=False`` was declared (operator, author or a trusted server)."""
        return not self.mutating and self.origin.declared("mutating")

    def action_risk(self, action: object) -> ActionRisk | None:
        """The declared risk of ``action`` (None: not a multi-action manual, or no such action)."""
        for entry in self.actions:
            if entry.name == action:
                return entry
        return None

    def risk_for(self, action: object) -> RiskLevel:
        """The risk of a call with ``action``: that action's, else the tool's (its highest)."""
        entry = self.action_risk(action) if self.actions else None
        return entry.risk if entry is not None else self.risk

    def renamed(self, name: str) -> ToolManual:
        """This manual for a tool registered under another name."""
        return self if name == self.name else self.model_copy(update={"name": name})

    def as_alias(self, name: str, *, action: str | None = None) -> ToolManual:
        """The manual of an old name of this tool (``alias_of`` set; routing follows this tool).

        Args:
            name: The old name.
            action: The action the old name always runs (its risk and mutating flag become
                the alias's own).
        """
        update: dict[str, Any] = {"name": name, "alias_of": self.alias_of or self.name}
        entry = self.action_risk(action) if action is not None else None
        if entry is not None:
            update |= {"risk": entry.risk, "mutating": entry.mutating, "actions": ()}
        return self.model_copy(update=update)

    def with_actions(self, actions: tuple[ActionRisk, ...]) -> ToolManual:
        """This manual with per-action risks (a multi-action tool's): ``risk`` becomes the
        highest action's, ``mutating`` whether any action mutates, and their origin the
        author's when every action declared them (else the fail-closed default)."""
        if not actions:
            return self
        actions = tuple(self._inherit(a) for a in actions)
        declared: Origin = "author" if all(a.declared for a in actions) else "default"
        notes = [f"action {a.name!r} declares no risk: {a.risk}" for a in actions if not a.declared]
        origin = self.origin.model_copy(update={"risk": declared, "mutating": declared}).noted(*notes)
        data = {**self.model_dump(exclude={"origin", "actions"}), "actions": actions, "origin": origin}
        return ToolManual.model_validate(data)

    def _inherit(self, action: ActionRisk) -> ActionRisk:
        """``action`` with what it left undeclared taken from this manual's own declaration:
        a tool whose author declared its risk (or ``mutating``) declares it for every action
        that does not say otherwise."""
        if action.declared:
            return action
        risk_declared = self.origin.risk in DECLARED_ORIGINS
        mutating_declared = self.origin.mutating in DECLARED_ORIGINS
        if not (risk_declared or mutating_declared):
            return action
        return action.model_copy(
            update={
                "risk": self.risk if risk_declared else action.risk,
                "mutating": self.mutating if mutating_declared else action.mutating,
                "declared": risk_declared and mutating_declared,
            }
        )

    def declared_by_operator(self) -> ToolManual:
        """This manual with what its author declared relabelled as the operator's
        (what ``registry.register(tool, manual=...)`` does with the manual it is given)."""
        origin = self.origin
        fields = {f: "operator" for f in ("risk", "category", "mutating") if getattr(origin, f) == "author"}
        return self.model_copy(update={"origin": origin.model_copy(update=fields)}) if fields else self

    def with_declarations(
        self,
        *,
        by: Literal["operator", "author", "trusted-hint", "hint"] = "operator",
        category: ToolCategory | None = None,
        risk: RiskLevel | None = None,
        mutating: bool | None = None,
        note: str | None = None,
        **other: Any,
    ) -> ToolManual:
        """This manual with ``category``, ``risk`` and ``mutating`` set where given (their
        origin becomes ``by``) and ``other`` fields replaced. A tool-level ``risk`` replaces
        the per-action risks (the declaration is about every action).

        Raises:
            pydantic.ValidationError: an ``other`` field or a value is invalid.
        """
        update: dict[str, Any] = {}
        origins: dict[str, Any] = {}
        for field, value in (("category", category), ("risk", risk), ("mutating", mutating)):
            if value is not None:
                update[field] = ToolCategory(value) if field == "category" else value
                origins[field] = by
        if self.actions and (risk is not None or mutating is not None):
            update["actions"] = ()
            update.setdefault("risk", self.risk)
            update.setdefault("mutating", self.mutating)
        origin = self.origin.model_copy(update=origins)
        if note:
            origin = origin.noted(note)
        data = {**self.model_dump(exclude={"origin"}), **update, **other, "origin": origin}
        return ToolManual.model_validate(data)
