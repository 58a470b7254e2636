"""``ToolRouter``: the deterministic resolution of an agent's tools, and its explanation.

Resolution (DESIGN section 8), for an agent type and the registered tools' manuals:

1. The profile of the agent type, or a permissive one (every category) for unknown types.
2. Categories = the profile's allowed categories, plus the user's ``add_categories``,
   minus the user's ``remove_categories``.
3. Candidates = tools whose primary or a secondary category is among them. A tool whose
   category nobody declared is placed by its name (:func:`categorize_tool`); a name the
   heuristic does not recognise stays ``unclassified``, which only the permissive profile
   allows.
4. Minus the profile's ``denied_tools``, except tools the user's ``add_categories`` brought in.
5. Plus the profile's ``required_tools`` and the user's ``add_tools`` (registered ones).
6. Read-only profiles (``plan``, ``explore``, ``researcher``, ``reviewer``) keep only tools
   whose ``mutating=False`` was *declared* (by the tool's author, the operator or a trusted
   server); minus the user's ``deny_tools`` and ``global_deny``: a deny always wins.
7. ``max_tool_count``: required tools first, then registration order; the rest are cut.

An old name (a manual with ``alias_of``) shares its tool's decision: a deny, require or
add naming any name of a tool applies to all its names.

:meth:`ToolRouter.explain` gives one :class:`RoutingDecision` per tool: included or not,
the step that decided, and a sentence saying why. Resolution is indexed
(:mod:`tools.routing._index`): a registry's manuals are indexed once by category and name,
and each agent type's decision over them is cached.
"""

from __future__ import annotations

import difflib
import logging
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from tools.manual import ToolCategory, ToolManual
from tools.routing._index import Decision, Placement, Plan, ResolutionStep, RoutingIndex, effective
from tools.routing.categorize import categorize_tool
from tools.routing.config import ToolRoutingConfig
from tools.routing.errors import RoutingConfigError
from tools.routing.profiles import DEFAULT_AGENT_PROFILES, AgentToolProfile, permissive_profile

__all__ = ["STEP_NUMBERS", "ResolutionStep", "RoutingDecision", "ToolRouter"]

#: The DESIGN section 8 step number of each decision step.
STEP_NUMBERS: Mapping[ResolutionStep, int] = {
    "category": 3,
    "denied": 4,
    "add_categories": 4,
    "required": 5,
    "add_tools": 5,
    "read_only": 6,
    "deny_tools": 6,
    "global_deny": 6,
    "max_tool_count": 7,
}
_CACHE_SIZE = 8
logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class RoutingDecision:
    """Why one tool is or is not given to an agent.

    Attributes:
        tool: The tool's registered name.
        included: Whether the agent gets it.
        step: The resolution step that decided (see :data:`STEP_NUMBERS`).
        reason: A sentence a person can read.
        alias_of: For an old name, the tool whose decision it follows.
        aliases: The tool's old names (registered), which follow this decision.
    """

    tool: str
    included: bool
    step: ResolutionStep
    reason: str
    alias_of: str | None = None
    aliases: tuple[str, ...] = ()

    @property
    def step_number(self) -> int:
        """The step's number in the resolution order (3 to 7)."""
        return STEP_NUMBERS[self.step]

    def __str__(self) -> str:
        mark = "+" if self.included else "-"
        return f"{mark} {self.tool} (step {self.step_number}, {self.step}): {self.reason}"


@dataclass(frozen=True)
class _Plan:
    """A :class:`Plan` and what ``explain`` says of steps 1-2."""

    plan: Plan
    profile: AgentToolProfile
    has_profile: bool
    added: tuple[ToolCategory, ...]
    removed: tuple[ToolCategory, ...]


class ToolRouter:
    """Decides which tools each agent type gets, deterministically, and explains it.

    Args:
        profiles: Agent profiles by agent type (default: :data:`DEFAULT_AGENT_PROFILES`).
        config: The user's overrides (global denies, per-agent changes, manual fixes).

    Raises:
        RoutingConfigError: a profile is filed under another agent type than its own, or
            the config overrides an agent type that has no profile.

    Example:
        >>> router = ToolRouter()
        >>> [m.name for m in router.resolve("reviewer", CODING_TOOL_MANUALS)]
        ['read', 'glob', 'grep', 'skill', 'lsp']
    """

    def __init__(
        self,
        profiles: Mapping[str, AgentToolProfile] = DEFAULT_AGENT_PROFILES,
        config: ToolRoutingConfig | None = None,
    ) -> None:
        for key, profile in profiles.items():
            if not isinstance(profile, AgentToolProfile):
                raise RoutingConfigError(f"profiles[{key!r}] is a {type(profile).__name__}, not an AgentToolProfile")
            if key != profile.agent_type:
                raise RoutingConfigError(
                    f"profiles[{key!r}] holds the profile of {profile.agent_type!r}: file each profile under "
                    "its own agent_type"
                )
        self._profiles = dict(profiles)
        self._config = config or ToolRoutingConfig()
        unknown = [name for name in self._config.profiles if name not in self._profiles]
        if unknown:
            raise RoutingConfigError(
                f"{self._config.source}: profiles has overrides for {', '.join(map(repr, unknown))}, which "
                f"{'has' if len(unknown) == 1 else 'have'} no agent profile (known: {', '.join(self._profiles)}); "
                "fix the name or pass a profile for it to ToolRouter(profiles=...)"
            )
        self._plans: dict[str, _Plan] = {}
        self._overrides = {name: override.apply for name, override in self._config.manuals.items()}
        self._place = Placement(categorize_tool)
        # Indexes by (length, first id, last id); the full identity check is a list compare.
        self._indexes: dict[tuple[int, int, int], list[RoutingIndex]] = {}
        self._lock = threading.Lock()

    @property
    def profiles(self) -> Mapping[str, AgentToolProfile]:
        """The agent profiles by agent type."""
        return dict(self._profiles)

    @property
    def config(self) -> ToolRoutingConfig:
        """The user's overrides."""
        return self._config

    def profile(self, agent_type: str) -> AgentToolProfile:
        """The profile of ``agent_type``, or the permissive one when it has none."""
        return self._plan(agent_type).profile

    # ------------------------------------------------------------------ resolution

    def resolve(self, agent_type: str, manuals: Iterable[ToolManual]) -> list[ToolManual]:
        """The manuals of the tools ``agent_type`` gets, in registration order.

        The manuals returned are the effective ones: the config's manual overrides applied,
        and a category nobody declared placed by the tool's name.

        Args:
            agent_type: The agent type (profiles' keys; unknown types get every category).
            manuals: The registered tools' manuals in registration order
                (``registry.manuals()``).
        """
        return list(self._decision(agent_type, manuals)[1].manuals)

    def allows(self, agent_type: str, name: str, manuals: Iterable[ToolManual]) -> bool:
        """Whether ``agent_type`` gets the tool called ``name``."""
        index, decision = self._decision(agent_type, manuals)
        group = index.group_of(name)
        return group is not None and group in decision.included

    def effective(self, manuals: Iterable[ToolManual]) -> list[ToolManual]:
        """The manuals as routing sees them (overrides applied, categories placed)."""
        return list(self._index(manuals).manuals)

    def explain(self, agent_type: str, manuals: Iterable[ToolManual]) -> list[RoutingDecision]:
        """One decision per tool, in registration order: included or not, which step, why."""
        plan = self._plan(agent_type)
        index, decision = self._decision(agent_type, manuals)
        count = len(decision.included)
        out = []
        for i, manual in enumerate(index.manuals):
            group = index.group[i]
            included = group in decision.included
            step = decision.steps.get(group, "category")
            target = index.manuals[group]
            reason = _reason(plan, target, step, count)
            if group != i:
                out.append(
                    RoutingDecision(
                        manual.name,
                        included,
                        step,
                        f"Follows {target.name} (it is an old name of it): {reason}",
                        alias_of=target.name,
                    )
                )
                continue
            aliases = tuple(index.names_of(i)[1:])
            if aliases:
                reason += f" Its old names {', '.join(aliases)} follow this decision."
            out.append(RoutingDecision(manual.name, included, step, reason, aliases=aliases))
        return out

    def explain_text(self, agent_type: str, manuals: Iterable[ToolManual]) -> str:
        """Steps 1 and 2 as two lines, then one line per tool (``str`` of each decision)."""
        plan = self._plan(agent_type)
        decisions = self.explain(agent_type, manuals)
        if plan.has_profile:
            first = f"1. profile: {agent_type!r} ({plan.profile.description or 'no description'})"
        else:
            first = f"1. profile: {agent_type!r} has none; the permissive profile allows every category"
        if plan.plan.read_only:
            first += "; read-only: only tools declared mutating=False"
        second = "2. categories: " + (", ".join(sorted(c.value for c in plan.plan.categories)) or "none")
        if plan.added:
            second += " (user added " + ", ".join(c.value for c in plan.added) + ")"
        if plan.removed:
            second += " (user removed " + ", ".join(c.value for c in plan.removed) + ")"
        included = sum(1 for d in decisions if d.included)
        lines = [first, second, *map(str, decisions), f"{agent_type} gets {included} of {len(decisions)} tools."]
        return "\n".join(lines)

    def check(self, manuals: Iterable[ToolManual]) -> None:
        """Check the config against the registered tools (what ``registry.for_agent`` does).

        ``add_tools`` and ``manuals`` entries must name registered tools; a deny of an
        unregistered tool is fine (it protects against a later registration), and so are
        the default profiles' required tools (they are written for the coding tools).

        Raises:
            RoutingConfigError: naming each entry, close registered names, and the fix.
        """
        names = [manual.name for manual in manuals]
        known = set(names)
        problems: list[str] = []
        for tool in self._config.manuals:
            if tool not in known:
                problems.append(f"manuals.{tool}{_close(tool, names)}")
        for agent_type, override in self._config.profiles.items():
            problems.extend(
                f"profiles.{agent_type}.add_tools: {tool!r}{_close(tool, names)}"
                for tool in override.add_tools
                if tool not in known
            )
        if problems:
            raise RoutingConfigError(
                f"{self._config.source} names tools that are not registered: "
                + "; ".join(problems)
                + ". Register those tools first, or remove the entries from the config."
            )

    # ------------------------------------------------------------------ internals

    def _decision(self, agent_type: str, manuals: Iterable[ToolManual]) -> tuple[RoutingIndex, Decision]:
        plan = self._plan(agent_type).plan
        index = self._index(manuals)
        with self._lock:
            return index, index.decide(plan)

    def _index(self, manuals: Iterable[ToolManual]) -> RoutingIndex:
        seq = manuals if isinstance(manuals, (list, tuple)) else list(manuals)
        key = (len(seq), id(seq[0]), id(seq[-1])) if seq else (0, 0, 0)
        for index in self._indexes.get(key, ()):
            # The index holds its source's manuals, so their ids are not reused: equal ids
            # (compared by identity first, in C) mean the same manuals.
            if index.source == seq:
                return index
        index = RoutingIndex(effective(seq, self._overrides, self._place), seq)
        with self._lock:
            if sum(map(len, self._indexes.values())) >= _CACHE_SIZE:
                self._indexes.clear()
            self._indexes.setdefault(key, []).append(index)
        return index

    def _plan(self, agent_type: str) -> _Plan:
        plan = self._plans.get(agent_type)
        if plan is None:
            plan = self._make_plan(agent_type)
            self._plans[agent_type] = plan
        return plan

    def _make_plan(self, agent_type: str) -> _Plan:
        profile = self._profiles.get(agent_type)
        has_profile = profile is not None
        if profile is None:
            logger.warning(
                "agent type %r has no tool profile: it gets every category (known: %s)",
                agent_type[:64],
                ", ".join(self._profiles),
            )
            profile = permissive_profile(agent_type) if _valid_agent_type(agent_type) else permissive_profile("unknown")
        override = self._config.override_for(agent_type)
        allowed = set(profile.allowed_categories)
        added = tuple(c for c in override.add_categories if c not in allowed)
        categories = (allowed | set(override.add_categories)) - set(override.remove_categories)
        plan = Plan(
            agent_type=agent_type,
            read_only=profile.read_only,
            max_tool_count=profile.max_tool_count,
            categories=frozenset(categories),
            brought_in=frozenset(added),
            denied=profile.denied_tools,
            required=profile.required_tools,
            add_tools=tuple(t for t in override.add_tools if t not in profile.required_tools),
            deny_tools=override.deny_tools,
            global_deny=self._config.global_deny,
        )
        removed = tuple(c for c in override.remove_categories if c in allowed)
        return _Plan(plan, profile, has_profile, added, removed)


def _valid_agent_type(agent_type: str) -> bool:
    try:
        permissive_profile(agent_type)
    except RoutingConfigError:
        return False
    return True


def _close(name: str, names: Sequence[str]) -> str:
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
    return f" (did you mean {', '.join(map(repr, close))}?)" if close else ""


def _cats(categories: Iterable[ToolCategory]) -> str:
    return ", ".join(c.value for c in categories) or "none"


_SIMPLE_REASONS: Mapping[ResolutionStep, str] = {
    "denied": "Excluded: the {agent} profile denies it, although its {label} {mine} {verb} allowed.",
    "required": "Included: the {agent} profile requires it, although its {label} {mine} {verb} not allowed.",
    "add_tools": "Included: the user's add_tools for {agent} names it.",
    "deny_tools": "Excluded: the user's deny_tools for {agent} names it (a deny always wins).",
    "global_deny": "Excluded: the config's global_deny names it (a deny always wins).",
    "max_tool_count": (
        "Excluded: the {agent} profile allows at most {limit} tools ({count} kept); required tools come first, "
        "then registration order."
    ),
}


def _reason(plan: _Plan, manual: ToolManual, step: ResolutionStep, count: int) -> str:
    agent = plan.profile.agent_type
    mine = _cats(manual.categories)
    if manual.origin.category == "heuristic":
        mine += " (placed by its name)"
    label, verb = ("category", "is") if not manual.secondary_categories else ("categories", "are")
    if step == "add_categories":
        brought = _cats(c for c in manual.categories if c in plan.plan.brought_in)
        return f"Included: the user's add_categories brought in {brought}, which lifts the {agent} profile's deny."
    if step == "read_only":
        said = "it may change things" if manual.mutating else manual.origin.describe("mutating")
        return (
            f"Excluded: the {agent} profile is read-only and {manual.name}'s mutating=False was not declared "
            f"({said}); declare it for a tool that changes nothing (its manual, a routing config manuals "
            "override, tooldeck adopt --read-only)."
        )
    if step != "category":
        template = _SIMPLE_REASONS[step]
        return template.format(
            agent=agent, label=label, mine=mine, verb=verb, limit=plan.profile.max_tool_count, count=count
        )
    return _category_reason(plan, manual, label, mine, verb)


def _category_reason(plan: _Plan, manual: ToolManual, label: str, mine: str, verb: str) -> str:
    agent = plan.profile.agent_type
    if not plan.has_profile:
        return f"Included: {agent!r} has no profile, so the permissive profile allows every category ({mine})."
    matched = [c for c in manual.categories if c in plan.plan.categories]
    if matched:
        also = " (it is also required)" if manual.name in plan.plan.required else ""
        if manual.origin.category == "heuristic":
            also += " (its category was placed by its name)"
        are = "is" if len(matched) == 1 else "are"
        return f"Included: {_cats(matched)} {are} among the {agent} agent's categories{also}."
    if manual.category is ToolCategory.UNCLASSIFIED:
        return (
            "Excluded: it is unclassified (no category was declared and its name says none), which only "
            "the permissive profile allows; declare a category (its manual, a routing config manuals "
            "override, tooldeck adopt --category)."
        )
    return (
        f"Excluded: its {label} {mine} {verb} not among the {agent} agent's categories "
        f"({_cats(sorted(plan.plan.categories))})."
    )
