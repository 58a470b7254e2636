"""The saved state of a paused pipeline: the whole :class:`PipelineRun`, signed.

A pipeline pauses when one of its steps holds a call for a person's approval (see
:meth:`ImplementationPipeline.resume`). What ``python -m orchestrator --pipeline`` saves (and
``--resume`` reads) is ``{"kind": "tooldeck.paused_pipeline", "version": 1, "run": {...},
"signature": {...}}``: the run so far (task, workspace, steps, verdicts) and, in
``run.paused``, the waiting step's own signed state. The signature (the user's state key,
:class:`tools.approvals.StateSigner`) is checked before anything in it is believed, so an
edited state (another task, workspace, step, or held call) runs nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from orchestrator.agents.pipeline import PipelineRun
from orchestrator.graph.state import ResumeError, verified_state
from tools.approvals import StateSigner

__all__ = [
    "PIPELINE_STATE_KIND",
    "PIPELINE_STATE_VERSION",
    "is_pipeline_state",
    "pipeline_from_state",
    "pipeline_state",
]

PIPELINE_STATE_KIND = "tooldeck.paused_pipeline"
PIPELINE_STATE_VERSION = 1


def pipeline_state(run: PipelineRun, signer: StateSigner) -> dict[str, Any]:
    """The signed state of a paused ``run`` (what ``--resume`` continues).

    Raises:
        StateKeyError: the signer's key file is unusable.
    """
    document = {"kind": PIPELINE_STATE_KIND, "version": PIPELINE_STATE_VERSION, "run": run.model_dump(mode="json")}
    return signer.sign(document)


def is_pipeline_state(data: object) -> bool:
    """Whether ``data`` (a state, or a ``--json`` output holding one) claims to be a pipeline's."""
    if isinstance(data, Mapping) and "state" in data and "kind" not in data:
        data = data["state"]
    return isinstance(data, Mapping) and data.get("kind") == PIPELINE_STATE_KIND


def pipeline_from_state(data: object, signer: StateSigner) -> PipelineRun:
    """The paused run in ``data``, once its signature is verified.

    Raises:
        ResumeError: not a pipeline's state, unsigned, signed with another key, edited, or
            not a paused run.
    """
    document = verified_state(
        data, kind=PIPELINE_STATE_KIND, version=PIPELINE_STATE_VERSION, signer=signer, what="paused pipeline"
    )
    try:
        run = PipelineRun.model_validate(document.get("run"))
    except ValidationError as exc:
        raise ResumeError(
            f"the paused pipeline's run is not valid ({exc.error_count()} problem(s)); nothing was run"
        ) from None
    if run.status != "awaiting_approval" or run.paused is None:
        raise ResumeError(f"pipeline run {run.run_id} is {run.status}, not waiting for approval: nothing to resume")
    return run
