"""LangChain both ways: tooldeck tools as ``StructuredTool``s, LangChain tools as tooldeck tools.

Needs ``langchain-core``: ``pip install -e '.[langchain]'`` in a checkout.

Out (:func:`to_langchain_tools`): one ``StructuredTool`` per tool a registry or an agent's
view exports. Its ``args_schema`` is the tool's JSON schema; every call, sync or async,
goes through the registry (validation, breaker, retries, approvals, metrics), so a LangChain
or LangGraph agent gets tooldeck's behaviour. The result's ``data`` is the content the model
reads (text as is, anything else as JSON) and the whole result dict is the artifact; an
error envelope becomes an error ``ToolMessage`` whose content is the message written for the
model (LangChain's ``ToolException`` with ``handle_tool_error=True``).

In (:func:`from_langchain_tool`): a LangChain ``BaseTool`` as a tooldeck tool, with the
schema LangChain itself would send (``convert_to_openai_tool``). A ``ToolException`` the tool
raises reaches the model as its text (recognised like every framework's tool error, see
:mod:`tools._foreign_errors`); an error LangChain already turned into a message
(``handle_tool_error``) is an ``execution_error`` with that message; LangChain's own argument
validation failing is a ``validation_error`` naming the fields.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Protocol

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool as LCBaseTool
from langchain_core.tools import StructuredTool, ToolException
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ValidationError

from tools._arguments import from_pydantic_errors, invalid_arguments
from tools.base import BaseTool
from tools.errors import ToolError

if TYPE_CHECKING:
    from collections.abc import Awaitable

    from tools.result import ToolResult

__all__ = ["LangChainTool", "from_langchain_tool", "to_langchain_tools"]

_call_ids = itertools.count(1)


class RegistryLike(Protocol):
    """What :func:`to_langchain_tools` needs: a registry or a ``ToolView``."""

    def to_openai_tools(self) -> list[dict[str, Any]]:
        """The exported tools."""
        ...

    def call_tool(self, name: str, /, **arguments: Any) -> ToolResult:
        """Call one tool through the registry."""
        ...

    def acall_tool(self, name: str, /, **arguments: Any) -> Awaitable[ToolResult]:
        """Async twin of ``call_tool``."""
        ...


def to_langchain_tools(target: RegistryLike, *, names: Iterable[str] | None = None) -> list[StructuredTool]:
    """LangChain ``StructuredTool``s for the tools ``target`` (a registry or a view) exports.

    Args:
        target: A :class:`~tools.registry.LocalToolRegistry` or a
            :class:`~tools.routing.ToolView` (then only the agent's tools, and calls are
            refused for tools the agent may not use).
        names: Only these tools (default: every exported tool).

    Returns:
        One ``StructuredTool`` per tool, ``response_format="content_and_artifact"``: the
        content is the result's ``data`` (JSON text unless it is text), the artifact the
        whole result dict (status, data, metadata); errors come back as error messages.
    """
    wanted = None if names is None else set(names)
    tools: list[StructuredTool] = []
    for exported in target.to_openai_tools():
        function = exported["function"]
        if wanted is None or function["name"] in wanted:
            tools.append(_structured(target, function))
    return tools


def _structured(target: RegistryLike, function: dict[str, Any]) -> StructuredTool:
    name: str = function["name"]

    def run(**arguments: Any) -> tuple[str, dict[str, Any]]:
        return _content(target.call_tool(name, **arguments))

    async def arun(**arguments: Any) -> tuple[str, dict[str, Any]]:
        return _content(await target.acall_tool(name, **arguments))

    return StructuredTool(
        name=name,
        description=function.get("description") or name,
        args_schema=function.get("parameters") or {"type": "object", "properties": {}},
        func=run,
        coroutine=arun,
        response_format="content_and_artifact",
        handle_tool_error=True,
    )


def _content(result: ToolResult) -> tuple[str, dict[str, Any]]:
    """(content for the model, the result dict as the artifact); an error raises for LangChain."""
    if result.error is not None:
        raise ToolException(result.error.message)
    data = result.data
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    return text, result.to_dict()


class LangChainTool(BaseTool[dict[str, Any], Any]):
    """A LangChain ``BaseTool`` as a tooldeck tool (build it with :func:`from_langchain_tool`).

    Args:
        tool: The LangChain tool.
        name: The tooldeck name (default: the tool's own; ``^[a-zA-Z0-9_-]{1,64}$``).
        description: The description shown to the model (default: the tool's).
    """

    def __init__(self, tool: LCBaseTool, *, name: str | None = None, description: str | None = None) -> None:
        function = convert_to_openai_tool(tool)["function"]
        self.name = name or tool.name
        self.description = description or function.get("description") or tool.description or self.name
        self.parameters = function.get("parameters") or {"type": "object", "properties": {}}
        self.langchain_tool = tool
        self._native_async = _has_native_async(tool)

    @property
    def is_async(self) -> bool:
        """True when the LangChain tool has its own async implementation (then used always)."""
        return self._native_async

    def execute_internal(self, request: dict[str, Any]) -> Any:
        """Invoke the LangChain tool with a tool call; its message's content is the data."""
        call = {"type": "tool_call", "name": self.langchain_tool.name, "args": request, "id": _call_id()}
        if self._native_async:
            return self._ainvoke(call)
        try:
            message = self.langchain_tool.invoke(call)
        except ValidationError as exc:
            raise self._invalid(exc) from None
        return _data(message)

    async def _ainvoke(self, call: dict[str, Any]) -> Any:
        try:
            message = await self.langchain_tool.ainvoke(call)
        except ValidationError as exc:
            raise self._invalid(exc) from None
        return _data(message)

    def _invalid(self, exc: ValidationError) -> ToolError:
        return invalid_arguments(self.name, from_pydantic_errors(exc.errors()), self.parameters)


def from_langchain_tool(tool: LCBaseTool, *, name: str | None = None, description: str | None = None) -> LangChainTool:
    """A LangChain tool as a tooldeck tool, ready for ``registry.register``.

    Raises:
        InvalidToolNameError: the tool's name is not ``^[a-zA-Z0-9_-]{1,64}$``; pass ``name=``.
    """
    from tools._names import check_tool_name

    check_tool_name(name or tool.name, owner=f"LangChain tool {tool.name!r} (pass name=...)")
    return LangChainTool(tool, name=name, description=description)


def _has_native_async(tool: LCBaseTool) -> bool:
    coroutine = getattr(tool, "coroutine", _MISSING)
    if coroutine is not _MISSING:  # StructuredTool / Tool: async when given a coroutine
        return coroutine is not None
    return type(tool)._arun is not LCBaseTool._arun


_MISSING: Any = object()


def _call_id() -> str:
    return f"tooldeck-{next(_call_ids)}"


def _data(message: Any) -> Any:
    """The envelope data of what ``invoke`` returned for a tool call."""
    if not isinstance(message, ToolMessage):  # e.g. a LangGraph Command: pass it on as text
        return message if isinstance(message, str | int | float | bool | list | dict) else str(message)
    if message.status == "error":  # handle_tool_error made the failure a message for the model
        raise ToolError(_text(message.content) or f"The tool {message.name or ''} failed.")
    return message.content


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = [c if isinstance(c, str) else str(c.get("text", "")) for c in content if isinstance(c, str | dict)]
    return "\n".join(part for part in parts if part)
