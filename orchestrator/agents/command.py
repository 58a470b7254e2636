"""``python -m orchestrator --pipeline "task" --workspace DIR``: the pipeline from a shell.

The CLI calls :func:`add_pipeline_arguments` on its parser and, when ``--pipeline`` is
given, :func:`run_pipeline_command`. Exit codes: see ``orchestrator._exit`` (5: a step's call
waits for a person's approval; the signed state is saved and ``--resume RUN_ID --approve-call
ID`` continues the run).
"""

from __future__ import annotations

import argparse
import logging
import os
import sysconfig
from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from orchestrator._exit import EXIT_AWAITING, EXIT_CONFIG, EXIT_MODEL, EXIT_OK, EXIT_REJECTED, EXIT_VALIDATION
from orchestrator.agents.models import ModelResolver, agent_models_from_env
from orchestrator.agents.paused import pipeline_from_state, pipeline_state
from orchestrator.agents.pipeline import ImplementationPipeline, PipelineRun
from orchestrator.agents.prompts import DEFAULT_PROMPTS
from orchestrator.agents.subagent import DEFAULT_SUBAGENT_ITERATIONS, SubAgent, check_max_subagent_iterations
from orchestrator.agents.toolset import AgentToolset, agent_factory
from orchestrator.agents.trace import format_pipeline_trace
from orchestrator.agents.validation import WorkspaceValidator, host_python_path
from orchestrator.graph import ClaimStore, PausedRun, ResumeError
from orchestrator.llm import ChatModel
from tools._terminal import dumps_for_terminal, print_safe
from tools.approvals import ApprovalError, StateSigner
from tools.builtin.code_executor import LocalSandbox, SandboxClient, SandboxLimits

if TYPE_CHECKING:
    from orchestrator.graph.hooks import RunHooks
    from orchestrator.runlog import RunLog
    from tools.approvals import ApprovalPolicy, Approve, Approver, Deny

_ENV = "TOOLDECK_MAX_SUBAGENT_ITERATIONS"
_log = logging.getLogger(__name__)


class PipelineState:
    """Where a paused pipeline's state is signed, claimed and saved.

    Args:
        signer: Signs the state (and each step's); the user's key file at the CLI.
        claims: Where resumes claim the calls they decide (a file at the CLI: "once" holds
            across processes).
        directory: Where a paused run's state is saved (``<data dir>/paused``); None: only
            printed.
    """

    def __init__(self, signer: StateSigner, *, claims: ClaimStore | None = None, directory: Path | None = None) -> None:
        self.signer = signer
        self.claims = claims
        self.directory = directory


def add_pipeline_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--pipeline``, ``--workspace``, ``--max-subagent-iterations``, ``--max-cycles``."""
    parser.add_argument("--pipeline", metavar="TASK", help="run coder -> test-writer -> reviewer on TASK")
    parser.add_argument(
        "--workspace", metavar="DIR", default=".", help="the workspace of --pipeline and --agent (default .)"
    )
    parser.add_argument("--max-subagent-iterations", type=int, metavar="N", help="model turns per sub-agent, 1-10 (3)")
    parser.add_argument("--max-cycles", type=int, metavar="N", default=3, help="review rounds, 1-10 (3)")


def subagent_iterations(flag: int | None, env: Mapping[str, str]) -> int:
    """The budget from the flag, else ``TOOLDECK_MAX_SUBAGENT_ITERATIONS``, else 3.

    Raises:
        ValueError: out of range; names the flag or variable.
    """
    if flag is not None:
        return check_max_subagent_iterations(flag, source="--max-subagent-iterations")
    raw = env.get(_ENV, "").strip()
    return check_max_subagent_iterations(raw, source=_ENV) if raw else DEFAULT_SUBAGENT_ITERATIONS


def build_pipeline(
    models: ModelResolver,
    *,
    sandbox: SandboxClient,
    max_iterations: int,
    max_cycles: int = 3,
    python_path: tuple[str, ...] = (),
    toolset: AgentToolset | None = None,
    policy: ApprovalPolicy | None = None,
    approver: Approver | None = None,
    saved: PipelineState | None = None,
    hooks: RunHooks | None = None,
) -> tuple[ImplementationPipeline, AgentToolset]:
    """The pipeline with the default prompts, each agent's tools made per workspace; every
    agent's calls go through ``policy`` (the freedom dial) and ``approver`` when given; a
    call nobody can be asked about pauses the pipeline (its state signed by ``saved.signer``);
    ``hooks`` hear about each step, model turn and tool call."""
    make = agent_factory(models, DEFAULT_PROMPTS, max_iterations=max_iterations)
    tools = toolset or AgentToolset(
        sandbox=sandbox, python_path=python_path, make_agent=make, policy=policy, approver=approver
    )

    signer = saved.signer if saved is not None else None
    claims = saved.claims if saved is not None else None

    def agent(kind: str) -> SubAgent:
        return SubAgent(
            kind,
            models.for_agent(kind),
            lambda root: tools.view(kind, root),
            DEFAULT_PROMPTS[kind],
            max_iterations,
            hooks=hooks,
            state_signer=signer,
            claims=claims,
        )

    validator = WorkspaceValidator(sandbox, python_path=python_path)
    pipeline = ImplementationPipeline(
        agent("coder"), agent("test-writer"), agent("reviewer"), max_cycles, validator=validator, hooks=hooks
    )
    return pipeline, tools


def run_pipeline_command(
    args: argparse.Namespace,
    *,
    env: Mapping[str, str],
    model: ChatModel,
    build_model: Callable[[str], ChatModel] | None = None,
    stdout: TextIO,
    stderr: TextIO,
    sandbox: SandboxClient | None = None,
    policy: ApprovalPolicy | None = None,
    approver: Approver | None = None,
    saved: PipelineState | None = None,
    resume: Mapping[str, Any] | None = None,
    decide: Callable[[PausedRun], dict[str, Approve | Deny]] | None = None,
    hooks: RunHooks | None = None,
    run_log: RunLog | None = None,
) -> int:
    """Run the pipeline for ``args.pipeline`` in ``args.workspace`` (or continue the paused
    one ``resume`` holds); print the trace or JSON.

    Args:
        args: Parsed arguments (:func:`add_pipeline_arguments` plus ``--json``).
        env: The environment (``TOOLDECK_MAX_SUBAGENT_ITERATIONS``, ``TOOLDECK_MODEL_<AGENT>``).
        model: The orchestrator's model (every agent's default).
        build_model: Makes a model from a ``TOOLDECK_MODEL_<AGENT>`` name (same endpoint).
        stdout: Where the trace or JSON goes.
        stderr: Where errors go.
        sandbox: Where bash and the checks run (default: a ``LocalSandbox`` with a 300 s,
            4 GiB budget per run: 256 MiB per process where no cgroup is delegated).
        policy: The freedom dial for the agents' calls (None: no approval gate).
        approver: Asks a person about a call the dial does not allow; None: the pipeline
            pauses on it (exit 5).
        saved: Signs, claims and saves a paused run's state (default: a key in memory, not
            saved: such a run cannot be resumed by another process).
        resume: A paused pipeline's saved state to continue (``--resume``).
        decide: The person's decisions about the paused step's held calls (``--approve-call``).
        hooks: Hear about each step, model turn and tool call (the progress display).
        run_log: Records the run (``tooldeck runs show``); a resume moves its record on.

    Returns:
        The exit code (module docstring).
    """
    saved = saved or PipelineState(StateSigner.ephemeral())
    paused: PipelineRun | None = None
    try:
        if resume is not None:
            paused = pipeline_from_state(resume, saved.signer)
        task, workspace = _task(args, paused)
        iterations = subagent_iterations(getattr(args, "max_subagent_iterations", None), env)
        box = sandbox or LocalSandbox(limits=SandboxLimits(timeout_seconds=300, cpu_seconds=300, memory_mb=4096))
    except ResumeError as exc:
        print_safe(f"error: resume: {exc}", stderr)
        return EXIT_CONFIG
    except ValueError as exc:
        print_safe(f"error: configuration: {exc}", stderr)
        return EXIT_CONFIG
    models = ModelResolver(model, names=agent_models_from_env(env), build=build_model)
    python_path = tuple(host_python_path(sysconfig.get_paths()))
    try:
        pipeline, tools = build_pipeline(
            models,
            sandbox=box,
            max_iterations=iterations,
            max_cycles=paused.max_cycles if paused is not None else args.max_cycles,
            python_path=python_path,
            policy=policy,
            approver=approver,
            saved=saved,
            hooks=hooks,
        )
    except ValueError as exc:
        print_safe(f"error: configuration: {exc}", stderr)
        return EXIT_CONFIG
    started = datetime.now(timezone.utc)
    decisions: dict[str, Approve | Deny] = {}
    try:
        if paused is not None:
            decisions = _decisions(paused, saved, decide)
            run = pipeline.resume(paused, decisions)
        else:
            run = pipeline.run(task, workspace)
    except ResumeError as exc:
        print_safe(f"error: resume: {exc}", stderr)
        return EXIT_CONFIG
    except ApprovalError as exc:  # the state key cannot be used: a paused step could not be saved safely
        print_safe(f"error: approvals: {exc}", stderr)
        return EXIT_CONFIG
    finally:
        tools.close()
        if sandbox is None:
            box.close()
    return _finish(run, args, saved, run_log, started=started, decisions=decisions, out=(stdout, stderr))


def _task(args: argparse.Namespace, paused: PipelineRun | None) -> tuple[str, str]:
    """The task and the workspace: the paused run's (signed), else the flags'."""
    if paused is not None:
        return paused.task, paused.workspace
    task = (args.pipeline or "").strip()
    if not task:
        raise ValueError("--pipeline: the task is empty; pass what to implement")
    workspace = os.path.realpath(getattr(args, "workspace", None) or ".")
    if not os.path.isdir(workspace):
        raise ValueError(f"--workspace {workspace!r} is not a directory")
    return task, workspace


def _decisions(
    run: PipelineRun, saved: PipelineState, decide: Callable[[PausedRun], dict[str, Approve | Deny]] | None
) -> dict[str, Approve | Deny]:
    """The person's decisions about the paused step's calls (checked against its state)."""
    step = run.paused
    if step is None or decide is None:
        return {}
    return decide(PausedRun.from_dict(step.state, signer=saved.signer))


def _finish(
    run: PipelineRun,
    args: argparse.Namespace,
    saved: PipelineState,
    run_log: RunLog | None,
    *,
    started: datetime,
    decisions: Mapping[str, Approve | Deny],
    out: tuple[TextIO, TextIO],
) -> int:
    """Save a paused run's signed state (remove it once the run finished), record the run,
    print it; returns the exit code."""
    from orchestrator._approval_cli import keep_signed_state

    stdout, stderr = out
    try:
        state = pipeline_state(run, saved.signer) if run.status == "awaiting_approval" else None
    except ApprovalError as exc:  # the state key cannot be used: the paused run could not be saved safely
        print_safe(f"error: approvals: {exc}", stderr)
        return EXIT_CONFIG
    state_file = keep_signed_state(run.run_id, state, saved.directory)
    if run_log is not None:
        run_log.pipeline(run, started, state_file=state_file, decisions=decisions)
    _report(run, args, (state, state_file), recorded=run_log is not None, stdout=stdout)
    return _exit_code(run)


def _report(
    run: PipelineRun,
    args: argparse.Namespace,
    saved: tuple[dict[str, Any] | None, Path | None],
    *,
    recorded: bool,
    stdout: TextIO,
) -> None:
    """Print the run (a paused run: the held calls and how to continue, or the state itself
    when it could not be saved)."""
    state, state_file = saved
    if getattr(args, "json", False):
        out = run.model_dump(mode="json")
        if state is not None:
            out["state"], out["state_file"] = state, None if state_file is None else str(state_file)
        print_safe(dumps_for_terminal(out), stdout)
        return
    text = format_pipeline_trace(run)
    if recorded:
        text += f"\nrun {run.run_id} recorded: tooldeck runs show {run.run_id}"
    print_safe(text, stdout)
    if run.paused is not None and state is not None:
        print_safe(_pending_text(run, state, state_file), stdout)


def _pending_text(run: PipelineRun, state: dict[str, Any], state_file: Path | None) -> str:
    from orchestrator._approval_cli import continue_lines, pending_lines
    from orchestrator.graph._content import wire_safe
    from tools.approvals import ApprovalRequest

    step = run.paused
    if step is None:  # pragma: no cover - _report passes paused runs only
        return ""
    requests = [ApprovalRequest.from_dict(entry) for entry in step.pending_approvals]
    lines = [
        f"Waiting for approval: the {step.agent} step (cycle {step.cycle}) holds {len(requests)} tool call(s) for "
        f"a person's decision (run {run.run_id})."
    ]
    lines += pending_lines(requests)
    lines += continue_lines(
        requests[0], state, state_file, run_id=run.run_id, flags="--base-url, --model and --data-dir"
    )
    return wire_safe("\n".join(lines))


def _exit_code(run: PipelineRun) -> int:
    codes = {
        "approved": EXIT_OK,
        "rejected": EXIT_REJECTED,
        "validation_failed": EXIT_VALIDATION,
        "awaiting_approval": EXIT_AWAITING,
    }
    return codes.get(run.status, EXIT_MODEL)
