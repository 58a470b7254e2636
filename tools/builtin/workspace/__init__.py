"""Workspace tools (DESIGN section 13): ``read``, ``glob``, ``grep``, ``edit``, ``write``,
``patch``, ``bash``, ``todowrite``, ``todoread``, ``skill``, ``task``.

Each ships its manual from :data:`tools.routing.CODING_TOOL_MANUALS`, so the default agent
profiles route them (the reviewer never gets ``edit``; the coder never gets ``task``).
Every path is confined to a :class:`Workspace` root and opened through its directory
descriptor (writers follow no symlink, readers only those that stay inside); ``grep``
and ``patch`` are bounded in size and time (:class:`WorkspaceLimits`). Build them with
:func:`workspace_tools` and register them one by one, or with
:func:`register_workspace_tools`::

    workspace = Workspace(Path("repo"), sandbox=LocalSandbox(), todos=TodoStore(), skills=SkillLibrary())
    register_workspace_tools(registry, workspace)
    coder_view = registry.for_agent("coder")
"""

from __future__ import annotations

from tools.base import BaseTool
from tools.builtin.workspace.bash import BashRequest, BashResponse, BashTool
from tools.builtin.workspace.files import EditTool, ReadTool, WriteTool
from tools.builtin.workspace.patch import PatchTool, parse_diff
from tools.builtin.workspace.search import GlobTool, GrepTool
from tools.builtin.workspace.skill import Skill, SkillLibrary, SkillTool, packaged_skills_dir
from tools.builtin.workspace.task import Delegate, DelegationResult, TaskTool
from tools.builtin.workspace.todo import TodoItem, TodoReadTool, TodoStore, TodoWriteTool
from tools.builtin.workspace.workspace import TEST_PATHS, Workspace, WorkspaceLimits
from tools.registry import LocalToolRegistry

__all__ = [
    "TEST_PATHS",
    "BashRequest",
    "BashResponse",
    "BashTool",
    "Delegate",
    "DelegationResult",
    "EditTool",
    "GlobTool",
    "GrepTool",
    "PatchTool",
    "ReadTool",
    "Skill",
    "SkillLibrary",
    "SkillTool",
    "TaskTool",
    "TodoItem",
    "TodoReadTool",
    "TodoStore",
    "TodoWriteTool",
    "Workspace",
    "WorkspaceLimits",
    "WriteTool",
    "packaged_skills_dir",
    "parse_diff",
    "register_workspace_tools",
    "workspace_tools",
]


def workspace_tools(workspace: Workspace, *, delegate: Delegate | None = None) -> list[BaseTool]:  # type: ignore[type-arg]
    """The workspace tools, in the routing spec's order.

    ``todowrite``/``todoread`` come when the workspace has a todo store, ``skill`` when it
    has a skill library, ``bash`` when it has a sandbox, ``task`` when a ``delegate`` is given.
    """
    tools: list[BaseTool] = [  # type: ignore[type-arg]
        ReadTool(workspace),
        GlobTool(workspace),
        GrepTool(workspace),
        EditTool(workspace),
        WriteTool(workspace),
        PatchTool(workspace),
    ]
    if workspace.sandbox is not None:
        tools.append(BashTool(workspace))
    if delegate is not None:
        tools.append(TaskTool(delegate))
    if workspace.skills is not None:
        tools.append(SkillTool(workspace.skills))
    if workspace.todos is not None:
        tools += [TodoWriteTool(workspace.todos), TodoReadTool(workspace.todos)]
    return tools


def register_workspace_tools(
    registry: LocalToolRegistry, workspace: Workspace, *, delegate: Delegate | None = None
) -> list[str]:
    """Register :func:`workspace_tools` (each with its manual); returns their names."""
    names = []
    for tool in workspace_tools(workspace, delegate=delegate):
        registry.register(tool)
        names.append(tool.name)
    return names
