"""The SDK callbacks that serve a server's sampling, elicitation and roots requests.

They translate between the SDK's types and tooldeck's (:mod:`tools.external.mcp.features`),
run the application's handler in a worker thread (a terminal prompt or a model call must not
block the event loop that carries the session), bound what the server sent, and turn a
handler's refusal or failure into the answer the spec prescribes.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, TypeVar

import anyio.to_thread
import mcp_types
from mcp.client.session import ClientRequestContext
from pydantic import FileUrl

from tools.external.mcp._connect import clip
from tools.external.mcp.features import (
    ElicitationHandler,
    ElicitationRequest,
    ElicitationResult,
    MCPClientHandlers,
    MCPRequestDeclined,
    SamplingHandler,
    SamplingRequest,
    SamplingResult,
)

logger = logging.getLogger(__name__)

#: The spec's error code for "the user rejected the request".
USER_REJECTED = -1
#: Longest text taken from one sampling message, and from all of them together.
MAX_MESSAGE_CHARS = 20_000
MAX_SAMPLING_CHARS = 100_000

T = TypeVar("T")
R = TypeVar("R")


def sdk_callbacks(handlers: MCPClientHandlers | None, *, label: str) -> dict[str, Any]:
    """Keyword arguments for ``mcp.Client``: one callback per handler given (none: no capability)."""
    if handlers is None:
        return {}
    callbacks: dict[str, Any] = {}
    if handlers.sampling is not None:
        callbacks["sampling_callback"] = _sampling(handlers.sampling, label)
    if handlers.elicitation is not None:
        callbacks["elicitation_callback"] = _elicitation(handlers.elicitation, label)
    if handlers.roots is not None:
        callbacks["list_roots_callback"] = _roots(handlers, label)
    return callbacks


async def _in_thread(handler: Any, request: Any) -> Any:
    # abandon_on_cancel: a cancelled tool call returns at once even while a person is still
    # looking at the prompt; the thread's late answer is dropped.
    return await anyio.to_thread.run_sync(handler, request, abandon_on_cancel=True)


def _sampling(handler: SamplingHandler, label: str) -> Any:
    async def on_sampling(
        context: ClientRequestContext, params: mcp_types.CreateMessageRequestParams
    ) -> mcp_types.CreateMessageResult | mcp_types.ErrorData:
        del context
        if params.tools or params.tool_choice is not None:
            return mcp_types.ErrorData(
                code=mcp_types.INVALID_PARAMS, message="This client does not offer tools during sampling."
            )
        request = SamplingRequest(
            server=label,
            messages=_messages(params.messages),
            system_prompt=clip(params.system_prompt, MAX_MESSAGE_CHARS) if params.system_prompt else None,
            max_tokens=max(1, params.max_tokens),
            temperature=params.temperature,
            stop_sequences=tuple(params.stop_sequences or ()),
            model_hints=_hints(params.model_preferences),
        )
        try:
            result: SamplingResult = await _in_thread(handler, request)
        except MCPRequestDeclined as exc:
            logger.info("MCP server %s: sampling request declined (%s)", label, exc.reason)
            return mcp_types.ErrorData(code=USER_REJECTED, message=f"User rejected sampling request: {exc.reason}")
        except Exception:
            logger.exception("MCP server %s: the sampling handler failed", label)
            return mcp_types.ErrorData(code=mcp_types.INTERNAL_ERROR, message="The client could not sample a reply.")
        return mcp_types.CreateMessageResult(
            role="assistant",
            content=mcp_types.TextContent(type="text", text=result.text),
            model=result.model,
            stop_reason=result.stop_reason,
        )

    return on_sampling


def _messages(messages: list[mcp_types.SamplingMessage]) -> tuple[Mapping[str, Any], ...]:
    out: list[Mapping[str, Any]] = []
    budget = MAX_SAMPLING_CHARS
    for message in messages:
        blocks = message.content if isinstance(message.content, list) else [message.content]
        text = clip("\n".join(_block_text(block) for block in blocks), min(MAX_MESSAGE_CHARS, max(budget, 0)))
        budget -= len(text)
        out.append({"role": message.role, "content": text})
    return tuple(out)


def _block_text(block: Any) -> str:
    if isinstance(block, mcp_types.TextContent):
        return block.text
    kind = getattr(block, "type", "content")
    mime = getattr(block, "mime_type", None)
    return f"[{kind}{': ' + mime if mime else ''} omitted]"


def _hints(preferences: mcp_types.ModelPreferences | None) -> tuple[str, ...]:
    if preferences is None or not preferences.hints:
        return ()
    return tuple(clip(hint.name, 100) for hint in preferences.hints if hint.name)


def _elicitation(handler: ElicitationHandler, label: str) -> Any:
    async def on_elicitation(
        context: ClientRequestContext, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult | mcp_types.ErrorData:
        del context
        if isinstance(params, mcp_types.ElicitRequestURLParams):
            request = ElicitationRequest(server=label, message=clip(params.message, 4_000), mode="url", url=params.url)
        else:
            schema = dict(params.requested_schema)
            request = ElicitationRequest(server=label, message=clip(params.message, 4_000), requested_schema=schema)
        try:
            result: ElicitationResult = await _in_thread(handler, request)
        except MCPRequestDeclined as exc:
            logger.info("MCP server %s: elicitation declined (%s)", label, exc.reason)
            return mcp_types.ElicitResult(action="decline")
        except Exception:
            logger.exception("MCP server %s: the elicitation handler failed", label)
            return mcp_types.ElicitResult(action="cancel")
        return _answer(result, request, label)

    return on_elicitation


def _answer(result: ElicitationResult, request: ElicitationRequest, label: str) -> mcp_types.ElicitResult:
    """The SDK answer; accepted form content that breaks the requested schema is declined."""
    if result.action != "accept" or request.mode == "url":
        return mcp_types.ElicitResult(action=result.action)
    content = dict(result.content or {})
    from jsonschema import Draft202012Validator

    errors = sorted(Draft202012Validator(dict(request.requested_schema)).iter_errors(content), key=str)
    if errors:
        logger.warning(
            "MCP server %s: the elicitation answer does not match what was asked (%s); declined",
            label,
            clip(errors[0].message, 200),
        )
        return mcp_types.ElicitResult(action="decline")
    return mcp_types.ElicitResult(action="accept", content=content)


def _roots(handlers: MCPClientHandlers, label: str) -> Any:
    async def on_list_roots(context: ClientRequestContext) -> mcp_types.ListRootsResult | mcp_types.ErrorData:
        del context
        try:
            paths = handlers.root_paths()
        except Exception:
            logger.exception("MCP server %s: the roots provider failed", label)
            return mcp_types.ErrorData(code=mcp_types.INTERNAL_ERROR, message="The client could not list its roots.")
        return mcp_types.ListRootsResult(
            roots=[mcp_types.Root(uri=FileUrl(path.as_uri()), name=path.name or str(path)) for path in paths]
        )

    return on_list_roots
