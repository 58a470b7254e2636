"""What `OrchestratorService` registers beyond its builtins: the application's own tools
(``tools=[...]``, ``--registry module:factory``), the workspace tools of an ``--agent``,
and the check that an agent type is left with at least one tool.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tools import BaseTool, DuplicateToolError, LocalToolRegistry, ToolDefinitionError
from tools.manual import ToolCategory

if TYPE_CHECKING:
    from tools.builtin.code_executor import SandboxClient
    from tools.routing import ToolRouter

#: What ``tools=`` takes: tools, plain functions, and registries (their registrations copied).
OwnTool = BaseTool[Any, Any] | Callable[..., Any] | LocalToolRegistry

_WRITES = frozenset({ToolCategory.FILE_WRITE, ToolCategory.EXECUTION})


class OwnToolError(Exception):
    """The application's tools cannot be registered; the message names the tool and the fix."""


def register_own(registry: LocalToolRegistry, tools: Sequence[OwnTool], *, builtins: bool) -> list[str]:
    """Register each of ``tools`` in ``registry`` (a registry's entries with their options).

    Raises:
        OwnToolError: a name is taken (by a builtin or another of ``tools``) or a tool is invalid.
    """
    from tools.registry_spec import copy_registrations

    names: list[str] = []
    for item in tools:
        _check_free(registry, item, builtins)
        try:
            if isinstance(item, LocalToolRegistry):
                names += copy_registrations(item, registry)
            else:
                names.append(registry.register(item).name)
        except DuplicateToolError as exc:
            hint = " or leave the builtins out (--no-builtins, builtins=False)" if builtins else ""
            raise OwnToolError(f"{exc}{hint}") from None
        except (ToolDefinitionError, ValueError) as exc:
            raise OwnToolError(f"your tool {getattr(item, '__name__', item)!r} cannot be registered: {exc}") from None
    return names


def _check_free(registry: LocalToolRegistry, item: OwnTool, builtins: bool) -> None:
    """A name already registered (a builtin's, or another of your tools') is an error naming the fix."""
    if isinstance(item, LocalToolRegistry):
        wanted = item.names()
    else:
        name = item.name if isinstance(item, BaseTool) else getattr(item, "__name__", None)
        wanted = [name] if isinstance(name, str) else []
    taken = [name for name in wanted if name in registry]
    if taken:
        hint = "; or leave the builtins out (--no-builtins, builtins=False)" if builtins else ""
        raise OwnToolError(
            f"your tool name(s) {', '.join(map(repr, taken))} are registered already (a builtin, or another of your "
            f"tools); rename yours (registry.register(tool, name='...')){hint}"
        )


def writes(router: ToolRouter, agent_type: str) -> bool:
    """Whether ``agent_type`` may change files or run code (its categories after the user's
    overrides include ``file-write`` or ``execution``); read-only agents get a read-only
    workspace whatever tools they are given."""
    categories = set(router.profile(agent_type).allowed_categories)
    override = router.config.profiles.get(agent_type)
    if override is not None:
        categories |= set(override.add_categories)
        categories -= set(override.remove_categories)
    return bool(categories & _WRITES)


def register_workspace(
    registry: LocalToolRegistry,
    root: str | os.PathLike[str],
    *,
    read_only: bool,
    sandbox: SandboxClient | None,
) -> list[str]:
    """The workspace tools over ``root`` (read-only: nothing may be written, ``bash`` mounts the
    workspace read-only).

    Raises:
        OwnToolError: ``root`` is not a directory, or a workspace tool's name is taken.
    """
    from tools.builtin.workspace import SkillLibrary, TodoStore, Workspace, workspace_tools

    try:
        workspace = Workspace(
            Path(root), sandbox=sandbox, todos=TodoStore(), skills=SkillLibrary(), write_scope=() if read_only else None
        )
    except ToolDefinitionError as exc:
        raise OwnToolError(f"--workspace: {exc}") from None
    tools = workspace_tools(workspace)
    taken = [tool.name for tool in tools if tool.name in registry]
    if taken:
        raise OwnToolError(
            f"tool name(s) {', '.join(map(repr, taken))} are the workspace tools' of --agent; rename your tool(s)"
        )
    for tool in tools:
        registry.register(tool)
    return [tool.name for tool in tools]


def no_tools_message(agent_type: str, router: ToolRouter, registry: LocalToolRegistry) -> str:
    """Why ``agent_type`` would get no tool: its profile, then each tool's routing decision."""
    decisions = router.explain_text(agent_type, registry.manuals())
    return (
        f"the {agent_type!r} agent would get no tools, so it is not started. How its tools were chosen:\n"
        f"{decisions}\n"
        "Fix: pick another --agent, add tools its profile allows (--registry), or widen its profile in a "
        "--routing-config file (add_categories / add_tools)."
    )
