"""``CODING_TOOL_MANUALS``: the manuals of the fourteen coding tools the agent profiles speak of.

The default agent profiles (:mod:`tools.routing.profiles`) are written for these tools:
read, glob, grep, edit, write, patch, bash, webfetch, websearch, task, skill, todowrite,
todoread and lsp. The workspace tools that implement them register with these manuals
(``registry.register(tool, manual=CODING_TOOL_MANUALS_BY_NAME["read"])``) so that every
profile routes them as the routing spec says. Each declares its risk and ``mutating`` flag
(nothing here relies on the fail-closed defaults): the read-only profiles get exactly the
tools declared ``mutating=False``.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from tools.manual import ToolCategory, ToolManual

_FR = ToolCategory.FILE_READ
_FW = ToolCategory.FILE_WRITE
_SEARCH = ToolCategory.SEARCH
_PLANNING = ToolCategory.PLANNING

#: The coding tools' manuals, in the routing spec's order.
CODING_TOOL_MANUALS: tuple[ToolManual, ...] = (
    ToolManual(
        name="read",
        display_name="Read file",
        description="Read a file of the workspace, optionally a range of lines.",
        category=_FR,
        risk="safe",
        mutating=False,
        capabilities=("read_file", "view_file"),
    ),
    ToolManual(
        name="glob",
        display_name="Find files",
        description="List the workspace files whose paths match a glob pattern.",
        category=_FR,
        secondary_categories=(_SEARCH,),
        risk="safe",
        mutating=False,
        capabilities=("find_files", "list_files"),
    ),
    ToolManual(
        name="grep",
        display_name="Search file contents",
        description="Search the workspace files for a regular expression.",
        category=_FR,
        secondary_categories=(_SEARCH,),
        risk="safe",
        mutating=False,
        capabilities=("search_code", "regex_search"),
    ),
    ToolManual(
        name="edit",
        display_name="Edit file",
        description="Replace an exact piece of text in a workspace file.",
        category=_FW,
        risk="moderate",
        mutating=True,
        token_cost="medium",  # noqa: S106 - a cost level, not a secret
        capabilities=("edit_file",),
    ),
    ToolManual(
        name="write",
        display_name="Write file",
        description="Create or overwrite a workspace file with the given content.",
        category=_FW,
        risk="moderate",
        mutating=True,
        token_cost="medium",  # noqa: S106 - a cost level, not a secret
        capabilities=("write_file", "create_file"),
    ),
    ToolManual(
        name="patch",
        display_name="Apply patch",
        description="Apply a unified diff to workspace files.",
        category=_FW,
        risk="moderate",
        mutating=True,
        token_cost="medium",  # noqa: S106 - a cost level, not a secret
        capabilities=("apply_patch", "diff"),
    ),
    ToolManual(
        name="bash",
        display_name="Run command",
        description="Run a command in the workspace and return its output and exit code.",
        category=ToolCategory.EXECUTION,
        risk="dangerous",
        mutating=True,
        token_cost="high",  # noqa: S106 - a cost level, not a secret
        capabilities=("shell", "run_command", "run_tests"),
    ),
    ToolManual(
        name="webfetch",
        display_name="Fetch web page",
        description="Fetch a web page by URL and return its text.",
        category=ToolCategory.WEB,
        risk="moderate",
        mutating=False,
        token_cost="high",  # noqa: S106 - a cost level, not a secret
        capabilities=("fetch_url", "read_web_page"),
    ),
    ToolManual(
        name="websearch",
        display_name="Web search",
        description="Search the web and return titles, URLs and snippets.",
        category=ToolCategory.WEB,
        risk="moderate",
        mutating=False,
        token_cost="medium",  # noqa: S106 - a cost level, not a secret
        capabilities=("web_search",),
    ),
    ToolManual(
        name="task",
        display_name="Delegate task",
        description=(
            "Hand a task to a sub-agent of a given type and return its answer; the sub-agent never gets "
            "more tools than its caller, so delegating changes nothing by itself."
        ),
        category=ToolCategory.DELEGATION,
        risk="safe",
        mutating=False,
        token_cost="high",  # noqa: S106 - a cost level, not a secret
        capabilities=("delegate", "sub_agent"),
    ),
    ToolManual(
        name="skill",
        display_name="Load skill",
        description="Load a skill: instructions for a kind of task.",
        category=_PLANNING,
        risk="safe",
        mutating=False,
        capabilities=("load_skill",),
    ),
    ToolManual(
        name="todowrite",
        display_name="Write todo list",
        description="Replace the session's todo list.",
        category=_PLANNING,
        risk="safe",
        mutating=True,
        capabilities=("todo",),
    ),
    ToolManual(
        name="todoread",
        display_name="Read todo list",
        description="Read the session's todo list.",
        category=_PLANNING,
        risk="safe",
        mutating=False,
        capabilities=("todo",),
    ),
    ToolManual(
        name="lsp",
        display_name="Code navigation",
        description="Ask the language server for definitions, references, symbols and diagnostics.",
        category=ToolCategory.NAVIGATION,
        risk="safe",
        mutating=False,
        capabilities=("go_to_definition", "find_references", "diagnostics"),
    ),
)

#: The same manuals by tool name (read-only).
CODING_TOOL_MANUALS_BY_NAME: Mapping[str, ToolManual] = MappingProxyType({m.name: m for m in CODING_TOOL_MANUALS})
