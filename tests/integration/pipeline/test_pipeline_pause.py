"""The pipeline under a gated freedom level with nobody to ask: a step whose call is held pauses
the whole pipeline (never carrying on with an empty answer), and ``resume`` continues that
step with the person's decisions, then the rest; the saved state is signed and resumes once.
Real workspace tools over a real directory; the models are scripted."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from orchestrator.agents import (
    DEFAULT_PROMPTS,
    AgentToolset,
    ImplementationPipeline,
    PipelineRun,
    SubAgent,
    pipeline_from_state,
    pipeline_state,
)
from orchestrator.graph import MemoryClaimStore, ResumeError
from tools.approvals import ApprovalPolicy, ApprovalsStore, Approve, Deny, StateSigner

from ._scripted import ScriptedModel, call

FIXED = "def add(a, b):\n    return a + b\n\n\ndef divide(a, b):\n    return a / b\n"
NEW_TEST = "from calc import add\n\n\ndef test_add_negative():\n    assert add(-2, -3) == -5\n"


class Setup:
    """Three scripted agents over one workspace, at freedom level medium, nobody to ask."""

    def __init__(self, workspace: Path, tmp_path: Path, *, reviewer: list[Any] | None = None) -> None:
        self.workspace = workspace
        self.coder = ScriptedModel([
            [call("read", path="calc.py")],
            [call("edit", path="calc.py", old_string="return a - b", new_string="return a + b")],
            "Fixed add(): it subtracted.",
        ])  # fmt: skip
        self.writer = ScriptedModel([[call("write", path="tests/test_negative.py", content=NEW_TEST)], "Added a test."])
        self.reviewer = ScriptedModel(reviewer or [[call("read", path="calc.py")], "VERDICT: APPROVE"])
        self.signer = StateSigner.ephemeral()
        self.claims = MemoryClaimStore()
        policy = ApprovalPolicy("medium", ApprovalsStore(tmp_path / "approvals.json"))
        self.toolset = AgentToolset(policy=policy)

    def pipeline(self) -> ImplementationPipeline:
        """A pipeline as a new process builds it (the same key and claim ledger)."""
        models = {"coder": self.coder, "test-writer": self.writer, "reviewer": self.reviewer}

        def agent(kind: str) -> SubAgent:
            return SubAgent(
                kind,
                models[kind],
                lambda root: self.toolset.view(kind, root),
                DEFAULT_PROMPTS[kind],
                6,
                state_signer=self.signer,
                claims=self.claims,
            )

        return ImplementationPipeline(agent("coder"), agent("test-writer"), agent("reviewer"), max_cycles=2)

    def saved(self, run: PipelineRun) -> PipelineRun:
        """The run after a trip through its signed, saved state."""
        return pipeline_from_state(json.loads(json.dumps(pipeline_state(run, self.signer))), self.signer)


@pytest.fixture
def setup(workspace: Path, tmp_path: Path) -> Iterator[Setup]:
    made = Setup(workspace, tmp_path)
    yield made
    made.toolset.close()


def _held(run: PipelineRun) -> str:
    assert run.status == "awaiting_approval" and run.paused is not None
    call_id: str = run.paused.pending_approvals[0]["call_id"]
    return call_id


def test_a_held_call_pauses_the_pipeline_and_nothing_after_it_runs(setup: Setup) -> None:
    run = setup.pipeline().run("Fix add().", setup.workspace)
    assert run.status == "awaiting_approval" and run.paused is not None
    assert (run.paused.agent, run.paused.cycle) == ("coder", 1)
    assert [p["tool"] for p in run.paused.pending_approvals] == ["edit"]
    assert run.steps == [] and run.verdicts == []  # the step did not finish: nothing was recorded as done
    assert setup.writer.seen == [] and setup.reviewer.seen == []  # and nothing after it ran
    assert "return a - b" in (setup.workspace / "calc.py").read_text()


def test_resume_continues_the_step_then_the_rest_until_approved(setup: Setup) -> None:
    first = setup.pipeline().run("Fix add().", setup.workspace)
    second = setup.pipeline().resume(setup.saved(first), {_held(first): Approve()})
    assert (setup.workspace / "calc.py").read_text() == FIXED
    assert second.paused is not None and second.paused.agent == "test-writer"  # its write is held in turn
    assert [s.agent for s in second.steps] == ["coder"]
    assert second.steps[0].changed_files == ["calc.py"]
    assert second.steps[0].answer == "Fixed add(): it subtracted."
    assert [c.name for c in second.steps[0].tool_calls] == ["read", "edit"]
    done = setup.pipeline().resume(setup.saved(second), {_held(second): Approve()})
    assert done.status == "approved", done
    assert [s.agent for s in done.steps] == ["coder", "test-writer", "reviewer"]
    assert done.steps[1].changed_files == ["tests/test_negative.py"]
    assert "Files changed: calc.py, tests/test_negative.py." in setup.reviewer.seen[0][1]["content"]
    assert done.run_id == first.run_id and done.validation is not None


def test_a_denied_call_is_answered_and_the_pipeline_goes_on(setup: Setup) -> None:
    first = setup.pipeline().run("Fix add().", setup.workspace)
    second = setup.pipeline().resume(setup.saved(first), {_held(first): Deny("not this file")})
    assert second.steps[0].tool_calls[-1].error_type == "permission_denied"
    assert "return a - b" in (setup.workspace / "calc.py").read_text()
    assert second.paused is not None and second.paused.agent == "test-writer"


def test_a_paused_step_resumes_once(setup: Setup) -> None:
    first = setup.pipeline().run("Fix add().", setup.workspace)
    setup.pipeline().resume(setup.saved(first), {_held(first): Approve()})
    with pytest.raises(ResumeError, match="were resumed before"):
        setup.pipeline().resume(setup.saved(first), {_held(first): Approve()})


@pytest.mark.parametrize(
    "edit",
    [
        lambda s: s["run"].update(task="Delete everything."),
        lambda s: s["run"].update(workspace="/"),
        lambda s: s["run"]["paused"].update(agent="reviewer"),
        lambda s: s["run"]["paused"]["state"]["pending_approvals"][0].update(freedom="high"),
        lambda s: s.pop("signature"),
    ],
    ids=["task", "workspace", "step", "inner state", "signature removed"],
)
def test_an_edited_pipeline_state_is_refused(setup: Setup, edit: Any) -> None:
    first = setup.pipeline().run("Fix add().", setup.workspace)
    state = json.loads(json.dumps(pipeline_state(first, setup.signer)))
    edit(state)
    with pytest.raises(ResumeError, match=r"edited after it was saved|is not signed"):
        pipeline_from_state(state, setup.signer)


def test_a_run_that_is_not_paused_is_not_resumed(setup: Setup) -> None:
    first = setup.pipeline().run("Fix add().", setup.workspace)
    finished = first.model_copy(update={"status": "rejected", "paused": None})
    with pytest.raises(ResumeError, match="not waiting for approval"):
        setup.pipeline().resume(finished, {})


def test_a_delegated_agent_whose_call_is_held_is_a_refusal_not_an_empty_answer(workspace: Path, tmp_path: Path) -> None:
    policy = ApprovalPolicy("medium", ApprovalsStore(tmp_path / "approvals.json"))
    coder = ScriptedModel([[call("edit", path="calc.py", old_string="a - b", new_string="a + b")], "done"])
    toolset = AgentToolset(policy=policy, make_agent=lambda kind, view: SubAgent(kind, coder, view, "x", 3))
    main = ScriptedModel([[call("task", agent="coder", prompt="fix add")], "The coder could not edit."])
    view = toolset.view("main", workspace)
    delegation = view.registry.tool_version_hash("task")
    assert delegation is not None
    policy.remember("task", delegation)  # a person approved delegating; the coder's edit is still held
    result = SubAgent("main", main, view, "x", 3).run("fix it")
    toolset.close()
    (answer,) = main.tool_messages()
    assert answer["error_type"] == "permission_denied"
    assert "The delegated coder agent stopped: its call(s) of edit need a person's approval" in answer["error"]
    assert result.answer == "The coder could not edit." and not result.paused
    assert "return a - b" in (workspace / "calc.py").read_text()
