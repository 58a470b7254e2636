"""The freedom dial for MCP clients: a call that needs a person's approval is never run on a
client's word alone.

Before a ``tools/call`` runs, the policy (the user's stored level, else ``medium``) is asked:

* a call it lets run is run as usual;
* a call that needs approval, from a client that declared form elicitation, is asked about
  with an elicitation to the client's user (the tool, its risk, why, the arguments and what
  the call would change): an ``elicitation/create`` request on a handshake-era connection, an
  ``InputRequiredResult`` on a 2026-07-28 one (the client answers by retrying the call with
  the user's response and the signed ``requestState``, which binds the answer to exactly the
  call, tool version and preview that were shown). An accepted "run it" runs exactly that
  call once (an :class:`~tools.approvals.ApprovedCall`); anything else (declined, cancelled,
  "no", no answer in time, an error, a call that changed between the rounds) is a refusal;
* from any other client it is an ``isError`` result saying that a person must approve it and
  how (``tooldeck approve NAME --version-hash HASH`` in their own terminal, or a higher level),
  with the details in ``_meta["tooldeck/approval"]``.

An elicited approval covers that one call: "always" is for ``tooldeck approve``, which a
person runs themselves.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any, Protocol

import anyio
import mcp_types

from tools.approvals import ApprovalError, ApprovalPolicy, ApprovalRequest, Approve, StateSigner
from tools.errors import InvalidArgumentsError
from tools.result import ToolResult

logger = logging.getLogger("tools.external.mcp.server")

#: Seconds a person has to answer an elicitation before the call is refused.
DEFAULT_ELICITATION_TIMEOUT = 600.0
META_KEY = "tooldeck/approval"
#: The key of the approval question in an ``InputRequiredResult``.
INPUT_KEY = "tooldeck_approval"
_STATE_KIND = "tooldeck.mcp_approval"
_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "approve": {
            "type": "boolean",
            "title": "Run this call",
            "description": "Yes runs exactly this call once, with the arguments shown; no refuses it.",
            "default": False,
        }
    },
    "required": ["approve"],
}


class GatedRegistry(Protocol):
    """What approvals need from a registry (a :class:`~tools.registry.LocalToolRegistry`)."""

    def check_approval(self, name: str, /, arguments: Any = None, *, policy: ApprovalPolicy | None = None) -> Any:
        """The policy's answer for a call, or None (no such tool)."""
        ...

    async def acall_tool_raw(
        self, name: str, /, arguments: Any, *, call_id: str | None = None, approved: Any = None
    ) -> ToolResult:
        """Run a call; ``approved`` runs one a person approved."""
        ...


class McpApprovals:
    """Applies ``policy`` to the calls of one MCP server.

    Args:
        registry: The served registry.
        policy: The freedom dial.
        elicitation_timeout: Seconds to wait for the client's user.
    """

    def __init__(self, registry: GatedRegistry, policy: ApprovalPolicy, *, elicitation_timeout: float) -> None:
        self.registry = registry
        self.policy = policy
        self.elicitation_timeout = elicitation_timeout
        self._signer = StateSigner.ephemeral()  # binds a 2026-07-28 answer to the question asked

    async def screen(
        self,
        ctx: Any,
        name: str,
        arguments: Mapping[str, Any],
        *,
        responses: Mapping[str, Any] | None = None,
        state: str | None = None,
    ) -> mcp_types.CallToolResult | mcp_types.InputRequiredResult | ToolResult | None:
        """None when the call may run as is; else the result to answer with: a refusal, the
        question for the client's user (2026-07-28), or the result of the approved call.

        Args:
            ctx: The request's context.
            name: The tool.
            arguments: The call's arguments.
            responses: ``input_responses`` of a retried call (2026-07-28).
            state: ``request_state`` of a retried call.
        """
        request = self._held(name, arguments)
        if not isinstance(request, ApprovalRequest):
            return request  # None: it runs as is; or the refusal
        answer = await self._decide(ctx, request, responses, state)
        if answer is not None:
            return answer
        call = request.approved(Approve())
        return await self.registry.acall_tool_raw(name, call.arguments, approved=call)

    def _held(self, name: str, arguments: Mapping[str, Any]) -> ApprovalRequest | mcp_types.CallToolResult | None:
        """The request of a call that needs approval; None when it may run; or a refusal."""
        try:
            check = self.registry.check_approval(name, dict(arguments), policy=self.policy)
        except ApprovalError as exc:
            logger.error("tool %s not run over MCP: approvals unavailable: %s", name, exc)
            return _refusal(
                f"The tool '{name}' could not be checked for approval (the approvals settings are unusable), so it "
                "was not run. A person must fix them; continue without this tool.",
                {"reason": "approvals_unavailable", "tool": name},
            )
        if check is None or not check.needs_approval:
            return None
        try:
            request: ApprovalRequest = check.request(dict(arguments))
        except InvalidArgumentsError as exc:
            return _refusal(exc.message, {"reason": "invalid_arguments", "tool": name})
        return request

    async def _decide(
        self, ctx: Any, request: ApprovalRequest, responses: Mapping[str, Any] | None, state: str | None
    ) -> mcp_types.CallToolResult | mcp_types.InputRequiredResult | None:
        """None when the client's user approved this call; else the refusal, or the question."""
        if responses or state is not None:
            return self._answered(request, responses or {}, state)
        if not _can_elicit(ctx):
            return _needs_approval(request)
        if getattr(ctx.session, "can_send_request", False):
            return await self._ask(ctx, request)
        return self._question(request)

    def _question(self, request: ApprovalRequest) -> mcp_types.InputRequiredResult:
        """The 2026-07-28 way to ask: the client asks its user and retries with the answer."""
        elicit = mcp_types.ElicitRequest(
            params=mcp_types.ElicitRequestFormParams(message=_question(request), requested_schema=_SCHEMA)
        )
        return mcp_types.InputRequiredResult(
            input_requests={INPUT_KEY: elicit}, request_state=json.dumps(self._signer.sign(_binding(request)))
        )

    def _answered(
        self, request: ApprovalRequest, responses: Mapping[str, Any], state: str | None
    ) -> mcp_types.CallToolResult | None:
        """None when the retried call carries its user's "yes" to exactly this call."""
        try:
            asked = self._signer.verify(json.loads(state or "null"), what="the approval's request state")
        except (ApprovalError, ValueError, TypeError, AttributeError):
            return _needs_approval(request, prefix="The approval answer did not come with the question it answers. ")
        if asked != _binding(request):
            return _refusal(
                f"The call of '{request.tool}' changed after the user was asked (other arguments, tool version or "
                "changes), so it was not run. Call it again to ask again.",
                _details(request, "approval_mismatch"),
            )
        return _verdict(request, responses.get(INPUT_KEY))

    async def _ask(self, ctx: Any, request: ApprovalRequest) -> mcp_types.CallToolResult | None:
        """None when the client's user approved; else the refusal."""
        try:
            with anyio.fail_after(self.elicitation_timeout):
                answer = await ctx.session.elicit_form(
                    _question(request), _SCHEMA, related_request_id=getattr(ctx, "request_id", None)
                )
        except TimeoutError:
            return _refusal(
                f"Nobody answered the approval request for '{request.tool}' within {self.elicitation_timeout:g} s, "
                "so it was not run. Do not retry it; tell the user it needs their approval.",
                _details(request, "no_answer"),
            )
        except Exception as exc:  # the client failed to ask: fail closed
            logger.warning("elicitation for %s failed: %s", request.tool, type(exc).__name__)
            return _needs_approval(request, prefix="Asking the user for approval failed. ")
        return _verdict(request, answer)


def _verdict(request: ApprovalRequest, answer: object) -> mcp_types.CallToolResult | None:
    """None for an accepted "run it"; the refusal for anything else."""
    if not isinstance(answer, mcp_types.ElicitResult):
        return _needs_approval(request, prefix="No answer to the approval question came back. ")
    content = answer.content if isinstance(answer.content, Mapping) else {}
    if answer.action == "accept" and content.get("approve") is True:
        return None
    said = {"accept": "said no", "decline": "declined", "cancel": "cancelled the request"}.get(
        str(answer.action), "did not approve"
    )
    return _refusal(
        f"The call of '{request.tool}' was not approved: the user {said}. It was not run; do not retry it. "
        "Continue without it, or ask the user what to do instead.",
        _details(request, "denied"),
    )


def _binding(request: ApprovalRequest) -> dict[str, Any]:
    """What an answer approves: exactly this call of this tool version, with this preview."""
    return {
        "kind": _STATE_KIND,
        "tool": request.tool,
        "arguments_hash": request.arguments_hash,
        "version_hash": request.version_hash,
        "preview_hash": request.preview_hash,
    }


def _can_elicit(ctx: Any) -> bool:
    """Whether the client declared form elicitation (``elicitation: {}`` means form)."""
    capabilities = getattr(getattr(ctx, "session", None), "client_capabilities", None)
    elicitation = getattr(capabilities, "elicitation", None)
    if elicitation is None:
        return False
    return elicitation.form is not None or elicitation.url is None


def _question(request: ApprovalRequest) -> str:
    arguments = json.dumps(request.arguments, indent=2, ensure_ascii=False, default=str)
    lines = [
        f"The tool '{request.tool}' needs your approval to run (risk: {request.risk}).",
        f"Why: {request.reason}.",
        f"Arguments:\n{arguments}",
    ]
    if request.preview is not None:
        lines.append(f"What it changes:\n{request.preview.rstrip()}")
    lines.append("Run exactly this call once?")
    return "\n\n".join(lines)


def approve_command(request: ApprovalRequest) -> str:
    """The command a person runs to approve the request's tool for its current version."""
    return f"tooldeck approve {request.tool} --version-hash {request.version_hash}"


def _needs_approval(request: ApprovalRequest, *, prefix: str = "") -> mcp_types.CallToolResult:
    command = approve_command(request)
    return _refusal(
        f"{prefix}The tool '{request.tool}' needs a person's approval before it can run: {request.reason}. It was "
        f"not run. Only a person can approve it, in their own terminal: `{command}` (or a higher level with "
        "`tooldeck configure freedom`); you must not run that command yourself. Tell the user it needs their "
        "approval, then continue without it or use another tool.",
        {**_details(request, "approval_required"), "approve_command": command},
    )


def _details(request: ApprovalRequest, reason: str) -> dict[str, Any]:
    return {
        "reason": reason,
        "tool": request.tool,
        "risk": request.risk,
        "freedom": request.freedom.value,
        "version_hash": request.version_hash,
        "arguments_hash": request.arguments_hash,
    }


def _refusal(message: str, details: dict[str, Any]) -> mcp_types.CallToolResult:
    return mcp_types.CallToolResult(
        content=[mcp_types.TextContent(text=message)], is_error=True, meta={META_KEY: details}
    )
