"""Manuals: the coding tools' table, every builtin tool's manual, derived and external manuals."""

from __future__ import annotations

from typing import Any

import pytest

from tools import BaseTool, LocalToolRegistry
from tools.manual import ManualOrigin
from tools.routing import (
    CODING_TOOL_MANUALS,
    CODING_TOOL_MANUALS_BY_NAME,
    ToolCategory,
    ToolManual,
    categorize_tool,
    derive_manual,
    external_manual,
)

#: The routing spec's tool table: category, secondary categories, risk, mutating, token cost.
TOOL_TABLE: dict[str, tuple[str, tuple[str, ...], str, bool, str]] = {
    "read": ("file-read", (), "safe", False, "low"),
    "glob": ("file-read", ("search",), "safe", False, "low"),
    "grep": ("file-read", ("search",), "safe", False, "low"),
    "edit": ("file-write", (), "moderate", True, "medium"),
    "write": ("file-write", (), "moderate", True, "medium"),
    "patch": ("file-write", (), "moderate", True, "medium"),
    "bash": ("execution", (), "dangerous", True, "high"),
    "webfetch": ("web", (), "moderate", False, "high"),
    "websearch": ("web", (), "moderate", False, "medium"),
    "task": ("delegation", (), "safe", False, "high"),
    "skill": ("planning", (), "safe", False, "low"),
    "todowrite": ("planning", (), "safe", True, "low"),
    "todoread": ("planning", (), "safe", False, "low"),
    "lsp": ("navigation", (), "safe", False, "low"),
}


def test_coding_tool_manuals_reproduce_the_spec_table() -> None:
    assert [m.name for m in CODING_TOOL_MANUALS] == list(TOOL_TABLE)
    for manual in CODING_TOOL_MANUALS:
        row = (
            manual.category.value,
            tuple(c.value for c in manual.secondary_categories),
            manual.risk,
            manual.mutating,
            manual.token_cost,
        )
        assert row == TOOL_TABLE[manual.name], manual.name
        assert manual.source == "builtin"
        assert manual.description
        assert manual.capabilities
    assert CODING_TOOL_MANUALS_BY_NAME["bash"].risk == "dangerous"
    assert CODING_TOOL_MANUALS_BY_NAME.get("nonexistent") is None
    assert [m.name for m in CODING_TOOL_MANUALS if ToolCategory.FILE_READ in m.categories] == ["read", "glob", "grep"]


def builtin_classes() -> list[type[BaseTool[Any, Any]]]:
    from tools.builtin import (
        CodeExecutorTool,
        KnowledgeSearchTool,
        KnowledgeStoreTool,
        MathSolverTool,
        UserContextTool,
        WebTool,
    )

    return [
        MathSolverTool,
        CodeExecutorTool,
        WebTool,
        KnowledgeStoreTool,
        KnowledgeSearchTool,
        UserContextTool,
    ]


#: Category, risk and mutating each builtin declares (execute_code: with a sandbox it did
#: not set up itself; with its own it is safe, see test_execute_code_is_safe_in_its_own_sandbox).
BUILTIN_TABLE = {
    "math_solver": ("compute", "safe", False),
    "execute_code": ("execution", "dangerous", True),
    "web": ("web", "moderate", False),
    "store_knowledge": ("memory", "safe", True),
    "search_knowledge": ("memory", "safe", False),
    "user_context": ("context", "safe", False),
}


def test_every_builtin_tool_ships_a_manual_that_declares_its_risk() -> None:
    for cls in builtin_classes():
        manual = cls.manual
        assert isinstance(manual, ToolManual), cls.__name__
        assert manual.name == cls.name
        assert (manual.category.value, manual.risk, manual.mutating) == BUILTIN_TABLE[cls.name]
        assert (manual.origin.risk, manual.origin.category, manual.origin.mutating) == ("author",) * 3
        assert manual.display_name
        assert manual.description  # says why it has that risk
        assert manual.capabilities
    for manual in CODING_TOOL_MANUALS:
        assert (manual.origin.risk, manual.origin.category, manual.origin.mutating) == ("author",) * 3


def test_tool_search_declares_that_it_only_reads_the_agents_own_tools() -> None:
    from tools.routing import ToolSearchTool

    manual = ToolSearchTool.manual
    assert manual is not None and (manual.risk, manual.mutating) == ("safe", False)
    assert (manual.origin.risk, manual.origin.mutating) == ("author", "author")
    assert manual.read_only_declared and "safe" in manual.description


def test_execute_code_is_safe_in_its_own_sandbox_and_dangerous_in_an_injected_one() -> None:
    from tools.builtin import CodeExecutorTool, LocalSandbox

    own = CodeExecutorTool()
    sandbox = LocalSandbox(isolate_network=False)
    injected = CodeExecutorTool(sandbox=sandbox)
    try:
        assert (own.get_manual().risk, own.get_manual().origin.risk) == ("safe", "author")
        assert "no network" in own.get_manual().description
        assert injected.get_manual().risk == "dangerous"
    finally:
        own.close()
        sandbox.close()


def test_registry_manuals_in_registration_order_with_aliases_renamed(builtin_registry: LocalToolRegistry) -> None:
    manuals = builtin_registry.manuals()
    assert [m.name for m in manuals] == builtin_registry.names()
    by_name = {m.name: m for m in manuals}
    assert by_name["get_daily_briefing"].category is ToolCategory.CONTEXT
    assert by_name["web_search"].category is ToolCategory.WEB  # old names carry their new tool's manual
    assert by_name["math_solver"] == builtin_registry.get_manual("math_solver")
    tool = builtin_registry.get_tool("math_solver")
    assert tool is not None
    assert tool.get_manual().category is ToolCategory.COMPUTE


def test_a_tool_without_a_manual_fails_closed_and_register_manual_is_the_operators() -> None:
    registry = LocalToolRegistry()

    def create_ticket(title: str) -> str:
        """Open a ticket."""
        return title

    registry.register(create_ticket)
    derived = registry.get_manual("create_ticket")
    assert derived is not None
    assert (derived.category, derived.source, derived.mutating, derived.risk) == (
        ToolCategory.UNCLASSIFIED,
        "function",
        True,
        "moderate",
    )
    assert (derived.origin.risk, derived.origin.category, derived.origin.mutating) == ("default",) * 3
    assert not derived.read_only_declared
    registry.register(
        create_ticket,
        name="ticket",
        replace=True,
        manual=ToolManual(name="x", category=ToolCategory.PLANNING, mutating=False),
    )
    given = registry.get_manual("ticket")
    assert given is not None
    assert (given.name, given.category, given.risk, given.mutating) == (
        "ticket",
        ToolCategory.PLANNING,
        "moderate",
        False,
    )
    # what register(manual=...) declares is the operator's; what it left out stays a default
    assert (given.origin.category, given.origin.mutating, given.origin.risk) == ("operator", "operator", "default")
    assert given.read_only_declared


@pytest.mark.parametrize(
    ("name", "kwargs", "expected"),
    [
        ("notion_search", {"server": "notion-docs-reader", "known": {"notion_search": "search"}}, "search"),
        ("unknown_tool", {"server": "linear-server", "server_defaults": {"linear-server": "planning"}}, "planning"),
        ("search_documents", {"server": "new-server"}, "search"),
        ("create_record", {"server": "new-server"}, "file-write"),
        ("get_page", {}, "file-read"),
        ("run_query", {}, "search"),
        ("do_something", {"server": "new-server"}, "unclassified"),
        ("wipe", {}, "unclassified"),
        ("notes", {}, "unclassified"),
        ("invokeLambda", {}, "execution"),
        ("list_issues", {"known": {"create_issue": "planning"}}, "search"),
        ("create_issue", {"known": {"create_issue": "planning"}, "server_defaults": {"x": "web"}}, "planning"),
        ("fetch-url", {}, "file-read"),
    ],
)
def test_categorize_tool(name: str, kwargs: dict[str, object], expected: str) -> None:
    assert categorize_tool(name, **kwargs) == ToolCategory(expected)  # type: ignore[arg-type]


def test_categorize_rejects_unknown_categories_in_maps() -> None:
    with pytest.raises(ValueError, match="'nope' is not a valid ToolCategory"):
        categorize_tool("x", known={"x": "nope"})


def test_external_manual_takes_declared_categories_and_ignores_an_untrusted_read_only_hint() -> None:
    manual = external_manual(
        "git_git_status",
        source="mcp",
        server="git",
        remote_name="git_status",
        description="Show the working tree status.",
        known={"git_commit": "file-write"},
        server_default="file-read",
        read_only=True,
        schema={"type": "object", "properties": {"repo_path": {"type": "string"}}},
    )
    assert manual == ToolManual(
        name="git_git_status",
        description="Show the working tree status.",
        category=ToolCategory.FILE_READ,
        source="mcp",
        server="git",
        risk="moderate",
        mutating=True,
        token_cost="low",
        capabilities=("git_status",),
        origin=ManualOrigin(
            category="operator",
            notes=("readOnlyHint ignored: the server is not trusted (mutating assumed)",),
        ),
    )
    trusted = external_manual("git_status", source="mcp", read_only=True, trusted=True)
    assert (trusted.risk, trusted.mutating, trusted.category) == ("safe", False, ToolCategory.UNCLASSIFIED)
    assert (trusted.origin.risk, trusted.origin.mutating) == ("trusted-hint", "trusted-hint")
    assert trusted.read_only_declared
    destructive = external_manual("table_rows", source="http", destructive=True, read_only=False)
    assert (destructive.category, destructive.risk, destructive.mutating) == (
        ToolCategory.UNCLASSIFIED,
        "dangerous",
        True,
    )
    assert destructive.origin.risk == "hint"
    by_local = external_manual("p_x", source="mcp", remote_name="x", known={"p_x": "web"})
    assert by_local.category is ToolCategory.WEB


def test_derive_manual_token_cost_grows_with_the_schema() -> None:
    registry = LocalToolRegistry()

    def small(a: int) -> int:
        """Small."""
        return a

    registry.register(small)
    big_schema = {
        "type": "object",
        "properties": {f"field_{i}": {"type": "string", "description": "x" * 80} for i in range(40)},
    }
    registry.register(small, name="big", parameters=big_schema)
    tool_small, tool_big = registry.get_tool("small"), registry.get_tool("big")
    assert tool_small is not None
    assert tool_big is not None
    assert derive_manual(tool_small).token_cost == "low"
    assert derive_manual(tool_big).token_cost == "high"
