"""``tooldeck runs list | show``: the recorded agent and pipeline runs (``tools.runs``)."""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from tools._terminal import safe_text
from tools.cli._context import CliContext, fail, print_json, print_table, say, state

if TYPE_CHECKING:
    from rich.text import Text

    from tools.runs import RunRecord, RunStore

runs_app = typer.Typer(help="The agent and pipeline runs recorded by python -m orchestrator.", no_args_is_help=True)
DataDirOption = Annotated[
    Path | None,
    typer.Option("--data-dir", help="The data directory (default: TOOLDECK_DATA_DIR, else ~/.local/share/tooldeck)."),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")]
_MIN_PREFIX = 6
_STYLES = {"answered": "green", "approved": "green", "paused": "yellow", "running": "cyan"}


class Status(str, Enum):
    """``--status``: the statuses of `tools.runs.RunStatus`."""

    RUNNING = "running"
    ANSWERED = "answered"
    BUDGET_EXHAUSTED = "budget_exhausted"
    PAUSED = "paused"
    FAILED = "failed"
    APPROVED = "approved"
    REJECTED = "rejected"
    VALIDATION_FAILED = "validation_failed"


def register(app: typer.Typer) -> None:
    """Add this module's commands to ``app``."""
    app.add_typer(runs_app, name="runs")


def _store(cli: CliContext, data_dir: Path | None) -> RunStore:
    from tools.runs import run_store_from_env

    return run_store_from_env(cli.env, data_dir)


@runs_app.command("list")
def list_runs(
    ctx: typer.Context,
    status: Annotated[Status | None, typer.Option("--status", "-s", help="Only runs with this status.")] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, max=10_000, help="Most runs shown.")] = 20,
    data_dir: DataDirOption = None,
    as_json: JsonOption = False,
) -> None:
    """The recorded runs, newest first.

    [b]Examples[/b]

      tooldeck runs list
      tooldeck runs list --status paused
      tooldeck runs list --json --limit 100 | jq '.[].id'
    """
    from tools.runs import RunStoreError

    store = _store(state(ctx), data_dir)
    try:
        records = store.list(status=status.value if status is not None else None, limit=limit)
    except RunStoreError as exc:
        fail(str(exc))
    if as_json:
        print_json([record.model_dump(mode="json") for record in records])
        return
    if not records:
        which = f" with status {status.value}" if status is not None else ""
        say(f"No runs{which} recorded yet. Runs of python -m orchestrator are recorded unless --no-record is given.")
        return
    rows: list[list[str | Text]] = [
        [
            record.id,
            safe_text(record.status, _STYLES.get(record.status, "red")),
            record.updated_at.strftime("%Y-%m-%d %H:%M"),
            record.agent if record.kind == "agent" else "pipeline",
            str(record.turns),
            str(len(record.tool_calls) + record.omitted_tool_calls),
            " ".join(record.question.split())[:60],
        ]
        for record in records
    ]
    print_table(["id", "status", "updated", "agent", "turns", "calls", "question"], rows)


@runs_app.command("show")
def show(
    ctx: typer.Context,
    run_id: Annotated[
        str | None, typer.Argument(help="The run's id, or its first characters (default: the latest run).")
    ] = None,
    data_dir: DataDirOption = None,
    as_json: JsonOption = False,
) -> None:
    """One recorded run: the question, each model turn's tool calls, approvals, the answer.

    [b]Examples[/b]

      tooldeck runs show
      tooldeck runs show run_3f2a9c
      tooldeck runs show run_3f2a9c1e0b7d4c5a8e6f1a2b3c4d5e6f --json
    """
    from tools.runs import RunStoreError

    store = _store(state(ctx), data_dir)
    try:
        record = _find(store, run_id)
    except RunStoreError as exc:
        fail(str(exc))
    if as_json:
        print_json(record.model_dump(mode="json"))
        return
    say("\n".join(describe(record)))


def _find(store: RunStore, run_id: str | None) -> RunRecord:
    if run_id is None:
        latest = store.list(limit=1)
        if not latest:
            fail('no runs are recorded yet; run python -m orchestrator "a question" first')
        return latest[0]
    if not run_id.replace("_", "").replace("-", "").isalnum():
        fail(f"{run_id[:80]!r} is not a run id; see the ids with: tooldeck runs list")
    exact = store.get(run_id) if len(run_id) <= 80 else None
    if exact is not None:
        return exact
    if len(run_id) < _MIN_PREFIX:
        fail(f"no run {run_id!r}; give at least {_MIN_PREFIX} characters of an id from: tooldeck runs list")
    matches = [record for record in store.list(limit=None) if record.id.startswith(run_id)]
    if not matches:
        fail(f"no run {run_id!r} is recorded; see the recorded runs with: tooldeck runs list")
    if len(matches) > 1:
        shown = ", ".join(record.id for record in matches[:5])
        fail(f"{run_id!r} matches {len(matches)} runs ({shown}); give more of the id")
    return matches[0]


def describe(record: RunRecord) -> list[str]:
    """A recorded run as lines for people."""
    what = f"pipeline run {record.id}" if record.kind == "pipeline" else f"run {record.id} ({record.agent} agent)"
    lines = [
        f"{what}: {record.status}",
        f"model: {record.model}",
        f"started {record.started_at:%Y-%m-%d %H:%M:%S} UTC, {record.duration_ms / 1000:.1f} s, "
        f"{record.turns} model turn(s), {len(record.tool_calls) + record.omitted_tool_calls} tool call(s)",
        f"{'task' if record.kind == 'pipeline' else 'question'}: {record.question}",
    ]
    if record.workspace:
        lines.append(f"workspace: {record.workspace}")
    if record.tool_calls:
        lines.append("tool calls:")
        lines += [f"  {n}. {_call_line(call)}" for n, call in enumerate(record.tool_calls, 1)]
        if record.omitted_tool_calls:
            lines.append(f"  ... and {record.omitted_tool_calls} more, not kept")
    lines += _steps(record)
    if record.approvals:
        lines.append("approvals:")
        for approval in record.approvals:
            how = {"terminal": " at the terminal", "resume": " on resume", "approver": " by the application"}
            decided = approval.decision + how.get(approval.decided_by or "", "")
            lines.append(f"  {approval.call_id}: {approval.tool} (risk {approval.risk or '?'}): {decided}")
            if approval.reason:
                lines.append(f"      why: {approval.reason}")
    if record.error:
        lines.append(f"error: {record.error}")
    if record.answer:
        lines += ["answer:", *("  " + line for line in record.answer.splitlines())]
    if record.paused:
        lines += _resume_hint(record)
    return lines


def _call_line(call: Any) -> str:
    arguments = json.dumps(call.arguments, ensure_ascii=False, default=str)
    if len(arguments) > 100:
        arguments = arguments[:97] + "..."
    status = call.status + (f" ({call.error_type})" if call.error_type else "")
    who = f"[{call.agent}] " if call.agent else ""
    return f"{who}{call.name} {arguments} -> {status}, {call.duration_ms:.1f} ms"


def _steps(record: RunRecord) -> list[str]:
    lines: list[str] = []
    for step in record.steps:
        lines.append(
            f"cycle {step.cycle}: {step.agent}, {step.turns} turn(s), {len(step.tool_calls)} tool call(s), "
            f"stop: {step.stop_reason}"
        )
        lines += [f"    {_call_line(call)}" for call in step.tool_calls]
        if step.changed_files:
            lines.append(f"    changed: {', '.join(step.changed_files)}")
        if step.verdict:
            lines.append(f"    verdict: {step.verdict}")
            lines += [f"      - {finding}" for finding in step.findings]
    if record.validation is not None:
        summary = record.validation.get("summary", "?")
        lines.append(f"validation: {summary}: {record.validation.get('message', '')}")
    return lines


def _resume_hint(record: RunRecord) -> list[str]:
    pending = [a for a in record.approvals if a.decision == "pending"]
    flags = "--base-url / --model" if record.kind == "pipeline" else "--registry / --agent"
    lines = [f"waiting for a person's approval; continue with (and the run's own {flags} flags):"]
    for approval in pending[:3]:
        lines.append(f"  python -m orchestrator --resume {record.id} --approve-call {approval.call_id}")
        lines.append(f"  python -m orchestrator --resume {record.id} --deny-call {approval.call_id}")
    return lines
