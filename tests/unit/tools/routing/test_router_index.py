"""The indexed router against a plain reading of the resolution steps, over random registries
and configs: the same tools, the same deciding step, old names with their tools."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from tools.routing import (
    AgentToolOverride,
    AgentToolProfile,
    ToolCategory,
    ToolManual,
    ToolRouter,
    ToolRoutingConfig,
)

CATEGORIES = list(ToolCategory)
NAMES = [f"t{i}" for i in range(12)]


@dataclass(frozen=True)
class Case:
    manuals: list[ToolManual]
    profile: AgentToolProfile
    config: ToolRoutingConfig


@st.composite
def cases(draw: st.DrawFn) -> Case:
    count = draw(st.integers(1, len(NAMES)))
    manuals: list[ToolManual] = []
    for name in NAMES[:count]:
        fields: dict[str, object] = {"name": name}
        if draw(st.booleans()):
            fields["category"] = draw(st.sampled_from(CATEGORIES))
        if draw(st.booleans()):
            fields["secondary_categories"] = tuple(draw(st.lists(st.sampled_from(CATEGORIES), max_size=2)))
        if draw(st.booleans()):
            fields["mutating"] = draw(st.booleans())
        if manuals and draw(st.integers(0, 3)) == 0:
            fields["alias_of"] = draw(st.sampled_from([m.name for m in manuals] + ["missing"]))
        manuals.append(ToolManual(**fields))  # type: ignore[arg-type]
    names = st.lists(st.sampled_from(NAMES), max_size=3, unique=True)
    required = draw(names)
    denied = [n for n in draw(names) if n not in required]
    allowed = tuple(draw(st.lists(st.sampled_from(CATEGORIES), max_size=5, unique=True)))
    limit = draw(st.one_of(st.none(), st.integers(len(required), len(required) + 4)))
    profile = AgentToolProfile("a", allowed, tuple(denied), tuple(required), limit, read_only=draw(st.booleans()))
    add = draw(st.lists(st.sampled_from(CATEGORIES), max_size=2, unique=True))
    remove = [c for c in draw(st.lists(st.sampled_from(CATEGORIES), max_size=2, unique=True)) if c not in add]
    add_tools = draw(names)
    deny_tools = [n for n in draw(names) if n not in add_tools]
    override = AgentToolOverride(
        add_categories=tuple(add),
        remove_categories=tuple(remove),
        add_tools=tuple(add_tools),
        deny_tools=tuple(deny_tools),
    )
    config = ToolRoutingConfig(global_deny=tuple(draw(names)), profiles={"a": override})
    return Case(manuals, profile, config)


def reference(case: Case) -> dict[str, tuple[bool, str]]:
    """The steps of DESIGN section 8, read literally, tool by tool (no index)."""
    profile, override = case.profile, case.config.profiles["a"]
    categories = (set(profile.allowed_categories) | set(override.add_categories)) - set(override.remove_categories)
    brought_in = set(override.add_categories) - set(profile.allowed_categories)
    by_name = {m.name: m for m in case.manuals}
    groups: dict[str, str] = {}
    for manual in case.manuals:
        target = by_name.get(manual.alias_of) if manual.alias_of else None
        groups[manual.name] = target.name if target is not None and target.alias_of is None else manual.name

    def names_in(listed: tuple[str, ...]) -> set[str]:
        return {groups[n] for n in listed if n in groups}

    add_tools = tuple(t for t in override.add_tools if t not in profile.required_tools)
    decided: dict[str, tuple[bool, str]] = {}
    for manual in case.manuals:
        name = manual.name
        if groups[name] != name:
            continue
        step = "category"
        included = any(c in categories for c in manual.categories)
        if included and profile.read_only and not manual.read_only_declared:
            included, step = False, "read_only"
        if included and name in names_in(profile.denied_tools):
            if any(c in brought_in for c in manual.categories):
                step = "add_categories"
            else:
                included, step = False, "denied"
        for listed, why in ((profile.required_tools, "required"), (add_tools, "add_tools")):
            if not included and name in names_in(listed):
                if profile.read_only and not manual.read_only_declared:
                    step = "read_only"
                else:
                    included, step = True, why
                break
        if name in names_in(override.deny_tools):
            included, step = False, "deny_tools"
        elif name in names_in(case.config.global_deny):
            included, step = False, "global_deny"
        decided[name] = (included, step)
    limit = profile.max_tool_count
    kept = [n for n, (included, _) in decided.items() if included]
    if limit is not None and len(kept) > limit:
        priority = dict.fromkeys(groups[t] for t in (*profile.required_tools, *add_tools) if t in groups)
        first = [n for n in priority if decided[n][0]]
        rest = [n for n in kept if n not in first]
        for name in (first + rest)[limit:]:
            decided[name] = (False, "max_tool_count")
    return {m.name: decided[groups[m.name]] for m in case.manuals}


@settings(max_examples=300, deadline=None)
@given(cases())
def test_the_index_decides_like_the_steps_read_literally(case: Case) -> None:
    router = ToolRouter({"a": case.profile}, case.config)
    expected = reference(case)
    decisions = router.explain("a", case.manuals)
    assert {d.tool: (d.included, d.step) for d in decisions} == expected
    resolved = [m.name for m in router.resolve("a", case.manuals)]
    assert resolved == [d.tool for d in decisions if d.included]
    assert router.resolve("a", list(case.manuals)) == router.resolve("a", case.manuals)  # a fresh list, cached
    for manual in case.manuals:
        assert router.allows("a", manual.name, case.manuals) == (manual.name in resolved)
