"""The pipeline driven by scripted models over a real workspace, real sandbox, real pytest.

The models are the fakes (they answer from a list of turns); the pipeline, the tools, the
routing, the sandbox and pytest are real.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from orchestrator.agents import (
    DEFAULT_PROMPTS,
    AgentToolset,
    ImplementationPipeline,
    SubAgent,
    WorkspaceValidator,
    format_pipeline_trace,
)
from tools.builtin.code_executor import LocalSandbox

from ._scripted import ScriptedModel, call

pytestmark = pytest.mark.timeout(600)

FIXED_DIVIDE = "def divide(a, b):\n    if b == 0:\n        raise ValueError('b must not be zero')\n    return a / b\n"
DIVIDE_TEST = (
    "import pytest\n\nfrom calc import divide\n\n\ndef test_divide():\n    assert divide(6, 3) == 2\n\n\n"
    "def test_divide_by_zero():\n    with pytest.raises(ValueError):\n        divide(1, 0)\n"
)


def agents(
    sandbox: LocalSandbox, site_packages: tuple[str, ...], models: dict[str, ScriptedModel], budget: int = 6
) -> tuple[SubAgent, SubAgent, SubAgent, AgentToolset]:
    toolset = AgentToolset(sandbox=sandbox, python_path=site_packages)

    def make(kind: str) -> SubAgent:
        return SubAgent(kind, models[kind], lambda root: toolset.view(kind, root), DEFAULT_PROMPTS[kind], budget)

    return make("coder"), make("test-writer"), make("reviewer"), toolset


def test_coder_fixes_reviewer_rejects_once_coder_fixes_again_reviewer_approves_pytest_runs(
    workspace: Path, sandbox: LocalSandbox, site_packages: tuple[str, ...]
) -> None:
    coder = ScriptedModel([
        [call("read", path="calc.py")],
        [call("edit", path="calc.py", old_string="return a - b", new_string="return a + b")],
        "Fixed add(): it subtracted.",
        [call("edit", path="calc.py", old_string="def divide(a, b):\n    return a / b\n", new_string=FIXED_DIVIDE)],
        "divide() now raises ValueError for b == 0.",
    ])  # fmt: skip
    writer = ScriptedModel([
        [call("skill", name="test-generation")],
        [call("edit", path="calc.py", old_string="return a + b", new_string="return 5")],  # production: refused
        [call("write", path="tests/test_divide.py", content=DIVIDE_TEST)],
        [call("bash", command="python3 -m pytest -q -p no:cacheprovider tests/test_divide.py")],
        "Added tests/test_divide.py; test_divide_by_zero fails until divide() checks b.",
        "The tests cover the fix.",
    ])  # fmt: skip
    reviewer = ScriptedModel([
        [call("skill", name="code-review"), call("read", path="calc.py")],
        "VERDICT: REJECT\n- BLOCKER calc.py:6 divide() raises ZeroDivisionError for b == 0; raise ValueError.",
        [call("read", path="calc.py")],
        "**Verdict:** approve\n- SUGGESTION calc.py:1 add a docstring",
    ])  # fmt: skip
    models = {"coder": coder, "test-writer": writer, "reviewer": reviewer}
    coder_agent, writer_agent, reviewer_agent, toolset = agents(sandbox, site_packages, models)
    validator = WorkspaceValidator(sandbox, python_path=site_packages)
    pipeline = ImplementationPipeline(coder_agent, writer_agent, reviewer_agent, max_cycles=3, validator=validator)
    try:
        run = pipeline.run("Fix add() and make divide() safe for b == 0.", workspace)
    finally:
        toolset.close()

    assert run.status == "approved", format_pipeline_trace(run)
    assert run.cycles == 2
    assert [v.decision for v in run.verdicts] == ["REJECT", "APPROVE"]
    assert run.verdicts[0].findings[0].severity == "BLOCKER"
    assert run.verdicts[0].findings[0].file == "calc.py"
    assert run.verdicts[0].findings[0].line == 6
    assert [s.agent for s in run.steps] == ["coder", "test-writer", "reviewer"] * 2
    # The findings went back to the coder in cycle 2.
    second_coder_prompt = next(m["content"] for m in coder.seen[3] if m["role"] == "user")
    assert "BLOCKER calc.py:6" in second_coder_prompt
    # The test-writer's edit of production code was refused; its test file was written.
    writer_calls = [(c.name, c.status, c.error_type) for c in run.steps[1].tool_calls]
    assert ("edit", "error", "permission_denied") in writer_calls
    assert ("write", "success", None) in writer_calls
    assert run.steps[1].changed_files == ["tests/test_divide.py"]
    # Its bash run of the new tests really ran pytest in the sandbox (and saw the bug).
    bash = next(m for m in writer.tool_messages() if isinstance(m.get("data"), dict) and "exit_code" in m["data"])
    assert bash["data"]["exit_code"] == 1
    assert "1 failed, 1 passed" in bash["data"]["stdout"]
    # Validation ran pytest in the sandbox over the final workspace.
    assert run.validation is not None
    assert run.validation.summary == "passed"
    (check,) = run.validation.checks
    assert (check.name, check.status, check.exit_code) == ("pytest", "pass", 0)
    assert "3 passed" in check.output
    assert (workspace / "calc.py").read_text().endswith(FIXED_DIVIDE)
    json.dumps(run.model_dump(mode="json"))  # the whole run is JSON


def test_a_reviewer_that_always_rejects_ends_the_run_after_max_cycles(
    workspace: Path, sandbox: LocalSandbox, site_packages: tuple[str, ...]
) -> None:
    rejection = "VERDICT: REJECT\n- BLOCKER calc.py:2 still wrong"
    models = {
        "coder": ScriptedModel(["I changed nothing."] * 2),
        "test-writer": ScriptedModel(["No tests."] * 2),
        "reviewer": ScriptedModel([rejection] * 2),
    }
    coder, writer, reviewer, toolset = agents(sandbox, site_packages, models)
    validator = WorkspaceValidator(sandbox, python_path=site_packages)
    run = ImplementationPipeline(coder, writer, reviewer, max_cycles=2, validator=validator).run(
        "Fix add().", workspace
    )
    toolset.close()
    assert (run.status, run.cycles) == ("rejected", 2)
    assert [v.decision for v in run.verdicts] == ["REJECT", "REJECT"]
    assert run.findings[0].message == "still wrong"
    assert run.validation is None
    assert "validation: not run" in format_pipeline_trace(run)


def test_a_sub_agent_that_never_stops_is_cut_at_its_budget(
    workspace: Path, sandbox: LocalSandbox, site_packages: tuple[str, ...]
) -> None:
    endless = ScriptedModel([[call("read", path="calc.py")]], repeat_last=True)
    toolset = AgentToolset(sandbox=sandbox)
    agent = SubAgent("coder", endless, lambda root: toolset.view("coder", root), "You code.", 3)
    result = agent.run("Loop forever.", workspace=workspace)
    toolset.close()
    assert (result.stop_reason, result.iterations, len(endless.seen)) == ("max_iterations", 3, 3)
    assert "iteration budget" in result.answer


def _denied(model: ScriptedModel) -> list[dict[str, Any]]:
    return [m for m in model.tool_messages() if m.get("status") == "error"]


@pytest.mark.parametrize(
    ("agent", "tool", "arguments"),
    [
        ("reviewer", "edit", {"path": "calc.py", "old_string": "a - b", "new_string": "a + b"}),
        ("reviewer", "bash", {"command": "touch x"}),
        ("coder", "task", {"agent": "explore", "prompt": "look around"}),
        ("test-writer", "patch", {"diff": "--- a/calc.py\n+++ b/calc.py\n@@ -1 +1 @@\n-x\n+y\n"}),
    ],
)
def test_a_profile_forbids_what_it_denies(
    workspace: Path, sandbox: LocalSandbox, agent: str, tool: str, arguments: dict[str, Any]
) -> None:
    model = ScriptedModel([[call(tool, **arguments)], "done"])
    toolset = AgentToolset(sandbox=sandbox, make_agent=lambda kind, view: SubAgent(kind, model, view, "x", 1))
    SubAgent(agent, model, lambda root: toolset.view(agent, root), "x", 3).run("try", workspace=workspace)
    toolset.close()
    assert tool not in model.offered[0]
    (error,) = _denied(model)
    assert error["error_type"] == "permission_denied"
    assert f"may not use the tool '{tool}'" in error["error"]
    assert (workspace / "calc.py").read_text().startswith("def add(a, b):\n    return a - b")


def test_the_test_writer_can_change_tests_but_not_production_code(workspace: Path, sandbox: LocalSandbox) -> None:
    model = ScriptedModel([
        [call("write", path="calc.py", content="broken")],
        [call("edit", path="calc.py", old_string="a - b", new_string="a + b")],
        [call("bash", command="echo hacked > calc.py; echo new > tests/test_new.py")],
        [call("edit", path="tests/test_calc.py", old_string="== 5", new_string="== 5  # checked")],
        "done",
    ])  # fmt: skip
    toolset = AgentToolset(sandbox=sandbox)
    SubAgent("test-writer", model, lambda r: toolset.view("test-writer", r), "x", 6).run("t", workspace=workspace)
    toolset.close()
    answers = model.tool_messages()
    assert [a["status"] for a in answers] == ["error", "error", "success", "success"]
    assert answers[0]["error_type"] == "permission_denied"
    assert "test files" in answers[0]["error"]
    assert "read-only for this command" in answers[2]["data"]["note"]
    assert (workspace / "calc.py").read_text().startswith("def add")
    assert not (workspace / "tests" / "test_new.py").exists()
    assert "# checked" in (workspace / "tests" / "test_calc.py").read_text()
