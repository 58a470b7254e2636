"""``--agent TYPE`` gets the ``task`` tool when its profile allows delegation (issue 21 item 3: "the
tools its profile allows, including the workspace tools"): ``explore`` requires it, ``main``,
``plan`` and ``researcher`` allow it, ``coder`` and ``reviewer`` deny it. A delegated agent runs
on the service's model over the same workspace, never with more tools than its caller, and
its calls go through the same freedom level, approver and run record."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from orchestrator import OrchestratorService, Settings
from orchestrator.testing import FunctionModel
from tools.approvals import ApprovalRequest, Approve, Deny
from tools.runs import FileRunStore


def settings(tmp_path: Path, agent: str, freedom: str = "medium") -> Settings:
    return Settings.from_env(
        {}, data_dir=str(tmp_path / "data"), context_url="http://127.0.0.1:9", freedom=freedom, agent=agent
    )


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "README.md").write_text("# Demo\nadd() subtracts.\n")
    (root / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    return root


def _calls(*calls: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    return {"tool_calls": [{"function": {"name": name, "arguments": arguments}} for name, arguments in calls]}


class Script:
    """The model of the calling agent and of the agent it delegates to, told apart by the system
    prompt; each side's turns in order."""

    def __init__(self, caller: list[Any], delegated: list[Any]) -> None:
        self.turns = {"caller": caller, "delegated": delegated}
        self.offered: dict[str, list[list[str]]] = {"caller": [], "delegated": []}

    def __call__(self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]]) -> Any:
        side = "delegated" if str(messages[0]["content"]).startswith("You are the coder") else "caller"
        self.offered[side].append([tool["function"]["name"] for tool in tools])
        return self.turns[side].pop(0)


def _task_result(run: Any) -> dict[str, Any]:
    message = next(m for m in run.messages if m["role"] == "tool")
    result: dict[str, Any] = json.loads(message["content"])
    return result


@pytest.mark.parametrize(
    ("agent", "has_task"),
    [("main", True), ("plan", True), ("explore", True), ("researcher", True), ("coder", False), ("reviewer", False)],
)
def test_the_profile_decides_whether_the_agent_can_delegate(
    tmp_path: Path, workspace: Path, agent: str, has_task: bool
) -> None:
    with OrchestratorService(settings(tmp_path, agent), workspace=workspace) as service:
        assert ("task" in service.tools.names()) is has_task
        assert ("task (to delegate a task to another agent)" in (service.system_prompt or "")) is has_task


def test_a_read_only_agent_s_delegate_gets_no_more_than_its_caller(tmp_path: Path, workspace: Path) -> None:
    script = Script(
        caller=[_calls(("task", {"agent": "coder", "prompt": "Fix add() in calc.py."})), "The coder looked."],
        delegated=[
            _calls(("read", {"path": "calc.py"}), ("write", {"path": "calc.py", "content": "hacked\n"})),
            "I could read calc.py but not write it.",
        ],
    )
    with OrchestratorService(
        settings(tmp_path, "explore", "high"), workspace=workspace, model=FunctionModel(script)
    ) as s:
        run = s.ask("Have add() fixed.")
    assert run.answer == "The coder looked."
    task = _task_result(run)
    assert task["status"] == "success", task
    assert task["data"]["agent"] == "coder" and task["data"]["answer"] == "I could read calc.py but not write it."
    assert [(c["name"], c["status"], c["error_type"]) for c in task["data"]["tool_calls"]] == [
        ("read", "success", None),
        ("write", "error", "permission_denied"),
    ]
    assert (workspace / "calc.py").read_text() == "def add(a, b):\n    return a - b\n"
    assert script.offered["delegated"][0] == ["read", "glob", "grep"]  # the coder's tools within explore's


def test_a_delegated_call_is_asked_about_and_recorded_with_the_run(tmp_path: Path, workspace: Path) -> None:
    asked: list[str] = []

    def approver(request: ApprovalRequest) -> Approve | Deny:
        asked.append(request.tool)
        return Approve()

    edit = {"path": "calc.py", "old_string": "a - b", "new_string": "a + b"}
    script = Script(
        caller=[_calls(("task", {"agent": "coder", "prompt": "Fix add() in calc.py."})), "Fixed by the coder."],
        delegated=[_calls(("edit", edit)), "Fixed add()."],
    )
    store = FileRunStore(tmp_path / "runs")
    with OrchestratorService(
        settings(tmp_path, "main"), workspace=workspace, model=FunctionModel(script), approver=approver, runs=store
    ) as service:
        run = service.ask("Fix add().")
    assert run.stop_reason == "final_answer" and asked == ["edit"]
    assert (workspace / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    (record,) = store.list()
    assert [(a.tool, a.decision, a.arguments) for a in record.approvals] == [("edit", "approved", edit)]


def test_with_nobody_to_ask_a_delegated_call_is_refused_inside_the_task(tmp_path: Path, workspace: Path) -> None:
    edit = {"path": "calc.py", "old_string": "a - b", "new_string": "a + b"}
    script = Script(
        caller=[_calls(("task", {"agent": "coder", "prompt": "Fix add() in calc.py."})), "The coder was stopped."],
        delegated=[_calls(("edit", edit))],
    )
    with OrchestratorService(settings(tmp_path, "main"), workspace=workspace, model=FunctionModel(script)) as service:
        run = service.ask("Fix add().")
    assert run.stop_reason == "final_answer"  # the caller's run does not pause for its delegate
    task = _task_result(run)
    assert task["error_type"] == "permission_denied"
    assert "need a person's approval, which cannot be asked for inside a delegated task" in task["error"]
    assert (workspace / "calc.py").read_text() == "def add(a, b):\n    return a - b\n"


def test_the_delegates_budget_is_the_sub_agent_setting(tmp_path: Path, workspace: Path) -> None:
    script = Script(
        caller=[_calls(("task", {"agent": "coder", "prompt": "Read calc.py twice."})), "Done."],
        delegated=[_calls(("read", {"path": "calc.py"})), _calls(("read", {"path": "README.md"}))],
    )
    one_turn = settings(tmp_path, "main", "high").model_copy(update={"max_subagent_iterations": 1})
    with OrchestratorService(one_turn, workspace=workspace, model=FunctionModel(script)) as service:
        task = _task_result(service.ask("Read it."))
    assert (task["data"]["stop_reason"], task["data"]["iterations"]) == ("max_iterations", 1)


def test_the_cli_flag_sets_the_delegates_budget_for_agent_runs(tmp_path: Path) -> None:
    import io

    from orchestrator.cli import main

    err = io.StringIO()
    env = {"TOOLDECK_DATA_DIR": str(tmp_path / "data"), "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path)}
    code = main(["--agent", "main", "--max-subagent-iterations", "11", "hi"], env=env, stdout=io.StringIO(), stderr=err)
    assert code == 2 and err.getvalue().startswith("error: configuration: --max-subagent-iterations=11: ")
