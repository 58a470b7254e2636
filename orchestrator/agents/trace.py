"""``format_pipeline_trace``: a :class:`PipelineRun` as text (which agent did what, each
verdict, the validation report)."""

from __future__ import annotations

import json
from typing import Any

from orchestrator.agents.pipeline import PipelineRun


def _preview(value: Any, limit: int = 70) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def format_pipeline_trace(run: PipelineRun) -> str:
    """The trace, one block per step."""
    lines = [
        f"pipeline: {run.status} after {run.cycles} cycle(s) of at most {run.max_cycles}, "
        f"{run.duration_ms / 1000:.1f} s",
        f"task: {_preview(run.task, 100)}",
    ]
    for step in run.steps:
        lines.append(
            f"[cycle {step.cycle}] {step.agent}: {step.iterations} turn(s), {len(step.tool_calls)} tool call(s), "
            f"stop: {step.stop_reason}"
        )
        for call in step.tool_calls:
            status = call.status + (f" ({call.error_type})" if call.error_type else "")
            lines.append(f"    {call.name} {_preview(call.arguments)} -> {status}")
        if step.changed_files:
            lines.append(f"    changed: {', '.join(step.changed_files)}")
        if step.verdict is not None:
            verdict = step.verdict
            note = f" (stated {verdict.stated}, overridden by the rules)" if verdict.overridden else ""
            lines.append(f"    verdict: {verdict.decision}{note}")
            lines += [f"      - {finding}" for finding in verdict.findings]
        else:
            lines.append(f"    answer: {_preview(step.answer, 100)}")
    if run.error:
        lines.append(f"error: {run.error}")
    if run.validation is not None:
        lines.append(f"validation: {run.validation.summary}: {run.validation.message}")
        for check in run.validation.checks:
            detail = f" ({check.reason})" if check.reason else ""
            lines.append(f"  - {check.name}: {check.status}{detail} [{check.command}]")
    elif run.status == "rejected":
        lines.append("validation: not run (the review was not approved)")
    return "\n".join(lines)
