"""``ToolConfig`` and ``Registry``: tools declared as data (DESIGN section 10).

A registry file holds one :class:`ToolConfig` per tool id. The adapter settings are the
existing :mod:`tools.external` config models (:class:`~tools.external.HTTPConfig`,
:class:`~tools.external.CLIConfig`, :class:`~tools.external.MCPConfig`) plus
:class:`BinaryConfig` for subprocess tool binaries. Secrets are never stored: :class:`ToolAuth`
names the environment variable that holds one.

Example file (``.tooldeck/registry.json``)::

    {
      "version": 1,
      "tools": {
        "weather": {
          "adapter_type": "http",
          "capabilities": ["weather"],
          "http": {"base_url": "https://api.example.com",
                   "endpoints": {"current": {"path": "/weather", "query": ["city"]}}},
          "auth": {"env_var": "WEATHER_API_KEY", "signup_url": "https://example.com/keys"}
        }
      }
    }
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from tools._names import TOOL_NAME_RULE
from tools.external.config import ENV_NAME_PATTERN, CLIConfig, HTTPConfig, MCPConfig
from tools.manual import RiskLevel, ToolCategory

#: Schema version of registry files this code writes (and the newest it reads).
REGISTRY_VERSION = 1
AdapterType = Literal["http", "cli", "mcp", "binary"]
_CONFIG_FIELD: dict[str, str] = {"http": "http", "cli": "cli", "mcp": "mcp", "binary": "binary"}


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ToolAuth(_Frozen):
    """A credential a tool needs, by environment-variable *name* (never its value).

    Attributes:
        env_var: The variable that holds the secret, e.g. ``WEATHER_API_KEY``.
        kind: ``bearer`` sends ``Authorization: Bearer <secret>``; ``header`` sends the raw
            secret in :attr:`header` (HTTP and MCP-over-HTTP tools). CLI tools and binaries
            receive the variable in their environment.
        header: The header carrying the secret.
        signup_url: Where to obtain a credential (shown by ``tooldeck check``).
        description: What the credential is for.
    """

    env_var: str = Field(pattern=ENV_NAME_PATTERN)
    kind: Literal["bearer", "header"] = "bearer"
    header: str = Field(default="Authorization", min_length=1)
    signup_url: str | None = None
    description: str | None = None


class ManualOverrides(_Frozen):
    """The operator's declarations of a tool's manual (``tooldeck adopt --risk --category
    --read-only``, or the registry file's ``manual`` object). They win over everything else.

    Unset fields fail closed: risk ``moderate`` (``dangerous`` when the tool's name or the
    program it runs destroys, sends, pays, deploys or executes), ``mutating`` true, category
    ``unclassified`` (placed by name for routing only).
    """

    category: ToolCategory | None = None
    risk: RiskLevel | None = None
    mutating: bool | None = None

    def is_empty(self) -> bool:
        """True when nothing is declared."""
        return self.category is None and self.risk is None and self.mutating is None


class ToolHints(_Frozen):
    """What a tool's source says about it: an MCP server's annotations, a catalog's claims.

    A remote party's hints may raise risk; they lower it (or declare ``mutating=False``) only
    for an MCP server whose config the operator marked ``trusted``.

    Attributes:
        read_only: ``readOnlyHint``: the tool changes nothing (True) or changes things.
        destructive: ``destructiveHint``: the tool may destroy data.
        risk: A risk level the source claims.
        category: A category the source claims (used when the operator declared none).
    """

    read_only: bool | None = None
    destructive: bool | None = None
    risk: RiskLevel | None = None
    category: ToolCategory | None = None


class BinaryConfig(_Frozen):
    """A subprocess tool binary (adapter type ``binary``): JSON on stdin, JSON on stdout.

    Attributes:
        path: Absolute path of the executable.
        timeout: Seconds one call may take before the process group is killed.
        env: Extra non-secret environment variables for the child.
        output_schema: The binary's declared ``output_schema``, when it printed one.
    """

    path: str = Field(min_length=1)
    timeout: float = Field(default=300.0, gt=0, le=3600)
    env: dict[str, str] = Field(default_factory=dict)
    output_schema: dict[str, Any] | None = None


class ToolConfig(_Frozen):
    """One tool declared as data: identity, adapter settings, auth, routing and provenance.

    Exactly one of :attr:`http`, :attr:`cli`, :attr:`mcp`, :attr:`binary` is set, the one
    named by :attr:`adapter_type`.

    Attributes:
        id: The tool's name in every registry and the id used by the CLI
            (``^[a-zA-Z0-9_-]{1,64}$``).
        name: A human-readable name (default: the id).
        adapter_type: ``http``, ``cli``, ``mcp`` or ``binary``.
        description: What the tool does, for the model (default: from the adapter config).
        capabilities: Free-form tags for capability lookup (``current_time``, ``weather``).
        http: Settings of an HTTP API tool.
        cli: Settings of a command-line tool.
        mcp: How to reach the MCP server; :attr:`remote_tool` names the server's tool.
        binary: Settings of a tool binary.
        remote_tool: The MCP server's name for the tool (MCP tools only).
        parameters: JSON schema of the arguments, when the adapter config does not describe
            them (MCP tools and binaries: the schema seen at adoption).
        auth: The credential the tool needs, by variable name.
        manual: The operator's declarations (category, risk, mutating).
        hints: What the tool's source said about it (untrusted unless the MCP server is
            ``trusted``).
        adopted_at: When the tool was adopted (None for hand-written entries).
        adopted_from: The catalog id or file it was adopted from.
        version_hash: :meth:`compute_version_hash` at adoption; a differing current hash
            means the entry changed since (see :meth:`RegistryService.needs_reapproval`).
    """

    id: str = Field(pattern=TOOL_NAME_RULE)
    name: str = ""
    adapter_type: AdapterType
    description: str = ""
    capabilities: tuple[str, ...] = ()
    http: HTTPConfig | None = None
    cli: CLIConfig | None = None
    mcp: MCPConfig | None = None
    binary: BinaryConfig | None = None
    remote_tool: str | None = None
    parameters: dict[str, Any] | None = None
    auth: ToolAuth | None = None
    manual: ManualOverrides = ManualOverrides()  # frozen: shared safely
    hints: ToolHints | None = None
    adopted_at: datetime | None = None
    adopted_from: str | None = None
    version_hash: str | None = None

    @model_validator(mode="after")
    def _one_adapter_config(self) -> ToolConfig:
        present = [key for key in _CONFIG_FIELD.values() if getattr(self, key) is not None]
        wanted = _CONFIG_FIELD[self.adapter_type]
        if present != [wanted]:
            extra = [key for key in present if key != wanted]
            if extra:
                raise ValueError(
                    f"adapter_type {self.adapter_type!r} takes only the {wanted!r} settings; remove {extra}"
                )
            raise ValueError(f"adapter_type {self.adapter_type!r} needs a {wanted!r} object with its settings")
        if self.adapter_type == "mcp" and not self.remote_tool:
            raise ValueError("an MCP tool needs 'remote_tool': the name of the tool on the server")
        return self

    @property
    def label(self) -> str:
        """:attr:`name` or, when empty, :attr:`id`."""
        return self.name or self.id

    def compute_version_hash(self) -> str:
        """SHA-256 (hex) of the canonical JSON of everything that changes behaviour.

        Included: adapter type and settings, remote tool, argument schema, description (prompt
        text), auth *variable names*, the operator's manual declarations and the source's
        hints. Excluded: id, display name,
        capabilities, provenance and the hash itself. Secret values are never part of a config,
        so never part of the hash.
        """
        payload = self.model_dump(
            mode="json",
            exclude={"id", "name", "capabilities", "adopted_at", "adopted_from", "version_hash"},
            exclude_none=True,
        )
        blob = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    def with_version_hash(self) -> ToolConfig:
        """A copy whose :attr:`version_hash` is :meth:`compute_version_hash`."""
        return self.model_copy(update={"version_hash": self.compute_version_hash()})

    def to_json_dict(self) -> dict[str, Any]:
        """The JSON form written to registry files (unset fields left out)."""
        return self.model_dump(mode="json", exclude_none=True, exclude_defaults=True) | {
            "id": self.id,
            "adapter_type": self.adapter_type,
        }


class Registry(_Frozen):
    """The content of one registry file: a schema version and tools by id.

    In the file, ``tools`` maps each id to its config; an entry may omit ``id`` (the key is
    used, see :meth:`from_data`), and an ``id`` that differs from its key is an error.
    """

    version: int = Field(default=REGISTRY_VERSION, ge=1, le=REGISTRY_VERSION)
    tools: dict[str, ToolConfig] = Field(default_factory=dict)

    @classmethod
    def from_data(cls, data: Any) -> Registry:
        """Validate the parsed content of a registry file, taking missing ids from the keys.

        Raises:
            pydantic.ValidationError: the content is not a valid registry.
        """
        if isinstance(data, dict) and isinstance(data.get("tools"), dict):
            tools = {
                key: {"id": key, **entry} if isinstance(entry, dict) and "id" not in entry else entry
                for key, entry in data["tools"].items()
            }
            data = {**data, "tools": tools}
        return cls.model_validate(data)

    @model_validator(mode="after")
    def _keys_match_ids(self) -> Registry:
        for key, config in self.tools.items():
            if key != config.id:
                raise ValueError(f"tools[{key!r}] has id {config.id!r}; the key and the id must be equal")
        return self

    def get(self, tool_id: str) -> ToolConfig | None:
        """The config of ``tool_id``, or None."""
        return self.tools.get(tool_id)

    def with_tool(self, config: ToolConfig) -> Registry:
        """A copy with ``config`` added (or replacing the entry with the same id)."""
        return self.model_copy(update={"tools": {**self.tools, config.id: config}})

    def without(self, tool_id: str) -> Registry:
        """A copy without ``tool_id`` (unchanged when absent)."""
        return self.model_copy(update={"tools": {k: v for k, v in self.tools.items() if k != tool_id}})

    def to_json_text(self) -> str:
        """Human-readable JSON (indent 2, ids sorted) with a trailing newline."""
        doc = {
            "version": self.version,
            "tools": {key: self.tools[key].to_json_dict() for key in sorted(self.tools)},
        }
        return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
