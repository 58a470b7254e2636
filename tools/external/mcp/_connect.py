"""How to reach one MCP server: stdio command or streamable-HTTP URL, and the SDK client for it."""

from __future__ import annotations

import logging
import sys
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TextIO
from urllib.parse import urlsplit

import httpx2
import mcp_types
from mcp import Client
from mcp.client import Transport
from mcp.client.session import IncomingMessage
from mcp.client.streamable_http import streamable_http_client

from tools.errors import ToolDefinitionError
from tools.external.mcp._stdio import stdio_transport
from tools.external.mcp._tasks import ProgressRouter
from tools.external.mcp.features import MCPClientHandlers

logger = logging.getLogger(__name__)

#: Longest server log or error text passed on verbatim; longer text is cut with a note.
MAX_SERVER_TEXT = 4_000

_PY_LEVELS: dict[str, int] = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL,
    "emergency": logging.CRITICAL,
}


def clip(text: str, limit: int = MAX_SERVER_TEXT) -> str:
    """Return ``text`` cut to ``limit`` characters, saying so when it was cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... [cut: {len(text) - limit} more characters]"


class MCPConfigError(ToolDefinitionError, ValueError):
    """An MCP toolset or server was configured wrongly (the message names the fix)."""


@dataclass(frozen=True)
class MCPServerParams:
    """Where an MCP server lives: a command to spawn (stdio) or a URL (streamable HTTP).

    Exactly one of ``command`` and ``url`` is given.

    Attributes:
        command: argv of the server process (no shell is involved), e.g.
            ``("python", "-m", "mcp_server_time")``.
        url: Streamable-HTTP endpoint, e.g. ``"http://127.0.0.1:8000/mcp"``.
        env: Extra environment variables for the server process, merged over the SDK's safe
            defaults (``PATH``, ``HOME``, ...); the parent's other variables are not inherited.
        cwd: Working directory of the server process.
        headers: Static HTTP headers (e.g. authorisation) for the URL form; never logged.
        label: A short name used in log lines and error messages (defaults to the command's
            executable or module, or the URL's host; never the URL's credentials).

    Raises:
        MCPConfigError: both or neither of ``command``/``url``; a shell string, an empty
            argv or a NUL byte in the command; a URL that is not http(s) with a host.
    """

    command: tuple[str, ...] | None = None
    url: str | None = None
    env: Mapping[str, str] | None = None
    cwd: str | Path | None = None
    headers: Mapping[str, str] | None = field(default=None, repr=False)
    label: str = ""

    def __post_init__(self) -> None:
        if (self.command is None) == (self.url is None):
            raise MCPConfigError("MCPServerParams: give exactly one of command=[...] or url='http...'.")
        command: Any = self.command
        if command is not None:
            if isinstance(command, str) or not command:
                raise MCPConfigError(
                    "MCPServerParams: command must be a non-empty argv list, e.g. "
                    "['python', '-m', 'mcp_server_time'], not a shell string."
                )
            if not all(isinstance(part, str) and "\x00" not in part for part in command):
                raise MCPConfigError("MCPServerParams: every command part must be a string without NUL.")
            object.__setattr__(self, "command", tuple(command))
        if self.url is not None:
            parts = urlsplit(self.url)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise MCPConfigError(
                    f"MCPServerParams: url must be an http(s) URL, e.g. "
                    f"'http://127.0.0.1:8000/mcp'; got scheme {parts.scheme!r}."
                )
        if not self.label:
            object.__setattr__(self, "label", self._default_label())

    def _default_label(self) -> str:
        if self.command is None:
            return urlsplit(self.url or "").hostname or "mcp"
        if len(self.command) > 2 and self.command[1] == "-m":
            return self.command[2]
        python = Path(self.command[0]).name.startswith("python")
        if python and len(self.command) > 1 and not self.command[1].startswith("-"):
            return Path(self.command[1]).name
        return Path(self.command[0]).name


@dataclass(frozen=True)
class ClientOptions:
    """How to open SDK clients for one server.

    Attributes:
        params: The server.
        connect_timeout: Seconds allowed for spawn/connect plus the protocol handshake.
        http_read_timeout: Read timeout of the HTTP client (URL form only).
        log_level: Lowest server log level requested (modern servers send nothing
            unless asked).
        errlog: Where the server process's stderr goes (stdio form only).
        protocol: ``"auto"`` probes for the newest protocol (2026-07-28) and falls back to
            the ``initialize`` handshake; ``"legacy"`` goes straight to the handshake.
        handlers: The sampling, elicitation and roots requests this client serves (each
            capability is declared only when its handler is given).
        progress_router: Routes the progress of task-augmented calls to their callers.
    """

    params: MCPServerParams
    connect_timeout: float = 30.0
    http_read_timeout: float = 300.0
    log_level: mcp_types.LoggingLevel = "info"
    errlog: TextIO = field(default=sys.stderr, repr=False)
    protocol: Literal["auto", "legacy"] = "legacy"
    handlers: MCPClientHandlers | None = None
    progress_router: ProgressRouter = field(default_factory=ProgressRouter, compare=False, repr=False)


def _stdio(options: ClientOptions, on_spawn: Callable[[int], None] | None) -> Transport:
    errlog: Any = options.errlog
    try:
        errlog.fileno()
    except (AttributeError, OSError, ValueError):
        errlog = None  # not a real file (captured stream): inherit this process's stderr
    transport: Transport = stdio_transport(
        options.params.command or (),
        env=options.params.env,
        cwd=options.params.cwd,
        stderr=errlog,
        on_spawn=on_spawn,
    )
    return transport


@asynccontextmanager
async def _http_transport(options: ClientOptions) -> AsyncIterator[Any]:
    timeout = httpx2.Timeout(options.connect_timeout, read=options.http_read_timeout)
    headers = dict(options.params.headers or {})
    async with (
        httpx2.AsyncClient(headers=headers, timeout=timeout) as http,
        streamable_http_client(options.params.url or "", http_client=http) as streams,
    ):
        yield streams


def make_client(
    options: ClientOptions,
    *,
    on_spawn: Callable[[int], None] | None = None,
) -> Client:
    """Build (not enter) an SDK :class:`mcp.Client` for ``options.params``.

    Server log notifications go to this module's logger at the mapped level, text cut to
    :data:`MAX_SERVER_TEXT`. Transport faults (a stdout line that is not JSON-RPC) are
    logged as warnings; ``on_spawn`` receives a stdio server's pid.
    """
    label = options.params.label

    async def on_log(params: mcp_types.LoggingMessageNotificationParams) -> None:
        level = _PY_LEVELS.get(params.level, logging.INFO)
        if not logger.isEnabledFor(level):
            return
        data = params.data if isinstance(params.data, str) else repr(params.data)
        source = f"{label}/{params.logger}" if params.logger else label
        logger.log(level, "MCP server %s: %s", source, clip(data))

    async def on_message(message: IncomingMessage) -> None:
        if isinstance(message, Exception):
            logger.warning("MCP server %s sent a malformed message: %s", label, clip(str(message), 300))
        elif isinstance(message, mcp_types.ProgressNotification):
            await options.progress_router.deliver(message)

    from tools.external.mcp._callbacks import sdk_callbacks  # it imports this module

    transport: Transport = _stdio(options, on_spawn) if options.params.command is not None else _http_transport(options)
    return Client(
        transport,
        mode=options.protocol,
        logging_callback=on_log,
        log_level=options.log_level,
        message_handler=on_message,
        client_info=mcp_types.Implementation(name="tooldeck", version="0.1.0"),
        **sdk_callbacks(options.handlers, label=label),
    )
