"""Configuration models for external tools: :class:`ToolConfig` and the per-adapter configs.

All models are frozen pydantic models that forbid unknown keys, so a typo in a config file is an
error naming the field instead of a silently ignored setting. Secrets are never stored in a
config: :class:`AuthConfig` holds the *name* of an environment variable, and adapters read the
value at call time from an environment mapping injected into their constructor.

A :class:`ToolConfig` carries its adapter's settings in ``config``; the model is chosen by
``adapter_type`` (``"http"`` -> :class:`HTTPConfig`, ``"cli"`` -> :class:`CLIConfig`,
``"mcp"`` -> :class:`MCPConfig`, anything else stays a plain dict for custom adapters).
"""

from __future__ import annotations

import hashlib
import json
import re
import string
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from tools._names import TOOL_NAME_RULE

ENV_NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*$"
_PLACEHOLDER = re.compile(r"^\{(\*)?([A-Za-z_][A-Za-z0-9_]*)(?::(.+))?\}$")


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


@dataclass(frozen=True)
class ActionSpec:
    """One action an external tool offers, as the model sees it.

    Attributes:
        name: The action name passed to :meth:`ToolAdapter.execute`.
        description: Prompt text describing what the action does.
        parameters: JSON schema (an ``object`` schema) of the action's arguments.
    """

    name: str
    description: str
    parameters: dict[str, Any] = field(default_factory=dict)


class AuthConfig(_Frozen):
    """How an adapter authenticates; the secret is referenced by environment variable name.

    The value is looked up at call time in the environment mapping given to the adapter's
    constructor, never stored here, never logged and redacted from every error message.
    """

    env_var: str = Field(pattern=ENV_NAME_PATTERN, description="Name of the variable holding the secret.")
    kind: Literal["bearer", "header"] = Field(
        default="bearer",
        description="'bearer': 'Authorization: Bearer <secret>'; 'header': '<header>: <secret>'.",
    )
    header: str = Field(default="Authorization", min_length=1, description="Header carrying the secret.")

    def header_value(self, secret: str) -> str:
        """The header value for ``secret`` according to :attr:`kind`."""
        return f"Bearer {secret}" if self.kind == "bearer" else secret


class HTTPEndpoint(_Frozen):
    """One action of an HTTP tool: method, path template and where arguments go.

    Placeholders ``{name}`` in ``path`` are filled from the arguments (URL-quoted). Arguments
    named in ``query`` go to the query string, those in ``body`` to a JSON body. When neither
    list is given, remaining arguments go to the query string for GET/DELETE/HEAD and to the JSON
    body otherwise.
    """

    method: Literal["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"] = "GET"
    path: str = Field(default="/", description="Path template relative to base_url, e.g. '/users/{id}'.")
    query: list[str] | None = None
    body: list[str] | None = None
    description: str = ""
    parameters: dict[str, Any] | None = Field(
        default=None,
        description="JSON schema of the arguments; derived from path/query/body names when absent.",
    )
    output: Literal["auto", "json", "text"] = "auto"

    def path_params(self) -> list[str]:
        """Names of the ``{placeholders}`` in :attr:`path`, in order."""
        return [f for _, f, _, _ in string.Formatter().parse(self.path) if f]

    def spec(self, action: str) -> ActionSpec:
        """This endpoint as an :class:`ActionSpec` (derived schema: every argument a string)."""
        if self.parameters is not None:
            return ActionSpec(action, self.description, dict(self.parameters))
        required = self.path_params()
        names = [*required, *(self.query or []), *(self.body or [])]
        props = {n: {"type": "string", "description": f"Value for '{n}'."} for n in dict.fromkeys(names)}
        schema: dict[str, Any] = {"type": "object", "properties": props, "required": required}
        if self.query is not None or self.body is not None:
            schema["additionalProperties"] = False
        return ActionSpec(action, self.description, schema)


class HTTPConfig(_Frozen):
    """Settings of an HTTP API tool (adapter type ``"http"``)."""

    base_url: str = Field(pattern=r"^https?://[^\s]+$", description="e.g. 'https://api.example.com/v1'.")
    endpoints: dict[str, HTTPEndpoint] = Field(min_length=1, description="Action name -> endpoint.")
    headers: dict[str, str] = Field(default_factory=dict, description="Static headers sent with every call.")
    timeout: float = Field(default=30.0, gt=0, le=600, description="Seconds per HTTP attempt.")
    max_attempts: int = Field(default=3, ge=1, le=10, description="Attempts on 429/5xx/connection errors.")
    retry_after_cap: float = Field(default=30.0, ge=0, le=600, description="Longest Retry-After honoured.")
    max_response_bytes: int = Field(default=2_000_000, gt=0, description="Larger bodies are refused/cut.")
    verify_tls: bool = True

    def action_specs(self) -> list[ActionSpec]:
        """One :class:`ActionSpec` per endpoint."""
        return [ep.spec(name) for name, ep in self.endpoints.items()]


class CLIAction(_Frozen):
    """One action of a CLI tool: an argv template appended to :attr:`CLIConfig.command`.

    Template elements: literal strings; ``"{name}"`` (a positional value: refused when it begins
    with ``-`` unless a literal ``"--"`` came earlier); ``"{*name}"`` (a list of positionals);
    ``"{name:--flag}"`` (the literal ``--flag`` when the boolean argument is true); a string
    embedding placeholders such as ``"--count={n}"``; or a list of elements forming a group that is
    dropped as a whole when one of its arguments is absent (``["-n", "{count}"]``).
    """

    args: list[str | list[str]] = Field(default_factory=list)
    description: str = ""
    parameters: dict[str, Any] | None = Field(
        default=None,
        description="JSON schema of the arguments; derived from the template when absent.",
    )
    output: Literal["text", "json", "lines"] = "text"

    def placeholders(self) -> dict[str, tuple[str, bool]]:
        """Placeholder name -> (kind ``value``/``list``/``flag``, required)."""
        found: dict[str, tuple[str, bool]] = {}
        for element in self.args:
            group = isinstance(element, list)
            for part in element if isinstance(element, list) else [element]:
                for name, kind in _element_placeholders(part):
                    required = not group and kind == "value"
                    found.setdefault(name, (kind, required))
        return found

    def spec(self, action: str) -> ActionSpec:
        """This action as an :class:`ActionSpec`."""
        if self.parameters is not None:
            return ActionSpec(action, self.description, dict(self.parameters))
        props: dict[str, Any] = {}
        required: list[str] = []
        for name, (kind, req) in self.placeholders().items():
            if kind == "list":
                props[name] = {"type": "array", "items": {"type": "string"}}
            elif kind == "flag":
                props[name] = {"type": "boolean"}
            else:
                props[name] = {"type": "string"}
            if req:
                required.append(name)
        schema = {
            "type": "object",
            "properties": props,
            "required": required,
            "additionalProperties": False,
        }
        return ActionSpec(action, self.description, schema)


def _element_placeholders(part: str) -> list[tuple[str, str]]:
    """(name, kind) of the placeholders in one template string."""
    whole = _PLACEHOLDER.match(part)
    if whole:
        kind = "list" if whole.group(1) else "flag" if whole.group(3) else "value"
        return [(whole.group(2), kind)]
    out: list[tuple[str, str]] = []
    for _, fname, spec, conv in string.Formatter().parse(part):
        if fname is None:
            continue
        if not re.match(ENV_NAME_PATTERN, fname) or spec or conv:
            raise ValueError(f"template element {part!r}: placeholders must be plain '{{name}}'")
        out.append((fname, "value"))
    return out


class CLIConfig(_Frozen):
    """Settings of a command-line tool (adapter type ``"cli"``); never run through a shell."""

    command: list[str] = Field(min_length=1, description="argv prefix, e.g. ['git', '-C', '/repo'].")
    actions: dict[str, CLIAction] = Field(min_length=1, description="Action name -> argv template.")
    timeout: float = Field(default=60.0, gt=0, le=3600, description="Seconds before the process group dies.")
    cwd: str | None = None
    env: dict[str, str] = Field(default_factory=dict, description="Extra non-secret environment variables.")
    secret_env: list[str] = Field(
        default_factory=list,
        description="Names of environment variables passed to the child whose values are redacted.",
    )
    max_output_bytes: int = Field(default=1_000_000, gt=0, description="stdout beyond this is an error.")

    @field_validator("actions")
    @classmethod
    def _check_templates(cls, actions: dict[str, CLIAction]) -> dict[str, CLIAction]:
        for action in actions.values():
            action.placeholders()
        return actions

    @field_validator("secret_env")
    @classmethod
    def _check_env_names(cls, names: list[str]) -> list[str]:
        bad = [n for n in names if not re.match(ENV_NAME_PATTERN, n)]
        if bad:
            raise ValueError(f"not environment variable names: {bad}")
        return names

    def action_specs(self) -> list[ActionSpec]:
        """One :class:`ActionSpec` per action."""
        return [a.spec(name) for name, a in self.actions.items()]


class MCPConfig(_Frozen):
    """How to reach an MCP server (adapter type ``"mcp"``): a stdio command or a URL.

    ``transport`` defaults to ``"streamable-http"`` when only ``url`` is given, else ``"stdio"``.
    """

    command: list[str] | None = Field(default=None, description="argv of a stdio server.")
    url: str | None = Field(default=None, pattern=r"^https?://[^\s]+$", description="Streamable HTTP endpoint.")
    env: dict[str, str] | None = None
    cwd: str | None = None
    transport: Literal["stdio", "streamable-http"] = "stdio"
    persistent: bool = Field(default=True, description="One reused session (True) or a spawn per call.")
    timeout: float = Field(default=60.0, gt=0, le=3600, description="Seconds per call.")
    trusted: bool = Field(
        default=False,
        description=(
            "Trust the server's tool annotations: readOnlyHint may then lower a tool's risk and declare it "
            "read-only. Untrusted (the default), annotations may only raise risk."
        ),
    )

    @model_validator(mode="before")
    @classmethod
    def _infer_transport(cls, data: Any) -> Any:
        if isinstance(data, dict) and "transport" not in data and data.get("url") and not data.get("command"):
            return {**data, "transport": "streamable-http"}
        return data

    @model_validator(mode="after")
    def _check_target(self) -> MCPConfig:
        if self.transport == "stdio" and not self.command:
            raise ValueError("transport 'stdio' needs 'command' (the server's argv)")
        if self.transport == "streamable-http" and not self.url:
            raise ValueError("transport 'streamable-http' needs 'url'")
        return self


class AdoptionMetadata(_Frozen):
    """Where an external tool came from and how far it is trusted."""

    source: str | None = Field(default=None, description="Where the tool comes from (URL, package, team).")
    adopted_at: datetime | None = None
    adopted_by: str | None = None
    stage: Literal["proposed", "trial", "adopted", "deprecated"] = "adopted"
    notes: str | None = None


_CONFIG_MODELS: dict[str, type[BaseModel]] = {
    "http": HTTPConfig,
    "cli": CLIConfig,
    "mcp": MCPConfig,
}


class ToolConfig(_Frozen):
    """One external tool: identity, adapter, adapter settings, auth and provenance.

    Example:
        >>> ToolConfig(id="gh", name="github", adapter_type="http", description="GitHub API",
        ...            config={"base_url": "https://api.github.com",
        ...                    "endpoints": {"repo": {"path": "/repos/{owner}/{repo}"}}})
    """

    id: str = Field(pattern=r"^[A-Za-z0-9_.:-]{1,128}$", description="Stable identifier used by adapters.")
    name: str = Field(pattern=TOOL_NAME_RULE, description="Tool name shown to the model.")
    adapter_type: str = Field(min_length=1, description="Adapter that runs the tool: http, cli, mcp, ...")
    description: str = ""
    version: str = "1.0.0"
    capabilities: list[str] = Field(default_factory=list, description="Free-form capability tags.")
    config: HTTPConfig | CLIConfig | MCPConfig | dict[str, Any] = Field(default_factory=dict)
    parameters: dict[str, Any] | None = Field(
        default=None,
        description="Argument schema for adapters whose config does not describe actions.",
    )
    auth: AuthConfig | None = None
    timeout: float | None = Field(default=None, gt=0, description="Default per-call timeout in seconds.")
    adoption: AdoptionMetadata = Field(default_factory=AdoptionMetadata)
    version_hash: str | None = Field(default=None, description="Hash of the settings; see compute_version_hash.")

    @model_validator(mode="before")
    @classmethod
    def _typed_config(cls, data: Any) -> Any:
        if isinstance(data, dict):
            model = _CONFIG_MODELS.get(str(data.get("adapter_type")))
            raw = data.get("config")
            if model is not None and raw is not None and not isinstance(raw, model):
                return {**data, "config": model.model_validate(raw)}
        return data

    def action_specs(self) -> list[ActionSpec]:
        """The actions this tool offers (one ``default`` action for configs without actions)."""
        if isinstance(self.config, HTTPConfig | CLIConfig):
            return self.config.action_specs()
        schema = self.parameters if self.parameters is not None else {"type": "object"}
        return [ActionSpec("default", self.description, dict(schema))]

    def compute_version_hash(self) -> str:
        """SHA-256 (hex, first 16 chars) of the settings that change behaviour.

        ``adoption`` and ``version_hash`` itself are excluded, so re-adopting a tool does not
        change its hash while editing an endpoint does.
        """
        payload = self.model_dump(mode="json", exclude={"adoption", "version_hash"})
        blob = json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()
        return hashlib.sha256(blob).hexdigest()[:16]

    def with_version_hash(self) -> ToolConfig:
        """A copy with :attr:`version_hash` set to :meth:`compute_version_hash`."""
        return self.model_copy(update={"version_hash": self.compute_version_hash()})
