"""Catalog sources: where :class:`~tools.store.ToolCatalog` learns of tools it could adopt.

* :class:`ManualFileSource`: a JSON file of tool manuals (UTCP-style ``tool_call_template``
  entries for HTTP APIs, or tooldeck ``ToolConfig`` entries for any adapter type).
* :class:`MCPServerSource`: an MCP server's ``tools/list`` (the server is started, listed
  and stopped).
* :class:`BinaryDirSource`: a directory of tool binaries, each asked for ``--schema``.

Each source turns what it finds into :class:`CatalogEntry` objects whose ``template`` is the
:class:`~tools.store.ToolConfig` that adoption writes to the registry.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tools._names import sanitize_tool_name
from tools.external.config import ENV_NAME_PATTERN, HTTPConfig, HTTPEndpoint, MCPConfig
from tools.store.config import BinaryConfig, ManualOverrides, ToolAuth, ToolConfig, ToolHints
from tools.store.errors import CatalogError

MAX_MANUAL_BYTES = 20_000_000
_VERBS = re.compile(r"^(get|fetch|read|list|search|find|query|lookup|run|execute|create|update|delete|convert)_")
_ENV_REF = re.compile(r"^\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?$")
_SOURCE_NAME = r"^[A-Za-z0-9_.-]{1,64}$"


class CatalogEntry(BaseModel):
    """A tool the catalog knows of and that can be adopted.

    Attributes:
        catalog_id: ``source:name``, unique in the catalog.
        source: The source's name.
        name: The tool's name at its source.
        description: What it does.
        adapter_type: How it would run.
        capabilities: Capability tags (from the source, else derived from the name).
        template: The config adoption writes (before id, capabilities and provenance are set).
    """

    model_config = ConfigDict(frozen=True)

    catalog_id: str
    source: str
    name: str
    description: str = ""
    adapter_type: str
    capabilities: tuple[str, ...] = ()
    template: ToolConfig


def derive_capabilities(name: str, tags: tuple[str, ...] | list[str] = ()) -> tuple[str, ...]:
    """Capability tags: the given ones, the name, and the name without a leading verb.

    ``get_current_time`` -> ``("get_current_time", "current_time")``.
    """
    base = normalize_capability(sanitize_tool_name(name))
    found = [normalize_capability(t) for t in tags if str(t).strip()]
    found.append(base)
    stripped = _VERBS.sub("", base)
    if stripped and stripped != base:
        found.append(stripped)
    return tuple(dict.fromkeys(found))


def normalize_capability(text: str) -> str:
    """Lower case, with spaces and dashes as underscores (``Current-Time`` -> ``current_time``)."""
    return re.sub(r"[\s-]+", "_", str(text).strip().lower())


class _Source(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(pattern=_SOURCE_NAME, description="Short name; prefix of the catalog ids.")

    def _entry(self, template: ToolConfig, remote_name: str, tags: tuple[str, ...] | list[str] = ()) -> CatalogEntry:
        capabilities = template.capabilities or derive_capabilities(remote_name, tags)
        return CatalogEntry(
            catalog_id=f"{self.name}:{remote_name}",
            source=self.name,
            name=remote_name,
            description=template.description,
            adapter_type=template.adapter_type,
            capabilities=capabilities,
            template=template.model_copy(update={"capabilities": capabilities}),
        )


class ManualFileSource(_Source):
    """A JSON file of tool manuals: ``{"tools": [...]}`` (or a bare list).

    Each entry is either a tooldeck :class:`ToolConfig` (it has ``adapter_type``) or a
    UTCP-style manual: ``name``, ``description``, ``tags``, ``inputs`` (JSON schema) and a
    ``tool_call_template`` with ``call_template_type: "http"``, ``url`` (``{placeholders}``
    allowed), ``http_method`` and optionally ``auth: {"auth_type": "api_key", "api_key":
    "$VAR", "var_name": "X-Api-Key"}`` (the secret stays in the environment variable).

    The file is a third party's word: an entry's ``manual`` (category, risk, mutating) is
    kept as its ``hints``, never as the operator's declarations, and an MCP entry's
    ``trusted`` flag is dropped (only the operator trusts a server, in the registry file).
    """

    kind: Literal["manuals"] = "manuals"
    path: str

    def collect(self, env: Mapping[str, str]) -> list[CatalogEntry]:
        """Read the file.

        Raises:
            CatalogError: unreadable, not JSON (with the line), or an invalid entry (with its index).
        """
        del env
        path = Path(self.path)
        try:
            raw = path.read_bytes()[: MAX_MANUAL_BYTES + 1]
        except OSError as exc:
            raise CatalogError(f"manual file {path}: cannot be read ({exc.strerror or exc}); check the path") from None
        if len(raw) > MAX_MANUAL_BYTES:
            raise CatalogError(f"manual file {path}: larger than {MAX_MANUAL_BYTES} bytes")
        try:
            doc = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            line = getattr(exc, "lineno", None)
            raise CatalogError(f"manual file {path}:{line or 1}: not valid JSON ({exc})") from None
        items = doc.get("tools") if isinstance(doc, dict) else doc
        if not isinstance(items, list):
            raise CatalogError(f'manual file {path}: expected {{"tools": [...]}} or a list of tool manuals')
        entries = []
        for index, item in enumerate(items):
            try:
                entries.append(self._parse(item))
            except (ValidationError, ValueError, TypeError) as exc:
                raise CatalogError(f"manual file {path}: tools[{index}]: {_short(exc)}") from None
        return entries

    def _parse(self, item: Any) -> CatalogEntry:
        if not isinstance(item, dict):
            raise TypeError("each tool manual must be a JSON object")
        if "adapter_type" in item:
            # A catalog's "manual" claims are the source's hints, not the operator's declarations.
            fields = {k: v for k, v in item.items() if k not in ("tags", "manual")}
            if item.get("manual") is not None:
                fields["hints"] = _claimed(item["manual"])
            if isinstance(fields.get("mcp"), dict):
                # Only the operator trusts a server; a file cannot vouch for the one it names.
                fields["mcp"] = {k: v for k, v in fields["mcp"].items() if k != "trusted"}
            raw_id = str(item.get("id") or item.get("name") or "")
            template = ToolConfig.model_validate({**fields, "id": sanitize_tool_name(raw_id)})
            return self._entry(template, raw_id, tuple(item.get("tags") or ()))
        name = str(item.get("name") or "")
        if not name:
            raise ValueError("a tool manual needs a 'name'")
        call = item.get("tool_call_template")
        if not isinstance(call, dict) or call.get("call_template_type") != "http":
            raise ValueError(
                "only 'tool_call_template' entries of call_template_type 'http' are understood; "
                "write other tools as tooldeck ToolConfig entries (with 'adapter_type')"
            )
        template = ToolConfig(
            id=sanitize_tool_name(name),
            adapter_type="http",
            description=str(item.get("description") or ""),
            http=_http_config(call, item.get("inputs")),
            auth=_auth(call.get("auth")),
            capabilities=tuple(normalize_capability(t) for t in item.get("capabilities") or ()),
        )
        return self._entry(template, name, tuple(item.get("tags") or ()))


def _http_config(call: Mapping[str, Any], inputs: Any) -> HTTPConfig:
    url = str(call.get("url") or "")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"tool_call_template.url must be an http(s) URL, got {url[:100]!r}")
    method = str(call.get("http_method") or "GET").upper()
    schema = inputs if isinstance(inputs, dict) else None
    names = list((schema or {}).get("properties") or {})
    path = parts.path or "/"
    placeholders = set(HTTPEndpoint(path=path).path_params())
    rest = [n for n in names if n not in placeholders]
    where = {"query": rest} if method in ("GET", "DELETE", "HEAD") else {"body": rest}
    headers = call.get("headers") or {}
    endpoint = HTTPEndpoint(method=method, path=path, parameters=schema, **where)  # type: ignore[arg-type]
    return HTTPConfig(base_url=f"{parts.scheme}://{parts.netloc}", endpoints={"call": endpoint}, headers=headers)


def _auth(raw: Any) -> ToolAuth | None:
    if raw is None:
        return None
    if not isinstance(raw, dict) or raw.get("auth_type") != "api_key":
        raise ValueError("tool_call_template.auth: only auth_type 'api_key' is understood")
    ref = _ENV_REF.match(str(raw.get("api_key") or ""))
    if ref is None:
        raise ValueError(
            "tool_call_template.auth.api_key must name an environment variable ('$VAR'); "
            "secrets are never written into manuals or registries"
        )
    header = str(raw.get("var_name") or "Authorization")
    kind: Literal["bearer", "header"] = "bearer" if header.lower() == "authorization" else "header"
    return ToolAuth(env_var=ref.group(1), kind=kind, header=header)


class MCPServerSource(_Source):
    """An MCP server whose ``tools/list`` fills the catalog (one entry per server tool).

    Attributes:
        command: argv of a stdio server, e.g. ``["python", "-m", "mcp_server_time"]``.
        url: A streamable-HTTP endpoint instead.
        env: Extra environment for the server process.
        auth_env: Environment variable holding a credential the server needs (by name).
        timeout: Seconds to start the server and list its tools.
        trusted: Trust the server's tool annotations (adopted tools inherit it in their
            ``mcp`` config): ``readOnlyHint`` may then lower risk. Default: hints only.
    """

    kind: Literal["mcp"] = "mcp"
    command: list[str] | None = None
    url: str | None = None
    env: dict[str, str] | None = None
    auth_env: str | None = Field(default=None, pattern=ENV_NAME_PATTERN)
    timeout: float = Field(default=30.0, gt=0, le=600)
    trusted: bool = False

    def config(self) -> MCPConfig:
        """The server as an :class:`~tools.external.MCPConfig`."""
        return MCPConfig(command=self.command, url=self.url, env=self.env, trusted=self.trusted)

    def collect(self, env: Mapping[str, str]) -> list[CatalogEntry]:
        """Start the server, list its tools, stop it.

        Raises:
            CatalogError: the MCP SDK is missing, or the server did not start or list in time.
        """
        try:
            from tools.external.mcp import MCPToolset
        except ImportError as exc:
            raise CatalogError(f"MCP sources need the MCP SDK ({exc}); pip install -e '.[mcp]'") from None
        from tools.errors import ToolError

        mcp = self.config()
        headers = None
        auth = ToolAuth(env_var=self.auth_env) if self.auth_env else None
        if auth is not None and mcp.url and env.get(auth.env_var):
            headers = {"Authorization": f"Bearer {env[auth.env_var]}"}
        try:
            with MCPToolset(
                mcp.command,
                url=mcp.url if mcp.transport != "stdio" else None,
                env=mcp.env,
                headers=headers,
                persistent=True,
                connect_timeout=self.timeout,
                call_timeout=self.timeout,
                label=self.name,
            ) as toolset:
                tools = toolset.tools()
        except (ToolError, OSError, ValueError) as exc:
            raise CatalogError(f"MCP source {self.name!r}: the server did not list its tools: {exc}") from None
        entries = []
        for tool in tools:
            # The server's annotations are its hints, never the operator's declarations.
            template = ToolConfig(
                id=tool.name,
                adapter_type="mcp",
                description=tool.description,
                mcp=mcp,
                remote_tool=tool.remote_name,
                parameters=tool.parameters,
                auth=auth,
                hints=_hints(tool.read_only, tool.destructive),
            )
            entries.append(self._entry(template, tool.remote_name))
        return entries


class BinaryDirSource(_Source):
    """A directory of tool binaries (``--schema`` contract); broken ones are left out."""

    kind: Literal["binaries"] = "binaries"
    path: str
    timeout: float = Field(default=5.0, gt=0, le=600, description="Seconds for each --schema answer.")

    def collect(self, env: Mapping[str, str]) -> list[CatalogEntry]:
        """Probe every executable in the directory.

        Raises:
            CatalogError: the directory does not exist.
        """
        from tools.external.executor import ToolExecutorService

        service = ToolExecutorService(self.path, env=env, poll_interval=0, schema_timeout=self.timeout)
        try:
            service.start()
        except NotADirectoryError:
            raise CatalogError(f"binary source {self.name!r}: {self.path} is not a directory") from None
        try:
            tools = service.tools()
            states = service.status()
        finally:
            service.stop()
        entries = []
        for tool in tools:
            state = states.get(tool.name)
            known = state is not None and state.state == "ready"
            template = ToolConfig(
                id=tool.name,
                adapter_type="binary",
                description=tool.description if known else "",
                binary=BinaryConfig(path=tool.path, output_schema=tool.output_schema()),
                parameters=tool.parameters,
            )
            entries.append(self._entry(template, tool.name))
        return entries


CatalogSource = Annotated[ManualFileSource | MCPServerSource | BinaryDirSource, Field(discriminator="kind")]


def _hints(read_only: bool | None, destructive: bool | None) -> ToolHints | None:
    """An MCP tool's annotations as hints (None when it has none)."""
    if read_only is None and destructive is None:
        return None
    return ToolHints(read_only=read_only, destructive=destructive)


def _claimed(manual: Any) -> ToolHints:
    """A catalog entry's ``manual`` object (category, risk, mutating) as hints."""
    if not isinstance(manual, dict):
        raise TypeError("'manual' must be an object with category, risk and/or mutating")
    claims = ManualOverrides.model_validate(manual)
    read_only = None if claims.mutating is None else not claims.mutating
    return ToolHints(read_only=read_only, risk=claims.risk, category=claims.category)


def _short(exc: BaseException) -> str:
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(entry)"
        return f"{where}: {first['msg']}"
    return str(exc)
