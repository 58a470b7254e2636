"""What the orchestrator serves MCP servers: sampling on its model, elicitation through its
approver, and its workspace as roots (see :class:`tools.external.mcp.MCPClientHandlers`).

* **Sampling** is a model call someone pays for, asked by a remote party: it is gated like a
  ``moderate`` tool call. At a freedom level that lets moderate calls run (``high``) it runs;
  otherwise the approver is asked (the terminal, or the console), and with nobody to ask the
  request is declined. Without an approval policy the level is taken as ``medium``: a
  server's request is a trust boundary, so unknown means "ask".
* **Elicitation** goes to the same approver as an approval request whose arguments are the
  fields asked for: approving (after editing them) answers, denying declines, no answer
  (a run that would pause: a tool call in flight cannot wait for a resume) cancels.
* **Roots** are the workspace directories given, as ``file://`` URIs.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tools.approvals import ApprovalRequest, Approve, FreedomLevel, arguments_hash
from tools.external.mcp.features import (
    ElicitationRequest,
    ElicitationResult,
    MCPClientHandlers,
    MCPRequestDeclined,
    SamplingRequest,
    SamplingResult,
)

if TYPE_CHECKING:
    from orchestrator.graph._approvals import GraphApprover
    from orchestrator.llm import ChatModel
    from tools.approvals import ApprovalPolicy

__all__ = ["mcp_client_handlers"]

_log = logging.getLogger(__name__)
#: The approval requests' tool names (not registered tools: never callable by a model).
SAMPLING = "mcp_sampling"
ELICITATION = "mcp_elicitation"


def mcp_client_handlers(
    model: Callable[[], ChatModel],
    *,
    model_name: Callable[[], str],
    policy: ApprovalPolicy | None,
    approver: GraphApprover | None,
    roots: Sequence[Path] = (),
) -> MCPClientHandlers:
    """The handlers of the orchestrator's MCP client.

    Args:
        model: Returns the model sampling runs on (looked up per request, so the handlers
            can be built before the model).
        model_name: Returns the name reported to the server as the sampling model.
        policy: The approval policy (its level gates sampling); None: ``medium``.
        approver: Asked about sampling and elicitation; None: nobody can be asked.
        roots: The workspace directories; none: the roots capability is not declared.
    """
    return MCPClientHandlers(
        sampling=_Sampler(model, model_name, policy, approver),
        elicitation=_Elicitor(policy, approver),
        roots=list(roots) or None,
    )


def _level(policy: ApprovalPolicy | None) -> FreedomLevel:
    return policy.level if policy is not None else FreedomLevel.MEDIUM


def _request(tool: str, arguments: dict[str, Any], level: FreedomLevel, reason: str) -> ApprovalRequest:
    return ApprovalRequest(
        tool=tool,
        arguments=arguments,
        arguments_hash=arguments_hash(arguments),
        version_hash=arguments_hash({"tool": tool}),
        risk="moderate",
        freedom=level,
        reason=reason,
    )


class _Sampler:
    def __init__(
        self,
        model: Callable[[], ChatModel],
        model_name: Callable[[], str],
        policy: ApprovalPolicy | None,
        approver: GraphApprover | None,
    ) -> None:
        self._model = model
        self._model_name = model_name
        self._policy = policy
        self._approver = approver

    def __call__(self, request: SamplingRequest) -> SamplingResult:
        level = _level(self._policy)
        if level.requires_approval("moderate"):
            self._approve(request, level)
        messages: list[Mapping[str, Any]] = []
        if request.system_prompt:
            messages.append({"role": "system", "content": request.system_prompt})
        messages += [{"role": m["role"], "content": m["content"]} for m in request.messages]
        response = self._model().chat(messages)
        text = (response.content or "")[: request.max_tokens * 4]  # the server's bound, in characters
        return SamplingResult(text=text, model=response.model or self._model_name())

    def _approve(self, request: SamplingRequest, level: FreedomLevel) -> None:
        if self._approver is None:
            raise MCPRequestDeclined(
                f"sampling needs a person's approval at freedom level {level.value} and nobody can be asked"
            )
        shown = {
            "server": request.server,
            "system_prompt": request.system_prompt,
            "messages": [dict(m) for m in request.messages],
            "max_tokens": request.max_tokens,
        }
        reason = (
            f"The MCP server {request.server!r} asks to run your model on its prompt (a model call "
            "you pay for). Approve to send the reply back to the server."
        )
        decision = self._approver(_request(SAMPLING, shown, level, reason))
        if not isinstance(decision, Approve):
            why = getattr(decision, "message", "") or "not approved"
            raise MCPRequestDeclined(why)


class _Elicitor:
    def __init__(self, policy: ApprovalPolicy | None, approver: GraphApprover | None) -> None:
        self._policy = policy
        self._approver = approver

    def __call__(self, request: ElicitationRequest) -> ElicitationResult:
        if self._approver is None:
            _log.info("MCP server %s asked the user something; nobody can answer now", request.server)
            return ElicitationResult("cancel")
        if request.mode == "url":
            arguments: dict[str, Any] = {"url": request.url}
            reason = f"The MCP server {request.server!r} asks you to open a page: {request.message}"
        else:
            arguments = _blank_answer(request.requested_schema)
            fields = json.dumps(dict(request.requested_schema.get("properties") or {}), ensure_ascii=False)[:1_000]
            reason = (
                f"The MCP server {request.server!r} asks: {request.message} Edit the arguments to answer "
                f"(fields: {fields}); approve to send them, deny to decline."
            )
        decision = self._approver(_request(ELICITATION, arguments, _level(self._policy), reason))
        if decision is None:
            return ElicitationResult("cancel")
        if not isinstance(decision, Approve):
            return ElicitationResult("decline")
        if request.mode == "url":
            return ElicitationResult("accept")
        answer = dict(decision.arguments) if decision.arguments is not None else arguments
        return ElicitationResult("accept", {k: v for k, v in answer.items() if v is not None})


def _blank_answer(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The fields asked for, each at its default (None when it has none)."""
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return {}
    return {
        str(name): (spec.get("default") if isinstance(spec, Mapping) else None) for name, spec in properties.items()
    }
