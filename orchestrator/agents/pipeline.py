"""``ImplementationPipeline``: coder -> test-writer -> reviewer, findings back to the coder,
then the workspace's checks in the sandbox; the whole run is a JSON-serialisable
:class:`PipelineRun`.

A step whose call waits for a person's approval (a gated freedom level and nobody to ask)
pauses the whole pipeline: status ``awaiting_approval``, the step's paused state in
``paused``. :meth:`ImplementationPipeline.resume` continues that step with the person's
decisions and then the rest of the pipeline; the pipeline never carries on with a step that
did not finish.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from orchestrator.agents.subagent import SubAgent, SubAgentResult, ToolCallSummary
from orchestrator.agents.validation import ValidationReport, WorkspaceValidator
from orchestrator.agents.verdict import Finding, Verdict, parse_verdict
from orchestrator.graph.hooks import RunHooks, StepFinished, StepStarted, safely
from orchestrator.graph.state import ResumeError, new_run_id
from orchestrator.llm import ChatModelError
from tools.approvals import Approve, Deny
from tools.builtin.workspace.search import walk_files

Status = Literal["approved", "rejected", "validation_failed", "error", "awaiting_approval"]
_MAX_FILES = 20_000
#: The steps of one cycle, in order.
STAGES = ("coder", "test-writer", "reviewer")


class PipelineStep(BaseModel):
    """One sub-agent run of the pipeline."""

    cycle: int
    agent: str
    answer: str
    stop_reason: str
    iterations: int
    tool_calls: list[ToolCallSummary] = Field(default_factory=list)
    changed_files: list[str] = Field(default_factory=list, description="Workspace files this step changed.")
    verdict: Verdict | None = None
    duration_ms: float = 0.0


class PipelinePause(BaseModel):
    """The step a paused pipeline waits in: its sub-agent's paused run."""

    cycle: int
    agent: str
    changed_files: list[str] = Field(default_factory=list, description="Files the step changed before it paused.")
    pending_approvals: list[dict[str, Any]] = Field(description="The calls waiting for a person.")
    state: dict[str, Any] = Field(description="The sub-agent's signed paused state.")


class PipelineRun(BaseModel):
    """A whole pipeline run (``model_dump(mode="json")`` is what ``--json`` prints)."""

    task: str
    workspace: str
    status: Status
    cycles: int
    max_cycles: int
    run_id: str = Field(default_factory=new_run_id)
    steps: list[PipelineStep] = Field(default_factory=list)
    verdicts: list[Verdict] = Field(default_factory=list)
    findings: list[Finding] = Field(default_factory=list, description="The last review's findings.")
    validation: ValidationReport | None = None
    error: str | None = None
    duration_ms: float = 0.0
    paused: PipelinePause | None = Field(default=None, description="Set while awaiting_approval.")


def _fingerprint(root: Path) -> dict[str, tuple[int, int]]:
    out: dict[str, tuple[int, int]] = {}
    for path in walk_files(root):
        if len(out) >= _MAX_FILES:
            break
        try:
            info = path.stat()
        except OSError:
            continue
        out[os.path.relpath(path, root).replace(os.sep, "/")] = (info.st_size, info.st_mtime_ns)
    return out


def _changed(before: dict[str, tuple[int, int]], after: dict[str, tuple[int, int]]) -> list[str]:
    return sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))


def _findings_text(findings: list[Finding]) -> str:
    return "\n".join(f"- {f}" for f in findings)


class ImplementationPipeline:
    """Runs coder, test-writer and reviewer until the reviewer approves (or ``max_cycles``).

    Args:
        coder: The ``coder`` sub-agent (its tools made per workspace, or fixed).
        test_writer: The ``test-writer`` sub-agent.
        reviewer: The ``reviewer`` sub-agent.
        max_cycles: Most coder -> test-writer -> reviewer rounds (1-10).
        validator: Runs the workspace's checks after an approval (None: not validated,
            the report says so).
        hooks: Told when each step starts and ends (and, through the sub-agents given the
            same hooks, about their model turns and tool calls).
        clock: Seconds, for durations.

    Raises:
        ValueError: ``max_cycles`` out of range, or an agent of the wrong type.
    """

    def __init__(
        self,
        coder: SubAgent,
        test_writer: SubAgent,
        reviewer: SubAgent,
        max_cycles: int = 3,
        *,
        validator: WorkspaceValidator | None = None,
        hooks: RunHooks | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        if isinstance(max_cycles, bool) or not isinstance(max_cycles, int) or not 1 <= max_cycles <= 10:
            raise ValueError(f"max_cycles must be a whole number from 1 to 10, got {max_cycles!r}")
        for agent, expected in ((coder, "coder"), (test_writer, "test-writer"), (reviewer, "reviewer")):
            if agent.agent_type != expected:
                raise ValueError(f"the {expected} step was given a {agent.agent_type!r} sub-agent")
        self.coder, self.test_writer, self.reviewer = coder, test_writer, reviewer
        self.max_cycles = max_cycles
        self.validator = validator
        self.hooks = hooks
        self._clock = clock

    def run(self, task: str, workspace: str | os.PathLike[str]) -> PipelineRun:
        """Run the pipeline on ``task`` in ``workspace``; never raises for a model failure
        (the run ends with status ``error``). A step whose calls wait for a person ends the
        run ``awaiting_approval`` (continue it with :meth:`resume`).

        Raises:
            ValueError: an empty task or a workspace that is not a directory.
        """
        if not task.strip():
            raise ValueError("the task is empty; describe what to implement")
        root = Path(os.path.realpath(os.fspath(workspace)))
        if not root.is_dir():
            raise ValueError(f"workspace {os.fspath(workspace)!r} is not a directory")
        run = PipelineRun(task=task, workspace=str(root), status="rejected", cycles=0, max_cycles=self.max_cycles)
        return self._go(run, lambda: self._cycles(run, root, 1, 0))

    def resume(self, run: PipelineRun, decisions: dict[str, Approve | Deny]) -> PipelineRun:
        """Continue a paused run: its waiting step with the person's ``decisions``, then the
        rest of the pipeline (which may pause again).

        Args:
            run: The run :meth:`run` (or an earlier resume) returned ``awaiting_approval``.
            decisions: Call id -> ``Approve()`` / ``Deny("why")`` for the held calls.

        Raises:
            ResumeError: the run is not paused, its step is not one of this pipeline's, or
                the sub-agent refuses the state or a decision; nothing ran.
        """
        pause = run.paused
        if run.status != "awaiting_approval" or pause is None:
            raise ResumeError(f"pipeline run {run.run_id} is {run.status}, not waiting for approval: nothing to resume")
        if pause.agent not in STAGES or not 1 <= pause.cycle <= min(run.max_cycles, self.max_cycles):
            raise ResumeError(f"pipeline run {run.run_id} is paused in a step this pipeline does not have")
        root = Path(run.workspace)
        if not root.is_dir():
            raise ResumeError(f"the workspace {run.workspace!r} of pipeline run {run.run_id} is no longer a directory")
        agent = self._agents()[pause.agent]
        resumed = run.model_copy(deep=True, update={"status": "rejected", "paused": None})
        stage = STAGES.index(pause.agent)

        def go() -> None:
            done = self._step(
                resumed,
                pause.cycle,
                agent,
                root,
                lambda: agent.resume(pause.state, decisions, workspace=root),
                resumed=pause,
            )
            self._cycles(resumed, root, pause.cycle, stage + 1, done)

        return self._go(resumed, go)

    def _go(self, run: PipelineRun, body: Callable[[], None]) -> PipelineRun:
        started = self._clock()
        try:
            body()
        except ChatModelError as exc:
            run.status, run.error = "error", f"{type(exc).__name__}: {exc}"
        except _Paused:
            run.status = "awaiting_approval"
        if run.status == "approved":
            run.validation = self._validate(Path(run.workspace))
            if run.validation.summary == "failed":
                run.status = "validation_failed"
        run.duration_ms = round(run.duration_ms + (self._clock() - started) * 1000, 3)
        return run

    def _agents(self) -> dict[str, SubAgent]:
        return {"coder": self.coder, "test-writer": self.test_writer, "reviewer": self.reviewer}

    def _step(
        self,
        run: PipelineRun,
        cycle: int,
        agent: SubAgent,
        root: Path,
        go: Callable[[], SubAgentResult],
        *,
        resumed: PipelinePause | None = None,
    ) -> SubAgentResult:
        """Run one step; a step that pauses records where and raises :class:`_Paused`."""
        before = _fingerprint(root)
        if self.hooks is not None:
            safely(self.hooks.on_step_start, StepStarted(cycle, self.max_cycles, agent.agent_type))
        result = go()
        changed = sorted({*(resumed.changed_files if resumed else []), *_changed(before, _fingerprint(root))})
        if result.paused and result.state is not None:
            run.paused = PipelinePause(
                cycle=cycle,
                agent=agent.agent_type,
                changed_files=changed,
                pending_approvals=result.pending_approvals,
                state=result.state,
            )
            if self.hooks is not None:
                safely(self.hooks.on_step_end, StepFinished(cycle, agent.agent_type, result.duration_ms, paused=True))
            raise _Paused
        run.steps.append(
            PipelineStep(
                cycle=cycle, agent=agent.agent_type, answer=result.answer, stop_reason=result.stop_reason,
                iterations=result.iterations, tool_calls=result.tool_calls,
                changed_files=changed, duration_ms=result.duration_ms,
            )
        )  # fmt: skip
        if self.hooks is not None:
            verdict = parse_verdict(result.answer).decision if agent.agent_type == "reviewer" else None
            safely(self.hooks.on_step_end, StepFinished(cycle, agent.agent_type, result.duration_ms, verdict))
        return result

    def _cycles(
        self, run: PipelineRun, root: Path, first_cycle: int, first_stage: int, last: SubAgentResult | None = None
    ) -> None:
        """The cycles from ``first_cycle``'s stage ``first_stage`` on (``last``: the result of
        the stage before it, when that was just resumed)."""
        agents = self._agents()
        for cycle in range(first_cycle, self.max_cycles + 1):
            run.cycles = cycle
            start = first_stage if cycle == first_cycle else 0
            for stage in STAGES[start:]:
                last = self._step(
                    run, cycle, agents[stage], root, _running(agents[stage], self._prompt(run, cycle, stage), root)
                )
            if last is not None and last.agent_type == "reviewer" and self._reviewed(run, last):
                return
            last = None
        run.status = "rejected"

    def _reviewed(self, run: PipelineRun, review: SubAgentResult) -> bool:
        """Record the review's verdict; True when it approves."""
        verdict = parse_verdict(review.answer)
        run.steps[-1].verdict = verdict
        run.verdicts.append(verdict)
        run.findings = list(verdict.findings)
        if verdict.approved:
            run.status = "approved"
        return verdict.approved

    def _prompt(self, run: PipelineRun, cycle: int, stage: str) -> str:
        """A step's prompt, from the task and the steps recorded so far."""
        task = run.task
        done = {s.agent: s for s in run.steps if s.cycle == cycle}
        changed = ", ".join(sorted({f for s in done.values() for f in s.changed_files}))
        if stage == "coder":
            prompt = f"Task:\n{task}\n\nImplement it in the workspace, then summarise what you changed."
            findings = run.verdicts[-1].findings if cycle > 1 and run.verdicts else []
            if findings:
                prompt += (
                    "\n\nThe reviewer rejected the previous attempt. Fix every BLOCKER and WARNING:\n"
                    + _findings_text(list(findings))
                )
            return prompt
        coded = done["coder"].answer
        if stage == "test-writer":
            return (
                f"Task:\n{task}\n\nThe coder changed: {changed or 'nothing'}.\nThe coder's summary:\n{coded}\n\n"
                "Write or update tests for this change (test files only) and run them."
            )
        return (
            f"Task:\n{task}\n\nFiles changed: {changed or 'none'}.\nCoder's summary:\n{coded}\n\n"
            f"Test writer's summary:\n{done['test-writer'].answer}\n\nReview the change. Answer with "
            "'VERDICT: APPROVE' or 'VERDICT: REJECT' and one line per finding: "
            "'- BLOCKER|WARNING|SUGGESTION file:line message'."
        )

    def _validate(self, root: Path) -> ValidationReport:
        if self.validator is None:
            return ValidationReport(summary="skipped", message="no validator configured; nothing was run", checks=[])
        return self.validator.validate(root)


def _running(agent: SubAgent, prompt: str, root: Path) -> Callable[[], SubAgentResult]:
    return lambda: agent.run(prompt, workspace=root)


class _Paused(Exception):
    """A step paused; the run records where (``PipelineRun.paused``)."""
