"""``ToolRouter``: the deterministic resolution of an agent's tools, and its explanation.

Resolution (DESIGN section 8), for an agent type and the registered tools' manuals:

1. The profile of the agent type, or a permissive one (every category) for unknown types.
2. Categories = the profile's allowed categories, plus the user's ``add_categories``,
   minus the user's ``remove_categories``.
3. Candidates = tools whose primary or a secondary category is among them.
4. Minus the profile's ``denied_tools``, except tools the user's ``add_categories`` brought in.
5. Plus the profile's ``required_tools`` and the user's ``add_tools`` (registered ones).
6. Minus the user's ``deny_tools`` and ``global_deny``: a deny always wins.
7. ``max_tool_count``: required tools first, then registration order; the rest are cut.

:meth:`ToolRouter.explain` gives one :class:`RoutingDecision` per tool: included or not,
the step that decided, and a sentence saying why.
"""

from __future__ import annotations

import difflib
import logging
import threading
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from tools.manual import ToolCategory, ToolManual
from tools.routing.config import ToolRoutingConfig
from tools.routing.errors import RoutingConfigError
from tools.routing.profiles import DEFAULT_AGENT_PROFILES, AgentToolProfile, permissive_profile

ResolutionStep = Literal[
    "category", "denied", "add_categories", "required", "add_tools", "deny_tools", "global_deny", "max_tool_count"
]

#: The DESIGN section 8 step number of each decision step.
STEP_NUMBERS: Mapping[ResolutionStep, int] = {
    "category": 3,
    "denied": 4,
    "add_categories": 4,
    "required": 5,
    "add_tools": 5,
    "deny_tools": 6,
    "global_deny": 6,
    "max_tool_count": 7,
}
_CACHE_SIZE = 64
logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class RoutingDecision:
    """Why one tool is or is not given to an agent.

    Attributes:
        tool: The tool's registered name.
        included: Whether the agent gets it.
        step: The resolution step that decided (see :data:`STEP_NUMBERS`).
        reason: A sentence a person can read.
    """

    tool: str
    included: bool
    step: ResolutionStep
    reason: str

    @property
    def step_number(self) -> int:
        """The step's number in the resolution order (3 to 7)."""
        return STEP_NUMBERS[self.step]

    def __str__(self) -> str:
        mark = "+" if self.included else "-"
        return f"{mark} {self.tool} (step {self.step_number}, {self.step}): {self.reason}"


@dataclass(frozen=True)
class _Plan:
    """Steps 1-2 and the name sets of steps 4-7 for one agent type (computed once)."""

    profile: AgentToolProfile
    has_profile: bool
    categories: frozenset[ToolCategory]
    brought_in: frozenset[ToolCategory]
    denied: frozenset[str]
    required: tuple[str, ...]
    add_tools: tuple[str, ...]
    deny_tools: frozenset[str]
    global_deny: frozenset[str]
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
        self._cache: dict[tuple[str, tuple[int, ...]], tuple[Sequence[ToolManual], list[ToolManual]]] = {}
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

        Args:
            agent_type: The agent type (profiles' keys; unknown types get every category).
            manuals: The registered tools' manuals in registration order
                (``registry.manuals()``).
        """
        seq = manuals if isinstance(manuals, (list, tuple)) else list(manuals)
        key = (agent_type, tuple(map(id, seq)))
        hit = self._cache.get(key)
        if hit is not None and len(hit[0]) == len(seq) and all(a is b for a, b in zip(hit[0], seq, strict=True)):
            return list(hit[1])
        effective = self._effective(seq)
        decided = self._decide(self._plan(agent_type), effective)
        out = [manual for manual, (included, _) in zip(effective, decided, strict=True) if included]
        with self._lock:
            if len(self._cache) >= _CACHE_SIZE:
                self._cache.pop(next(iter(self._cache)))
            self._cache[key] = (tuple(seq), out)
        return list(out)

    def allows(self, agent_type: str, name: str, manuals: Iterable[ToolManual]) -> bool:
        """Whether ``agent_type`` gets the tool called ``name``."""
        return any(manual.name == name for manual in self.resolve(agent_type, manuals))

    def explain(self, agent_type: str, manuals: Iterable[ToolManual]) -> list[RoutingDecision]:
        """One decision per tool, in registration order: included or not, which step, why."""
        plan = self._plan(agent_type)
        effective = self._effective(list(manuals))
        decided = self._decide(plan, effective)
        count = sum(1 for included, _ in decided if included)
        return [
            RoutingDecision(manual.name, included, step, _reason(plan, manual, step, count))
            for manual, (included, step) in zip(effective, decided, strict=True)
        ]

    def explain_text(self, agent_type: str, manuals: Iterable[ToolManual]) -> str:
        """Steps 1 and 2 as two lines, then one line per tool (``str`` of each decision)."""
        plan = self._plan(agent_type)
        decisions = self.explain(agent_type, manuals)
        if plan.has_profile:
            first = f"1. profile: {agent_type!r} ({plan.profile.description or 'no description'})"
        else:
            first = f"1. profile: {agent_type!r} has none; the permissive profile allows every category"
        second = "2. categories: " + (", ".join(sorted(c.value for c in plan.categories)) or "none")
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

    def _effective(self, manuals: Sequence[ToolManual]) -> Sequence[ToolManual]:
        overrides = self._config.manuals
        if not overrides:
            return manuals
        return [overrides[m.name].apply(m) if m.name in overrides else m for m in manuals]

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
        return _Plan(
            profile=profile,
            has_profile=has_profile,
            categories=frozenset(categories),
            brought_in=frozenset(added),
            denied=frozenset(profile.denied_tools),
            required=profile.required_tools,
            add_tools=tuple(t for t in override.add_tools if t not in profile.required_tools),
            deny_tools=frozenset(override.deny_tools),
            global_deny=frozenset(self._config.global_deny),
            added=added,
            removed=tuple(c for c in override.remove_categories if c in allowed),
        )

    @staticmethod
    def _decide(plan: _Plan, manuals: Sequence[ToolManual]) -> list[tuple[bool, ResolutionStep]]:
        categories, required, add_tools = plan.categories, set(plan.required), set(plan.add_tools)
        out: list[tuple[bool, ResolutionStep]] = []
        for manual in manuals:
            name = manual.name
            step: ResolutionStep = "category"
            included = manual.category in categories or any(c in categories for c in manual.secondary_categories)
            if included and name in plan.denied:  # step 4
                if plan.brought_in and _in(manual, plan.brought_in):
                    step = "add_categories"
                else:
                    included, step = False, "denied"
            if not included and name in required:  # step 5
                included, step = True, "required"
            elif not included and name in add_tools:
                included, step = True, "add_tools"
            if name in plan.deny_tools:  # step 6
                included, step = False, "deny_tools"
            elif name in plan.global_deny:
                included, step = False, "global_deny"
            out.append((included, step))
        limit = plan.profile.max_tool_count
        if limit is not None and sum(1 for included, _ in out if included) > limit:
            _cut(plan, manuals, out, limit)
        return out


def _in(manual: ToolManual, categories: Collection[ToolCategory]) -> bool:
    return manual.category in categories or any(c in categories for c in manual.secondary_categories)


def _cut(plan: _Plan, manuals: Sequence[ToolManual], out: list[tuple[bool, ResolutionStep]], limit: int) -> None:
    """Step 7: keep required tools first, then the user's add_tools, then registration order."""
    index = {manual.name: i for i, manual in enumerate(manuals)}
    priority = [index[name] for name in (*plan.required, *plan.add_tools) if name in index and out[index[name]][0]]
    rest = [i for i, (included, _) in enumerate(out) if included and i not in priority]
    for i in (priority + rest)[limit:]:
        out[i] = (False, "max_tool_count")


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
    label, verb = ("category", "is") if not manual.secondary_categories else ("categories", "are")
    if step == "add_categories":
        brought = _cats(c for c in manual.categories if c in plan.brought_in)
        return f"Included: the user's add_categories brought in {brought}, which lifts the {agent} profile's deny."
    if step != "category":
        template = _SIMPLE_REASONS[step]
        return template.format(
            agent=agent, label=label, mine=mine, verb=verb, limit=plan.profile.max_tool_count, count=count
        )
    if not plan.has_profile:
        return f"Included: {agent!r} has no profile, so the permissive profile allows every category ({mine})."
    matched = [c for c in manual.categories if c in plan.categories]
    if matched:
        also = " (it is also required)" if manual.name in plan.required else ""
        are = "is" if len(matched) == 1 else "are"
        return f"Included: {_cats(matched)} {are} among the {agent} agent's categories{also}."
    return (
        f"Excluded: its {label} {mine} {verb} not among the {agent} agent's categories "
        f"({_cats(sorted(plan.categories))})."
    )
