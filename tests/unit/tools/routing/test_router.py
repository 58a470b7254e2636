"""ToolRouter: each resolution step, its order, explain, and the caches."""

from __future__ import annotations

import pytest

from tools.routing import (
    CODING_TOOL_MANUALS,
    DEFAULT_AGENT_PROFILES,
    STEP_NUMBERS,
    AgentToolOverride,
    AgentToolProfile,
    ManualOverride,
    RoutingConfigError,
    RoutingDecision,
    ToolCategory,
    ToolManual,
    ToolRouter,
    ToolRoutingConfig,
)

FR, FW, EX, WEB = ToolCategory.FILE_READ, ToolCategory.FILE_WRITE, ToolCategory.EXECUTION, ToolCategory.WEB
MANUALS = list(CODING_TOOL_MANUALS)


def names(manuals: list[ToolManual]) -> list[str]:
    return [m.name for m in manuals]


def router(**profiles: AgentToolOverride) -> ToolRouter:
    return ToolRouter(config=ToolRoutingConfig(profiles=profiles))


def test_resolve_allows_and_explain_agree_for_every_default_profile() -> None:
    r = ToolRouter()
    for agent_type in DEFAULT_AGENT_PROFILES:
        resolved = names(r.resolve(agent_type, MANUALS))
        decisions = r.explain(agent_type, MANUALS)
        assert [d.tool for d in decisions if d.included] == resolved
        assert [d.tool for d in decisions] == names(MANUALS)
        for manual in MANUALS:
            assert r.allows(agent_type, manual.name, MANUALS) == (manual.name in resolved)


def test_category_allow_and_category_deny() -> None:
    r = ToolRouter()
    assert r.allows("reviewer", "read", MANUALS)
    assert not r.allows("reviewer", "bash", MANUALS)
    assert not any(ToolCategory.FILE_WRITE in m.categories for m in r.resolve("reviewer", MANUALS))


def test_secondary_categories_count() -> None:
    profiles = {"finder": AgentToolProfile("finder", (ToolCategory.SEARCH,))}
    assert names(ToolRouter(profiles).resolve("finder", MANUALS)) == ["glob", "grep"]


def test_explicit_deny_beats_an_allowed_category() -> None:
    decision = {d.tool: d for d in ToolRouter().explain("debugger", MANUALS)}["write"]
    assert decision == RoutingDecision(
        "write",
        False,
        "denied",
        "Excluded: the debugger profile denies it, although its category file-write is allowed.",
    )


def test_explicit_require_beats_a_missing_category() -> None:
    decision = {d.tool: d for d in ToolRouter().explain("coder", MANUALS)}["skill"]
    assert decision == RoutingDecision(
        "skill",
        True,
        "required",
        "Included: the coder profile requires it, although its category planning is not allowed.",
    )
    assert decision.step_number == 5


def test_global_deny_blocks_for_every_agent_even_required_tools() -> None:
    r = ToolRouter(config=ToolRoutingConfig(global_deny=("skill", "read")))
    for agent_type in DEFAULT_AGENT_PROFILES:
        resolved = names(r.resolve(agent_type, MANUALS))
        assert "skill" not in resolved
        assert "read" not in resolved
    decision = {d.tool: d for d in r.explain("main", MANUALS)}["skill"]
    assert (decision.included, decision.step, decision.step_number) == (False, "global_deny", 6)


def test_add_categories_extends_and_lifts_the_profile_deny_of_tools_it_brings_in() -> None:
    r = router(coder=AgentToolOverride(add_categories=(WEB,)))
    assert names(r.resolve("coder", MANUALS)) == [
        "read",
        "glob",
        "grep",
        "edit",
        "write",
        "patch",
        "bash",
        "webfetch",
        "websearch",
        "skill",
    ]
    decision = {d.tool: d for d in r.explain("coder", MANUALS)}["webfetch"]
    assert decision.step == "add_categories"
    assert decision.reason == (
        "Included: the user's add_categories brought in web, which lifts the coder profile's deny."
    )


def test_add_categories_of_an_already_allowed_category_lifts_no_deny() -> None:
    r = router(plan=AgentToolOverride(add_categories=(ToolCategory.PLANNING,)))
    assert "todowrite" not in names(r.resolve("plan", MANUALS))


def test_remove_categories_restricts() -> None:
    r = router(coder=AgentToolOverride(remove_categories=(EX,)))
    assert "bash" not in names(r.resolve("coder", MANUALS))
    assert (
        "Excluded: its category execution is not among"
        in {d.tool: d for d in r.explain("coder", MANUALS)}["bash"].reason
    )


def test_add_tools_whitelists_a_tool_even_one_the_profile_denies() -> None:
    r = router(debugger=AgentToolOverride(add_tools=("todoread", "write")))
    resolved = names(r.resolve("debugger", MANUALS))
    assert resolved == ["read", "glob", "grep", "edit", "write", "bash", "skill", "todoread", "lsp"]
    assert {d.tool: d.step for d in r.explain("debugger", MANUALS)}["write"] == "add_tools"


def test_add_tools_cannot_give_a_read_only_profile_a_mutating_tool() -> None:
    r = router(reviewer=AgentToolOverride(add_tools=("todoread", "edit")))
    assert names(r.resolve("reviewer", MANUALS)) == ["read", "glob", "grep", "skill", "todoread", "lsp"]
    edit = {d.tool: d for d in r.explain("reviewer", MANUALS)}["edit"]
    assert (edit.included, edit.step, edit.step_number) == (False, "read_only", 6)
    assert edit.reason == (
        "Excluded: the reviewer profile is read-only and edit's mutating=False was not declared (it may change "
        "things); declare it for a tool that changes nothing (its manual, a routing config manuals override, "
        "tooldeck adopt --read-only)."
    )


def test_deny_tools_wins_over_required_and_add_categories() -> None:
    r = router(coder=AgentToolOverride(add_categories=(WEB,), deny_tools=("skill", "webfetch")))
    resolved = names(r.resolve("coder", MANUALS))
    assert "skill" not in resolved
    assert "webfetch" not in resolved
    assert "websearch" in resolved
    steps = {d.tool: d.step for d in r.explain("coder", MANUALS)}
    assert steps["skill"] == steps["webfetch"] == "deny_tools"


def test_required_tools_that_are_not_registered_are_skipped() -> None:
    only_read = [m for m in MANUALS if m.name == "read"]
    assert names(ToolRouter().resolve("coder", only_read)) == ["read"]


def test_a_read_category_is_not_enough_for_a_read_only_profile() -> None:
    undeclared = ToolManual(name="notion_fetch_page", category=FR, source="mcp", server="notion")
    declared = ToolManual(name="notion_get_page", category=FR, source="mcp", server="notion", mutating=False)
    r = ToolRouter()
    manuals = [*MANUALS, undeclared, declared]
    assert not r.allows("reviewer", "notion_fetch_page", manuals)
    assert r.allows("reviewer", "notion_get_page", manuals)
    assert r.allows("coder", "notion_fetch_page", manuals)
    assert not r.allows("docs-generator", "bash", manuals)


def test_an_undeclared_category_is_placed_by_name_and_an_unknown_name_is_unclassified() -> None:
    fetch = ToolManual(name="notion_fetch_page", source="mcp")
    wipe = ToolManual(name="wipe", source="cli")
    r = ToolRouter()
    manuals = [*MANUALS, fetch, wipe]
    placed = {m.name: m for m in r.effective(manuals)}
    assert (placed["notion_fetch_page"].category, placed["notion_fetch_page"].origin.category) == (FR, "heuristic")
    assert placed["wipe"].category is ToolCategory.UNCLASSIFIED
    assert r.allows("coder", "notion_fetch_page", manuals)
    for agent_type in DEFAULT_AGENT_PROFILES:
        assert not r.allows(agent_type, "wipe", manuals), agent_type
    assert r.allows("someone-new", "wipe", manuals)  # only the permissive profile
    reason = {d.tool: d for d in r.explain("main", manuals)}["wipe"].reason
    assert reason.startswith("Excluded: it is unclassified (no category was declared and its name says none)")
    assert {d.tool: d for d in r.explain("coder", manuals)}["notion_fetch_page"].reason == (
        "Included: file-read is among the coder agent's categories (its category was placed by its name)."
    )


def test_unknown_agent_type_is_permissive() -> None:
    r = ToolRouter()
    assert r.resolve("someone-new", MANUALS) == MANUALS
    assert r.profile("someone-new").allowed_categories == tuple(ToolCategory)
    decision = r.explain("someone-new", MANUALS)[0]
    assert decision.reason == (
        "Included: 'someone-new' has no profile, so the permissive profile allows every category (file-read)."
    )


def test_max_tool_count_keeps_required_tools_first_then_registration_order() -> None:
    profile = AgentToolProfile("small", (FR, FW), (), ("skill", "lsp"), max_tool_count=4)
    r = ToolRouter({"small": profile})
    assert names(r.resolve("small", MANUALS)) == ["read", "glob", "skill", "lsp"]
    cut = {d.tool: d for d in r.explain("small", MANUALS)}["grep"]
    assert (cut.included, cut.step, cut.step_number) == (False, "max_tool_count", 7)
    assert cut.reason == (
        "Excluded: the small profile allows at most 4 tools (4 kept); required tools come first, "
        "then registration order."
    )


def test_max_tool_count_gives_add_tools_priority_over_category_tools() -> None:
    profile = AgentToolProfile("small", (FR,), (), ("skill",), max_tool_count=2)
    r = ToolRouter({"small": profile}, ToolRoutingConfig(profiles={"small": AgentToolOverride(add_tools=("bash",))}))
    assert names(r.resolve("small", MANUALS)) == ["bash", "skill"]


def test_manual_overrides_recategorise_tools_before_routing() -> None:
    config = ToolRoutingConfig(manuals={"bash": ManualOverride(category=FR, risk="safe")})
    r = ToolRouter(config=config)
    resolved = r.resolve("explore", MANUALS)
    # explore denies bash by name: a new category does not lift a profile's deny
    assert "bash" not in names(resolved)
    plain = ToolRouter({"reader": AgentToolProfile("reader", (FR,))}, config)
    bash = next(m for m in plain.resolve("reader", MANUALS) if m.name == "bash")
    assert (bash.category, bash.risk, bash.mutating) == (FR, "safe", True)


def test_explain_has_a_sentence_for_every_step() -> None:
    profile = AgentToolProfile("t", (FR, FW, WEB), ("edit", "webfetch"), ("skill",), max_tool_count=5)
    config = ToolRoutingConfig(
        global_deny=("glob",),
        profiles={"t": AgentToolOverride(add_tools=("lsp",), deny_tools=("grep",))},
    )
    decisions = ToolRouter({"t": profile}, config).explain("t", MANUALS)
    lines = [str(d) for d in decisions]
    assert lines == [
        "+ read (step 3, category): Included: file-read is among the t agent's categories.",
        "- glob (step 6, global_deny): Excluded: the config's global_deny names it (a deny always wins).",
        "- grep (step 6, deny_tools): Excluded: the user's deny_tools for t names it (a deny always wins).",
        "- edit (step 4, denied): Excluded: the t profile denies it, although its category file-write is allowed.",
        "+ write (step 3, category): Included: file-write is among the t agent's categories.",
        "+ patch (step 3, category): Included: file-write is among the t agent's categories.",
        "- bash (step 3, category): Excluded: its category execution is not among the t agent's categories "
        "(file-read, file-write, web).",
        "- webfetch (step 4, denied): Excluded: the t profile denies it, although its category web is allowed.",
        "- websearch (step 7, max_tool_count): Excluded: the t profile allows at most 5 tools (5 kept); required "
        "tools come first, then registration order.",
        "- task (step 3, category): Excluded: its category delegation is not among the t agent's categories "
        "(file-read, file-write, web).",
        "+ skill (step 5, required): Included: the t profile requires it, although its category planning is not "
        "allowed.",
        "- todowrite (step 3, category): Excluded: its category planning is not among the t agent's categories "
        "(file-read, file-write, web).",
        "- todoread (step 3, category): Excluded: its category planning is not among the t agent's categories "
        "(file-read, file-write, web).",
        "+ lsp (step 5, add_tools): Included: the user's add_tools for t names it.",
    ]
    assert set(STEP_NUMBERS) == {d.step for d in decisions} | {"add_categories", "read_only"}


def test_explain_text_starts_with_the_profile_and_category_steps() -> None:
    config = ToolRoutingConfig(profiles={"coder": AgentToolOverride(add_categories=(WEB,), remove_categories=(EX,))})
    text = ToolRouter(config=config).explain_text("coder", MANUALS).splitlines()
    assert text[0] == "1. profile: 'coder' (Implements a specification: reads, writes and runs code.)"
    assert text[1] == "2. categories: file-read, file-write, search, web (user added web) (user removed execution)"
    assert text[-1] == "coder gets 9 of 14 tools."
    assert len(text) == 2 + len(MANUALS) + 1


def test_resolution_is_deterministic_and_cached_by_identity() -> None:
    r = ToolRouter()
    first = r.resolve("coder", MANUALS)
    again = r.resolve("coder", list(MANUALS))
    assert first == again
    assert first is not again  # callers get their own list
    changed = [*MANUALS[:-1], MANUALS[-1].model_copy(update={"category": FW})]
    assert names(r.resolve("coder", changed))[-1] == "lsp"


def test_resolve_accepts_any_iterable() -> None:
    assert names(ToolRouter().resolve("reviewer", iter(MANUALS))) == ["read", "glob", "grep", "skill", "lsp"]


def test_router_rejects_overrides_for_agent_types_without_a_profile() -> None:
    config = ToolRoutingConfig(profiles={"reviwer": AgentToolOverride(deny_tools=("bash",))})
    with pytest.raises(RoutingConfigError, match=r"overrides for 'reviwer', which has no agent profile"):
        ToolRouter(config=config)


def test_router_rejects_profiles_filed_under_another_name() -> None:
    with pytest.raises(RoutingConfigError, match="holds the profile of 'coder'"):
        ToolRouter({"reviewer": DEFAULT_AGENT_PROFILES["coder"]})


def test_check_names_unregistered_add_tools_and_manuals() -> None:
    config = ToolRoutingConfig(
        profiles={"coder": AgentToolOverride(add_tools=("lps",))},
        manuals={"bsh": ManualOverride(category=FR)},
        global_deny=("not_registered_is_fine",),
    )
    r = ToolRouter(config=config)
    with pytest.raises(RoutingConfigError) as info:
        r.check(MANUALS)
    assert str(info.value) == (
        "routing config names tools that are not registered: manuals.bsh (did you mean 'bash'?); "
        "profiles.coder.add_tools: 'lps' (did you mean 'lsp'?). Register those tools first, or remove the "
        "entries from the config."
    )
