"""AgentToolProfile and DEFAULT_AGENT_PROFILES: the spec's table, and bad profiles."""

from __future__ import annotations

import dataclasses

import pytest

from tools.routing import DEFAULT_AGENT_PROFILES, AgentToolProfile, RoutingConfigError, ToolCategory

ALL = [c.value for c in ToolCategory]
PLACED = [c for c in ALL if c != "unclassified"]
READ_ONLY = {"plan", "explore", "researcher", "reviewer"}
DOCS: tuple[list[str], list[str], list[str]] = (
    ["file-read", "file-write", "search"],
    ["write", "bash", "webfetch", "websearch", "task", "todowrite", "todoread", "patch", "skill"],
    [],
)

#: The routing spec's agent-type table: allowed categories, denied tools, required tools.
TABLE: dict[str, tuple[list[str], list[str], list[str]]] = {
    "main": (PLACED, [], ["skill"]),
    "plan": (
        ["file-read", "search", "web", "planning", "delegation", "navigation"],
        ["write", "todowrite", "todoread", "patch"],
        ["skill"],
    ),
    "explore": (
        ["file-read", "search", "navigation"],
        ["edit", "write", "bash", "webfetch", "websearch", "todowrite", "todoread", "patch", "skill"],
        ["task"],
    ),
    "debugger": (
        ["file-read", "file-write", "execution", "search", "navigation"],
        ["write", "webfetch", "websearch", "todowrite", "todoread", "patch"],
        ["skill"],
    ),
    "researcher": (
        ["file-read", "search", "web", "delegation", "navigation"],
        ["edit", "write", "todowrite", "todoread", "patch"],
        ["skill"],
    ),
    "docs-generator": DOCS,
    "readme-generator": DOCS,
    "coder": (
        ["file-read", "file-write", "execution", "search"],
        ["task", "webfetch", "websearch", "todowrite", "todoread"],
        ["skill"],
    ),
    "test-writer": (
        ["file-read", "file-write", "execution", "search"],
        ["task", "webfetch", "websearch", "todowrite", "todoread", "patch"],
        ["skill"],
    ),
    "reviewer": (
        ["file-read", "search", "navigation"],
        ["edit", "write", "bash", "webfetch", "websearch", "todowrite", "todoread", "task", "patch"],
        ["skill"],
    ),
}


@pytest.mark.parametrize("agent_type", list(TABLE))
def test_default_profiles_reproduce_the_spec_table(agent_type: str) -> None:
    profile = DEFAULT_AGENT_PROFILES[agent_type]
    allowed, denied, required = TABLE[agent_type]
    assert profile.agent_type == agent_type
    assert [c.value for c in profile.allowed_categories] == allowed
    assert list(profile.denied_tools) == denied
    assert list(profile.required_tools) == required
    assert profile.max_tool_count is None
    assert not set(profile.denied_tools) & set(profile.required_tools)
    assert profile.read_only == (agent_type in READ_ONLY)
    assert ToolCategory.UNCLASSIFIED not in profile.allowed_categories


def test_only_the_permissive_profile_allows_unclassified_tools() -> None:
    from tools.routing import permissive_profile

    assert ToolCategory.UNCLASSIFIED in permissive_profile("someone").allowed_categories
    assert not permissive_profile("someone").read_only


def test_read_only_must_be_a_bool() -> None:
    with pytest.raises(RoutingConfigError, match="read_only must be True or False, got 'yes'"):
        AgentToolProfile("a", read_only="yes")  # type: ignore[arg-type]


def test_main_allows_tooldecks_own_categories() -> None:
    allowed = DEFAULT_AGENT_PROFILES["main"].allowed_categories
    assert {ToolCategory.CONTEXT, ToolCategory.MEMORY, ToolCategory.COMPUTE} <= set(allowed)


def test_reviewer_has_no_write_category_and_coder_denies_task() -> None:
    assert ToolCategory.FILE_WRITE not in DEFAULT_AGENT_PROFILES["reviewer"].allowed_categories
    assert "task" in DEFAULT_AGENT_PROFILES["coder"].denied_tools


def test_defaults_are_read_only() -> None:
    with pytest.raises(TypeError):
        DEFAULT_AGENT_PROFILES["x"] = DEFAULT_AGENT_PROFILES["main"]  # type: ignore[index]
    with pytest.raises(dataclasses.FrozenInstanceError):
        DEFAULT_AGENT_PROFILES["main"].denied_tools = ("read",)  # type: ignore[misc]


def test_strings_are_accepted_for_categories_and_duplicates_dropped() -> None:
    profile = AgentToolProfile("a", ("file-read", ToolCategory.FILE_READ, "web"), ["x", "x"])  # type: ignore[arg-type]
    assert profile.allowed_categories == (ToolCategory.FILE_READ, ToolCategory.WEB)
    assert profile.denied_tools == ("x",)


def test_a_profile_that_denies_and_requires_a_tool_is_an_error() -> None:
    with pytest.raises(RoutingConfigError) as info:
        AgentToolProfile("a", ("file-read",), ("skill", "bash"), ("skill",))  # type: ignore[arg-type]
    assert str(info.value) == (
        "profile 'a' both denies and requires 'skill': remove each from denied_tools or from required_tools"
    )


def test_max_tool_count_below_the_required_tools_is_an_error() -> None:
    with pytest.raises(RoutingConfigError) as info:
        AgentToolProfile("a", (), (), ("skill", "task"), max_tool_count=1)
    assert str(info.value) == (
        "profile 'a': max_tool_count=1 is below its 2 required tools (skill, task): raise max_tool_count to at "
        "least 2 or require fewer tools"
    )


@pytest.mark.parametrize("count", [-1, 1.5, True, "3"])
def test_max_tool_count_must_be_a_whole_number(count: object) -> None:
    with pytest.raises(RoutingConfigError, match="max_tool_count must be a whole number"):
        AgentToolProfile("a", max_tool_count=count)  # type: ignore[arg-type]


def test_unknown_category_names_the_allowed_values() -> None:
    with pytest.raises(RoutingConfigError) as info:
        AgentToolProfile("a", ("file-read", "files"))  # type: ignore[arg-type]
    assert str(info.value) == (
        "profile 'a' allowed_categories: unknown category 'files'; allowed values: file-read, file-write, "
        "execution, web, planning, delegation, search, navigation, context, memory, compute, unclassified"
    )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"agent_type": ""}, "agent type '' is not valid"),
        ({"agent_type": "a b"}, "agent type 'a b' is not valid"),
        ({"agent_type": "a", "allowed_categories": "file-read"}, "expected a list of categories"),
        ({"agent_type": "a", "denied_tools": "bash"}, "expected a list of tool names"),
        ({"agent_type": "a", "required_tools": ["bad name!"]}, "'bad name!' is not a tool name"),
        ({"agent_type": "a", "denied_tools": ["x" * 65]}, "is not a tool name"),
    ],
)
def test_bad_profiles(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(RoutingConfigError, match=message):
        AgentToolProfile(**kwargs)  # type: ignore[arg-type]
