"""task delegation (rights never widen, nesting bounded) and bash in the sandbox (fork bomb)."""

from __future__ import annotations

from pathlib import Path

from orchestrator.agents import AgentToolset, SubAgent, SubAgentDelegator
from tools.builtin.code_executor import LocalSandbox
from tools.builtin.workspace import DelegationResult
from tools.routing import ToolView

from ._scripted import ScriptedModel, call


def test_main_delegates_to_the_coder_and_gets_its_answer_and_calls(workspace: Path, sandbox: LocalSandbox) -> None:
    coder = ScriptedModel([[call("read", path="calc.py")], "add() subtracts."])

    def make(kind: str, view: ToolView) -> SubAgent:
        return SubAgent(kind, coder, view, "x", 3)

    toolset = AgentToolset(sandbox=sandbox, make_agent=make)
    main = ScriptedModel([[call("task", agent="coder", prompt="Look at calc.py")], "The coder says add() subtracts."])
    result = SubAgent("main", main, toolset.view("main", workspace), "x", 3).run("why?")
    toolset.close()
    assert result.answer == "The coder says add() subtracts."
    delegated = main.tool_messages()[0]["data"]
    assert DelegationResult.model_validate(delegated).tool_calls == [
        {"name": "read", "status": "success", "error_type": None}
    ]
    assert delegated["answer"] == "add() subtracts."


def test_a_delegated_agent_never_gets_more_than_its_caller(workspace: Path, sandbox: LocalSandbox) -> None:
    toolset = AgentToolset(sandbox=sandbox)
    delegator = SubAgentDelegator(toolset, lambda kind, view: SubAgent(kind, ScriptedModel(["ok"]), view, "x", 1),
                                  workspace)  # fmt: skip
    delegator.bind_caller(["read", "grep", "task"])  # an explore-like caller
    seen: list[list[str]] = []
    original = toolset.view

    def spy(*args: object, **kwargs: object) -> ToolView:
        view = original(*args, **kwargs)  # type: ignore[arg-type]
        seen.append(view.names())
        return view

    toolset.view = spy  # type: ignore[method-assign]
    delegator.delegate("coder", "edit calc.py")
    toolset.close()
    assert set(seen[-1]) <= {"read", "grep"}  # no edit/write/bash although the coder's profile has them


def test_nested_delegation_is_bounded(workspace: Path, sandbox: LocalSandbox) -> None:
    model = ScriptedModel([[call("task", agent="main", prompt="again")]], repeat_last=True)
    toolset = AgentToolset(
        sandbox=sandbox, make_agent=lambda kind, view: SubAgent(kind, model, view, "x", 2), max_depth=2
    )
    SubAgent("main", model, toolset.view("main", workspace), "x", 2).run("go")
    toolset.close()
    refusals = [m for m in model.tool_messages() if m.get("error_type") == "permission_denied"]
    assert refusals and "nested 2 deep" in refusals[0]["error"]


def test_a_fork_bomb_through_bash_is_contained(workspace: Path, sandbox: LocalSandbox) -> None:
    model = ScriptedModel([[call("bash", command=":(){ :|:& };:", timeout_seconds=5)], "done"])
    toolset = AgentToolset(sandbox=sandbox)
    SubAgent("coder", model, toolset.view("coder", workspace), "x", 2).run("bomb")
    toolset.close()
    (answer,) = model.tool_messages()
    assert answer["status"] == "success"
    # The call returns (the per-run process cap stops the forks; the sandbox kills what is
    # left when the call ends: tests/integration/sandbox checks no process survives).
    assert answer["data"]["exit_code"] is not None
    assert sorted(p.name for p in workspace.iterdir()) == ["calc.py", "tests"]


def test_bash_writes_back_to_the_workspace_and_nothing_else(workspace: Path, sandbox: LocalSandbox) -> None:
    model = ScriptedModel([[call("bash", command="echo hi > out.txt; echo x > /tmp/elsewhere; rm calc.py")], "done"])
    toolset = AgentToolset(sandbox=sandbox)
    SubAgent("coder", model, toolset.view("coder", workspace), "x", 2).run("go")
    toolset.close()
    data = model.tool_messages()[0]["data"]
    assert (data["written"], data["deleted"]) == (["out.txt"], ["calc.py"])
    assert (workspace / "out.txt").read_text() == "hi\n"
    assert not Path("/tmp/elsewhere").exists()
