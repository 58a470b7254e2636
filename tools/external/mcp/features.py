"""What an MCP *client* can do for a server: sampling, elicitation and roots.

A server may ask its client to run a model (``sampling/createMessage``), to ask the user
something (``elicitation/create``) or for the directories it may work in (``roots/list``).
A client declares each capability only when it can serve it, and servers offer some tools
only to clients that do (the reference "everything" server hides four tools otherwise).

:class:`MCPClientHandlers` bundles the application's answers; pass it to
:class:`~tools.external.mcp.MCPToolset` (``handlers=``). Each capability is declared only
when its handler is given, so by default the client declares none. The handlers receive
tooldeck's own request types, not the SDK's, so the code that answers them (an orchestrator
with its ``ChatModel`` and approver) needs no MCP import; they are plain (sync) callables,
run in a worker thread, never on the event loop. A handler that will not serve a request
raises :class:`MCPRequestDeclined`: the server then gets the spec's "user rejected" answer.

Everything a server sends here is a remote party's text: it is shown to people and models
as data, bounded in size, never executed.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

__all__ = [
    "ElicitationHandler",
    "ElicitationRequest",
    "ElicitationResult",
    "MCPClientHandlers",
    "MCPRequestDeclined",
    "RootsProvider",
    "SamplingHandler",
    "SamplingRequest",
    "SamplingResult",
]


class MCPRequestDeclined(Exception):
    """Raised by a handler that will not serve a server's request (not approved, no one to ask).

    Args:
        reason: Why, for the server and the log (no secrets).
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class SamplingRequest:
    """A server asks for one model completion (``sampling/createMessage``).

    Attributes:
        server: The server's label.
        messages: The conversation in OpenAI chat format (``role``/``content``); images and
            audio are described in text, never inlined.
        system_prompt: The server's system prompt, if any.
        max_tokens: The most tokens the server wants back.
        temperature: The server's temperature, if any.
        stop_sequences: Stop sequences, if any.
        model_hints: Model names the server would prefer, best first (advisory only).
    """

    server: str
    messages: tuple[Mapping[str, Any], ...]
    system_prompt: str | None
    max_tokens: int
    temperature: float | None = None
    stop_sequences: tuple[str, ...] = ()
    model_hints: tuple[str, ...] = ()


@dataclass(frozen=True)
class SamplingResult:
    """The client's completion for a :class:`SamplingRequest`.

    Attributes:
        text: The assistant's reply.
        model: The model that produced it.
        stop_reason: ``endTurn``, ``maxTokens`` or ``stopSequence`` (as the spec names them).
    """

    text: str
    model: str
    stop_reason: str = "endTurn"


@dataclass(frozen=True)
class ElicitationRequest:
    """A server asks the user for input (``elicitation/create``).

    Attributes:
        server: The server's label.
        message: What the server asks, for a person to read.
        mode: ``form`` (answer fields of ``requested_schema``) or ``url`` (open ``url``).
        requested_schema: The fields wanted (a flat JSON object schema), in form mode.
        url: The page the user is asked to open, in URL mode.
    """

    server: str
    message: str
    mode: Literal["form", "url"] = "form"
    requested_schema: Mapping[str, Any] = field(default_factory=dict)
    url: str | None = None


@dataclass(frozen=True)
class ElicitationResult:
    """The user's answer to an :class:`ElicitationRequest`.

    Attributes:
        action: ``accept`` (with ``content`` in form mode), ``decline`` (said no) or
            ``cancel`` (dismissed without choosing).
        content: The answered fields, when accepted in form mode.
    """

    action: Literal["accept", "decline", "cancel"]
    content: Mapping[str, Any] | None = None


SamplingHandler = Callable[[SamplingRequest], SamplingResult]
ElicitationHandler = Callable[[ElicitationRequest], ElicitationResult]
RootsProvider = Callable[[], Sequence["str | os.PathLike[str]"]]


@dataclass(frozen=True)
class MCPClientHandlers:
    """The client capabilities an application serves; each is declared only when given.

    Attributes:
        sampling: Answers ``sampling/createMessage`` (a model call someone pays for: gate it).
        elicitation: Answers ``elicitation/create`` (ask a person).
        roots: The directories the server may work in: paths, or a callable returning them
            (read at each ``roots/list``); sent as ``file://`` URIs.
    """

    sampling: SamplingHandler | None = None
    elicitation: ElicitationHandler | None = None
    roots: Sequence[str | os.PathLike[str]] | RootsProvider | None = None

    def root_paths(self) -> list[Path]:
        """The roots now, as absolute paths (an empty list without roots)."""
        roots = self.roots
        if roots is None:
            return []
        listed = roots() if callable(roots) else roots
        return [Path(os.path.abspath(os.fspath(path))) for path in listed]
