"""A held call of a tool that shows what it changes: the preview is in the pending approval, in
the (signed) state and in what ``python -m orchestrator`` prints; the approved call runs only
if what it changes is still what was shown."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel

from orchestrator._approval_cli import format_pending
from orchestrator.graph import AgentGraph, ResumeError
from tools import BaseTool, LocalToolRegistry
from tools.approvals import ApprovalPolicy, ApprovalsStore, Approve
from tools.approvals.preview import files_diff
from tools.routing import ToolCategory, ToolManual

from .approvals_kit import ScriptedModel, answer, call, roundtrip, tool_answers, turn


class Plugin(BaseModel):
    plugin: str


class InstallPlugin(BaseTool[Plugin, str]):
    name = "install_plugin"
    description = "Install a plugin."
    manual = ToolManual(name="install_plugin", category=ToolCategory.EXECUTION, risk="dangerous")

    def __init__(self) -> None:
        self.code = "print('hello')\n"
        self.installed: list[str] = []

    def approval_preview(self, request: Plugin) -> str:
        return files_diff(None, {f"{request.plugin}.py": self.code.encode()}, label=f"new plugin {request.plugin}")

    def execute_internal(self, request: Plugin) -> str:
        self.installed.append(self.code)
        return "installed"


@pytest.fixture
def tool() -> InstallPlugin:
    return InstallPlugin()


@pytest.fixture
def agent(tool: InstallPlugin, tmp_path: Path) -> AgentGraph:
    registry = LocalToolRegistry(policy=ApprovalPolicy("medium", ApprovalsStore(tmp_path / "approvals.json")))
    registry.register(tool)
    return AgentGraph(ScriptedModel(turn(call("c0", "install_plugin", plugin="greet")), answer()), registry)


PREVIEW = "new plugin greet\n--- /dev/null\n+++ b/greet.py\n@@ -0,0 +1 @@\n+print('hello')\n"


def test_the_held_call_carries_the_preview_into_the_signed_state(agent: AgentGraph) -> None:
    run = agent.run("install greet")
    assert run.status == "awaiting_approval" and run.state is not None
    assert run.pending_approvals[0].preview == PREVIEW
    assert run.state["pending_approvals"][0]["preview"] == PREVIEW
    edited = roundtrip(run.state)
    edited["pending_approvals"][0]["preview"] = "nothing much"
    with pytest.raises(ResumeError, match="edited after it was saved"):
        agent.resume(edited, {"c0": Approve()})


def test_the_shell_shows_what_the_call_changes(agent: AgentGraph, tmp_path: Path) -> None:
    run = agent.run("install greet")
    text = format_pending(run, tmp_path / "state.json")
    assert "      what it changes:\n        new plugin greet\n        --- /dev/null\n" in text
    assert "        +print('hello')\n" in text


def test_an_approved_call_runs_what_was_shown(agent: AgentGraph, tool: InstallPlugin) -> None:
    run = agent.run("install greet")
    done = agent.resume(roundtrip(run.state), {"c0": Approve()})
    assert done.status == "completed"
    assert tool.installed == ["print('hello')\n"]


def test_code_changed_while_paused_is_not_installed(agent: AgentGraph, tool: InstallPlugin) -> None:
    run = agent.run("install greet")
    tool.code = "import os; os.remove('everything')\n"
    done = agent.resume(roundtrip(run.state), {"c0": Approve()})
    ((call_id, content),) = tool_answers(done.messages)
    assert call_id == "c0" and content["error_type"] == "permission_denied"
    assert "no longer what a person approved" in content["error"]
    assert tool.installed == []
