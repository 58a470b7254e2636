"""Sub-agents, delegation and the implementation pipeline (DESIGN section 13).

- :class:`SubAgent`: an agent type, its tool view, its model, a system prompt and an
  iteration budget (``max_subagent_iterations``, 1-10, default 3).
- :class:`AgentToolset` / :class:`SubAgentDelegator`: each agent's workspace tools, and the
  ``task`` tool's backend (delegation never widens rights; nesting is bounded).
- :class:`ImplementationPipeline`: coder -> test-writer -> reviewer, findings back to the
  coder at most ``max_cycles`` times, then the workspace's checks in the sandbox; the
  result is a JSON-serialisable :class:`PipelineRun`. A step whose call waits for a person
  pauses it (``awaiting_approval``; :meth:`ImplementationPipeline.resume` continues), and
  its signed state (:func:`pipeline_state`) is what ``--resume`` takes.
- :func:`parse_verdict` -> :class:`Verdict` with :class:`Finding` s.

Names are imported on first use (PEP 562): a program that imports one module of this
package (the service imports ``orchestrator.agents.prompts``) does not import the pipeline,
its sandbox and every builtin tool with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from shared.lazy import lazy_exports

if TYPE_CHECKING:
    from orchestrator.agents.command import (
        PipelineState,
        add_pipeline_arguments,
        build_pipeline,
        run_pipeline_command,
        subagent_iterations,
    )
    from orchestrator.agents.models import ModelResolver, agent_models_from_env, env_name, load_agent_models
    from orchestrator.agents.paused import is_pipeline_state, pipeline_from_state, pipeline_state
    from orchestrator.agents.pipeline import ImplementationPipeline, PipelinePause, PipelineRun, PipelineStep
    from orchestrator.agents.prompts import DEFAULT_PROMPTS
    from orchestrator.agents.subagent import (
        DEFAULT_SUBAGENT_ITERATIONS,
        MAX_SUBAGENT_ITERATIONS,
        MIN_SUBAGENT_ITERATIONS,
        SubAgent,
        SubAgentResult,
        ToolCallSummary,
        check_max_subagent_iterations,
    )
    from orchestrator.agents.toolset import DEFAULT_WRITE_SCOPES, AgentToolset, SubAgentDelegator, agent_factory
    from orchestrator.agents.trace import format_pipeline_trace
    from orchestrator.agents.validation import (
        CheckResult,
        ValidationReport,
        WorkspaceValidator,
        detect_checks,
        host_python_path,
    )
    from orchestrator.agents.verdict import Finding, Verdict, parse_verdict

#: Public name -> the module that defines it.
_HOMES = {
    "PipelineState": "orchestrator.agents.command",
    "add_pipeline_arguments": "orchestrator.agents.command",
    "build_pipeline": "orchestrator.agents.command",
    "run_pipeline_command": "orchestrator.agents.command",
    "subagent_iterations": "orchestrator.agents.command",
    "ModelResolver": "orchestrator.agents.models",
    "agent_models_from_env": "orchestrator.agents.models",
    "env_name": "orchestrator.agents.models",
    "load_agent_models": "orchestrator.agents.models",
    "is_pipeline_state": "orchestrator.agents.paused",
    "pipeline_from_state": "orchestrator.agents.paused",
    "pipeline_state": "orchestrator.agents.paused",
    "ImplementationPipeline": "orchestrator.agents.pipeline",
    "PipelinePause": "orchestrator.agents.pipeline",
    "PipelineRun": "orchestrator.agents.pipeline",
    "PipelineStep": "orchestrator.agents.pipeline",
    "DEFAULT_PROMPTS": "orchestrator.agents.prompts",
    "DEFAULT_SUBAGENT_ITERATIONS": "orchestrator.agents.subagent",
    "MAX_SUBAGENT_ITERATIONS": "orchestrator.agents.subagent",
    "MIN_SUBAGENT_ITERATIONS": "orchestrator.agents.subagent",
    "SubAgent": "orchestrator.agents.subagent",
    "SubAgentResult": "orchestrator.agents.subagent",
    "ToolCallSummary": "orchestrator.agents.subagent",
    "check_max_subagent_iterations": "orchestrator.agents.subagent",
    "DEFAULT_WRITE_SCOPES": "orchestrator.agents.toolset",
    "AgentToolset": "orchestrator.agents.toolset",
    "SubAgentDelegator": "orchestrator.agents.toolset",
    "agent_factory": "orchestrator.agents.toolset",
    "format_pipeline_trace": "orchestrator.agents.trace",
    "CheckResult": "orchestrator.agents.validation",
    "ValidationReport": "orchestrator.agents.validation",
    "WorkspaceValidator": "orchestrator.agents.validation",
    "detect_checks": "orchestrator.agents.validation",
    "host_python_path": "orchestrator.agents.validation",
    "Finding": "orchestrator.agents.verdict",
    "Verdict": "orchestrator.agents.verdict",
    "parse_verdict": "orchestrator.agents.verdict",
}

__all__ = [
    "DEFAULT_PROMPTS",
    "DEFAULT_SUBAGENT_ITERATIONS",
    "DEFAULT_WRITE_SCOPES",
    "MAX_SUBAGENT_ITERATIONS",
    "MIN_SUBAGENT_ITERATIONS",
    "AgentToolset",
    "CheckResult",
    "Finding",
    "ImplementationPipeline",
    "ModelResolver",
    "PipelinePause",
    "PipelineRun",
    "PipelineState",
    "PipelineStep",
    "SubAgent",
    "SubAgentDelegator",
    "SubAgentResult",
    "ToolCallSummary",
    "ValidationReport",
    "Verdict",
    "WorkspaceValidator",
    "add_pipeline_arguments",
    "agent_factory",
    "agent_models_from_env",
    "build_pipeline",
    "check_max_subagent_iterations",
    "detect_checks",
    "env_name",
    "format_pipeline_trace",
    "host_python_path",
    "is_pipeline_state",
    "load_agent_models",
    "parse_verdict",
    "pipeline_from_state",
    "pipeline_state",
    "run_pipeline_command",
    "subagent_iterations",
]


__getattr__, __dir__ = lazy_exports(__name__, _HOMES, __all__)
