"""``ImplementationPipeline``: coder -> test-writer -> reviewer, findings back to the coder,
then the workspace's checks in the sandbox; the whole run is a JSON-serialisable
:class:`PipelineRun`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from orchestrator.agents.subagent import SubAgent, SubAgentResult, ToolCallSummary
from orchestrator.agents.validation import ValidationReport, WorkspaceValidator
from orchestrator.agents.verdict import Finding, Verdict, parse_verdict
from orchestrator.graph.hooks import RunHooks, StepFinished, StepStarted, safely
from orchestrator.llm import ChatModelError
from tools.builtin.workspace.search import walk_files

Status = Literal["approved", "rejected", "validation_failed", "error"]
_MAX_FILES = 20_000


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


class PipelineRun(BaseModel):
    """A whole pipeline run (``model_dump(mode="json")`` is what ``--json`` prints)."""

    task: str
    workspace: str
    status: Status
    cycles: int
    max_cycles: int
    steps: list[PipelineStep] = Field(default_factory=list)
    verdicts: list[Verdict] = Field(default_factory=list)
    findings: list[Finding] = Field(default_factory=list, description="The last review's findings.")
    validation: ValidationReport | None = None
    error: str | None = None
    duration_ms: float = 0.0


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
        (the run ends with status ``error``).

        Raises:
            ValueError: an empty task or a workspace that is not a directory.
        """
        if not task.strip():
            raise ValueError("the task is empty; describe what to implement")
        root = Path(os.path.realpath(os.fspath(workspace)))
        if not root.is_dir():
            raise ValueError(f"workspace {os.fspath(workspace)!r} is not a directory")
        started = self._clock()
        run = PipelineRun(task=task, workspace=str(root), status="rejected", cycles=0, max_cycles=self.max_cycles)
        try:
            self._cycles(run, task, root)
        except ChatModelError as exc:
            run.status, run.error = "error", f"{type(exc).__name__}: {exc}"
        if run.status == "approved":
            run.validation = self._validate(root)
            if run.validation.summary == "failed":
                run.status = "validation_failed"
        run.duration_ms = round((self._clock() - started) * 1000, 3)
        return run

    def _step(self, run: PipelineRun, cycle: int, agent: SubAgent, prompt: str, root: Path) -> SubAgentResult:
        before = _fingerprint(root)
        if self.hooks is not None:
            safely(self.hooks.on_step_start, StepStarted(cycle, self.max_cycles, agent.agent_type))
        result = agent.run(prompt, workspace=root)
        run.steps.append(
            PipelineStep(
                cycle=cycle, agent=agent.agent_type, answer=result.answer, stop_reason=result.stop_reason,
                iterations=result.iterations, tool_calls=result.tool_calls,
                changed_files=_changed(before, _fingerprint(root)), duration_ms=result.duration_ms,
            )
        )  # fmt: skip
        if self.hooks is not None:
            verdict = parse_verdict(result.answer).decision if agent.agent_type == "reviewer" else None
            safely(self.hooks.on_step_end, StepFinished(cycle, agent.agent_type, result.duration_ms, verdict))
        return result

    def _cycles(self, run: PipelineRun, task: str, root: Path) -> None:
        findings: list[Finding] = []
        for cycle in range(1, self.max_cycles + 1):
            run.cycles = cycle
            coder_prompt = f"Task:\n{task}\n\nImplement it in the workspace, then summarise what you changed."
            if findings:
                coder_prompt += (
                    "\n\nThe reviewer rejected the previous attempt. Fix every BLOCKER and WARNING:\n"
                    + _findings_text(findings)
                )
            coded = self._step(run, cycle, self.coder, coder_prompt, root)
            changed = sorted({f for s in run.steps if s.cycle == cycle for f in s.changed_files})
            tests = self._step(
                run, cycle, self.test_writer,
                f"Task:\n{task}\n\nThe coder changed: {', '.join(changed) or 'nothing'}.\nThe coder's summary:\n"
                f"{coded.answer}\n\nWrite or update tests for this change (test files only) and run them.",
                root,
            )  # fmt: skip
            changed = sorted({f for s in run.steps if s.cycle == cycle for f in s.changed_files})
            review = self._step(
                run, cycle, self.reviewer,
                f"Task:\n{task}\n\nFiles changed: {', '.join(changed) or 'none'}.\nCoder's summary:\n{coded.answer}\n\n"
                f"Test writer's summary:\n{tests.answer}\n\nReview the change. Answer with 'VERDICT: APPROVE' or "
                "'VERDICT: REJECT' and one line per finding: '- BLOCKER|WARNING|SUGGESTION file:line message'.",
                root,
            )  # fmt: skip
            verdict = parse_verdict(review.answer)
            run.steps[-1].verdict = verdict
            run.verdicts.append(verdict)
            run.findings = list(verdict.findings)
            if verdict.approved:
                run.status = "approved"
                return
            findings = list(verdict.findings)
        run.status = "rejected"

    def _validate(self, root: Path) -> ValidationReport:
        if self.validator is None:
            return ValidationReport(summary="skipped", message="no validator configured; nothing was run", checks=[])
        return self.validator.validate(root)
