"""Registries with a dangerous tool that really deletes a file, served over MCP to test the
freedom dial: ``build`` (no policy of its own: the user's applies) and ``build_strict`` (its
own policy, level low)."""

from __future__ import annotations

import os

from pydantic import BaseModel, Field

from tools import BaseTool, LocalToolRegistry
from tools.approvals import ApprovalPolicy
from tools.approvals.preview import files_diff
from tools.routing import ToolCategory, ToolManual


def read_note(path: str) -> str:
    """Read a note.

    Args:
        path: The note's file.
    """
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def delete_note(path: str) -> str:
    """Delete a note for good.

    Args:
        path: The note's file.
    """
    os.remove(path)
    return f"deleted {path}"


class Plugin(BaseModel):
    plugin: str = Field(description="The plugin's name.")


class InstallPlugin(BaseTool[Plugin, str]):
    name = "install_plugin"
    description = "Install a plugin."
    manual = ToolManual(name="install_plugin", category=ToolCategory.EXECUTION, risk="dangerous")

    def approval_preview(self, request: Plugin) -> str:
        new = {f"{request.plugin}.py": b"print('hello')\n"}
        return files_diff(None, new, label=f"new plugin {request.plugin}")

    def execute_internal(self, request: Plugin) -> str:
        return f"installed {request.plugin}"


def build() -> LocalToolRegistry:
    """read_note (safe), delete_note (dangerous), install_plugin (dangerous, with a preview)."""
    registry = LocalToolRegistry()
    registry.register(read_note, manual=ToolManual(name="read_note", category=ToolCategory.FILE_READ, risk="safe"))
    registry.register(
        delete_note, manual=ToolManual(name="delete_note", category=ToolCategory.FILE_WRITE, risk="dangerous")
    )
    registry.register(InstallPlugin())
    return registry


def build_strict() -> LocalToolRegistry:
    """The same tools under the application's own policy: level low (nothing runs unasked)."""
    strict = LocalToolRegistry(policy=ApprovalPolicy("low"))
    for name in ("read_note", "delete_note", "install_plugin"):
        entry = build().get_tool(name)
        assert entry is not None
        strict.register(entry, manual=build().get_manual(name))
    return strict
