"""``python -m orchestrator --pipeline "task" --workspace DIR``: the pipeline from a shell.

The CLI calls :func:`add_pipeline_arguments` on its parser and, when ``--pipeline`` is
given, :func:`run_pipeline_command`. Exit codes: see ``orchestrator._exit``.
"""

from __future__ import annotations

import argparse
import os
import sysconfig
from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from typing import TYPE_CHECKING, TextIO

from orchestrator._exit import EXIT_CONFIG, EXIT_MODEL, EXIT_OK, EXIT_REJECTED, EXIT_VALIDATION
from orchestrator.agents.models import ModelResolver, agent_models_from_env
from orchestrator.agents.pipeline import ImplementationPipeline, PipelineRun
from orchestrator.agents.prompts import DEFAULT_PROMPTS
from orchestrator.agents.subagent import DEFAULT_SUBAGENT_ITERATIONS, SubAgent, check_max_subagent_iterations
from orchestrator.agents.toolset import AgentToolset, agent_factory
from orchestrator.agents.trace import format_pipeline_trace
from orchestrator.agents.validation import WorkspaceValidator, host_python_path
from orchestrator.graph.state import new_run_id
from orchestrator.llm import ChatModel
from tools._terminal import dumps_for_terminal, print_safe
from tools.builtin.code_executor import LocalSandbox, SandboxClient, SandboxLimits

if TYPE_CHECKING:
    from orchestrator.graph.hooks import RunHooks
    from orchestrator.runlog import RunLog
    from tools.approvals import ApprovalPolicy, Approver

_ENV = "TOOLDECK_MAX_SUBAGENT_ITERATIONS"


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
    hooks: RunHooks | None = None,
) -> tuple[ImplementationPipeline, AgentToolset]:
    """The pipeline with the default prompts, each agent's tools made per workspace; every
    agent's calls go through ``policy`` (the freedom dial) and ``approver`` when given;
    ``hooks`` hear about each step, model turn and tool call."""
    make = agent_factory(models, DEFAULT_PROMPTS, max_iterations=max_iterations)
    tools = toolset or AgentToolset(
        sandbox=sandbox, python_path=python_path, make_agent=make, policy=policy, approver=approver
    )

    def agent(kind: str) -> SubAgent:
        view = lambda root: tools.view(kind, root)  # noqa: E731 - a view per workspace
        return SubAgent(kind, models.for_agent(kind), view, DEFAULT_PROMPTS[kind], max_iterations, hooks=hooks)

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
    hooks: RunHooks | None = None,
    run_log: RunLog | None = None,
) -> int:
    """Run the pipeline for ``args.pipeline`` in ``args.workspace``; print the trace or JSON.

    Args:
        args: Parsed arguments (:func:`add_pipeline_arguments` plus ``--json``).
        env: The environment (``TOOLDECK_MAX_SUBAGENT_ITERATIONS``, ``TOOLDECK_MODEL_<AGENT>``).
        model: The orchestrator's model (every agent's default).
        build_model: Makes a model from a ``TOOLDECK_MODEL_<AGENT>`` name (same endpoint).
        stdout: Where the trace or JSON goes.
        stderr: Where errors go.
        sandbox: Where bash and the checks run (default: a ``LocalSandbox`` with a 300 s,
            1 GiB budget per run).
        policy: The freedom dial for the agents' calls (None: no approval gate).
        approver: Asks a person about a call the dial does not allow (else it is refused).
        hooks: Hear about each step, model turn and tool call (the progress display).
        run_log: Records the run (``tooldeck runs show``).

    Returns:
        The exit code (module docstring).
    """
    task = (args.pipeline or "").strip()
    try:
        if not task:
            raise ValueError("--pipeline: the task is empty; pass what to implement")
        iterations = subagent_iterations(getattr(args, "max_subagent_iterations", None), env)
        workspace = os.path.realpath(getattr(args, "workspace", None) or ".")
        if not os.path.isdir(workspace):
            raise ValueError(f"--workspace {workspace!r} is not a directory")
        box = sandbox or LocalSandbox(limits=SandboxLimits(timeout_seconds=300, cpu_seconds=300, memory_mb=1024))
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
            max_cycles=args.max_cycles,
            python_path=python_path,
            policy=policy,
            approver=approver,
            hooks=hooks,
        )
    except ValueError as exc:
        print_safe(f"error: configuration: {exc}", stderr)
        return EXIT_CONFIG
    run_id, started = new_run_id(), datetime.now(timezone.utc)
    try:
        run = pipeline.run(task, workspace)
    finally:
        tools.close()
        if sandbox is None:
            box.close()
    if run_log is not None:
        run_log.pipeline(run_id, run, started)
    if getattr(args, "json", False):
        out = run.model_dump(mode="json")
        if run_log is not None:
            out["run_id"] = run_id
        print_safe(dumps_for_terminal(out), stdout)
    else:
        recorded = f"\nrun {run_id} recorded: tooldeck runs show {run_id}" if run_log is not None else ""
        print_safe(format_pipeline_trace(run) + recorded, stdout)
    return _exit_code(run)


def _exit_code(run: PipelineRun) -> int:
    return {"approved": EXIT_OK, "rejected": EXIT_REJECTED, "validation_failed": EXIT_VALIDATION}.get(
        run.status, EXIT_MODEL
    )
