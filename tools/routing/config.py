"""``ToolRoutingConfig``: the user's overrides of the agent profiles, from code or a file.

```toml
global_deny = ["bash"]                  # no agent gets these

[profiles.coder]                        # overrides of one agent type's profile
add_categories = ["web"]                # brings webfetch/websearch back, despite the profile
remove_categories = ["execution"]
add_tools = ["lsp"]                     # registered tools added whatever their category
deny_tools = ["patch"]                  # a deny always wins

[manuals.notion_search]                 # the operator declares a registered tool's manual
category = "search"                     # (e.g. an MCP one): category, risk, mutating, ...
mutating = false                        # declared: read-only agents may now get it
```

The same keys in a ``.json`` file. A file that cannot be used is a
:class:`~tools.routing.RoutingConfigError` naming the file, the key and the allowed values.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, model_validator
from pydantic_core import ErrorDetails

from tools._names import TOOL_NAME_RULE
from tools.manual import RiskLevel, TokenCost, ToolCategory, ToolManual
from tools.routing.errors import RoutingConfigError
from tools.routing.profiles import allowed_values

#: Config files larger than this are refused (a routing config is a few hundred bytes).
MAX_CONFIG_BYTES = 1 << 20
_MAX_ERRORS = 10

ToolName = Annotated[str, Field(pattern=TOOL_NAME_RULE)]
AgentType = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")]


class AgentToolOverride(BaseModel):
    """The user's changes to one agent type's profile (frozen).

    Attributes:
        add_categories: Categories allowed on top of the profile's; tools they bring in
            are exempt from the profile's ``denied_tools``.
        remove_categories: Categories taken away from the profile's.
        add_tools: Registered tools added whatever their category (like required tools).
        deny_tools: Tools removed; a deny always wins, even over required tools.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    add_categories: tuple[ToolCategory, ...] = ()
    remove_categories: tuple[ToolCategory, ...] = ()
    add_tools: tuple[ToolName, ...] = ()
    deny_tools: tuple[ToolName, ...] = ()

    @model_validator(mode="after")
    def _no_contradiction(self) -> AgentToolOverride:
        both = [c.value for c in self.add_categories if c in self.remove_categories]
        if both:
            raise ValueError(
                f"{', '.join(both)} is both in add_categories and remove_categories: keep it in one of them"
            )
        tools = [t for t in self.add_tools if t in self.deny_tools]
        if tools:
            raise ValueError(f"{', '.join(tools)} is both in add_tools and deny_tools: keep it in one of them")
        return self


class ManualOverride(BaseModel):
    """Changes to a registered tool's manual (frozen); unset fields keep the tool's own.

    Attributes:
        category: The primary category.
        secondary_categories: Replaces the secondary categories.
        risk: ``safe``, ``moderate`` or ``dangerous``.
        mutating: Whether a call can change anything.
        token_cost: ``low``, ``medium`` or ``high``.
        capabilities: Replaces the capability tags.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    category: ToolCategory | None = None
    secondary_categories: tuple[ToolCategory, ...] | None = None
    risk: RiskLevel | None = None
    mutating: bool | None = None
    token_cost: TokenCost | None = None
    capabilities: tuple[str, ...] | None = None

    def apply(self, manual: ToolManual) -> ToolManual:
        """``manual`` with this override's set fields replaced: the operator's declarations
        (a set ``risk`` applies to every action of a multi-action tool)."""
        changes = self.model_dump(exclude_none=True)
        if not changes:
            return manual
        declared = {key: changes.pop(key) for key in ("category", "risk", "mutating") if key in changes}
        return manual.with_declarations(by="operator", **declared, **changes)


class ToolRoutingConfig(BaseModel):
    """The user's routing overrides (frozen): global denies, per-agent overrides, manual fixes.

    Attributes:
        global_deny: Tools no agent gets, whatever its profile requires.
        profiles: Overrides per agent type (``AgentToolOverride``).
        manuals: Manual changes per registered tool name (``ManualOverride``).

    Example:
        >>> config = ToolRoutingConfig.from_file("routing.toml")  # doctest: +SKIP
        >>> ToolRouter(config=config).resolve("coder", registry.manuals())  # doctest: +SKIP
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    global_deny: tuple[ToolName, ...] = ()
    profiles: dict[AgentType, AgentToolOverride] = Field(default_factory=dict)
    manuals: dict[ToolName, ManualOverride] = Field(default_factory=dict)
    _source: str = PrivateAttr(default="routing config")

    @property
    def source(self) -> str:
        """Where the config came from (its file name), for error messages."""
        return self._source

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ToolRoutingConfig):
            return NotImplemented
        # Where a config came from (``source``) is not part of its value.
        return (self.global_deny, self.profiles, self.manuals) == (other.global_deny, other.profiles, other.manuals)

    __hash__ = None  # type: ignore[assignment]

    def override_for(self, agent_type: str) -> AgentToolOverride:
        """The override of ``agent_type`` (an empty one when the config has none)."""
        return self.profiles.get(agent_type) or _EMPTY_OVERRIDE

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], *, source: str = "routing config") -> ToolRoutingConfig:
        """Validate a parsed config (a dict from JSON, TOML or code).

        Args:
            data: The config's keys and values.
            source: What to call it in error messages (a file name).

        Raises:
            RoutingConfigError: naming ``source``, each bad key and its allowed values.
        """
        if not isinstance(data, Mapping):
            raise RoutingConfigError(
                f"{source}: the routing config must be an object (a TOML table), got {type(data).__name__}"
            )
        try:
            config = cls.model_validate(dict(data))
        except ValidationError as exc:
            raise RoutingConfigError(_describe(exc, source)) from None
        config._source = source
        return config

    @classmethod
    def from_file(cls, path: str | Path) -> ToolRoutingConfig:
        """Load a ``.json`` or ``.toml`` routing config file.

        Raises:
            RoutingConfigError: the file is missing, unreadable, too large, not valid
                JSON/TOML, or has a bad key or value (the message names the file, the key
                and the allowed values).
        """
        file = Path(path)
        return cls.from_mapping(_read(file), source=str(file))

    @classmethod
    def from_text(cls, text: str, path: str | Path) -> ToolRoutingConfig:
        """Validate the text of a routing config file before it is written to ``path``
        (TOML when ``path`` ends in ``.toml``, else JSON), as `from_file` would read it.

        Raises:
            RoutingConfigError: the text is not valid JSON/TOML, or has a bad key or value
                (the message names ``path``, the key and the allowed values).
        """
        file = Path(path)
        return cls.from_mapping(_parse(text, file), source=str(file))


_EMPTY_OVERRIDE = AgentToolOverride()


def _read(path: Path) -> Any:
    suffix = path.suffix.lower()
    if suffix not in (".json", ".toml"):
        raise RoutingConfigError(
            f"{path}: a routing config file must end in .json or .toml, not {suffix or 'nothing'!r}"
        )
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise RoutingConfigError(f"{path}: cannot read the routing config ({exc.strerror or exc})") from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise RoutingConfigError(f"{path}: the routing config is larger than {MAX_CONFIG_BYTES} bytes")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RoutingConfigError(
            f"{path}: the routing config is not UTF-8 text ({exc.reason} at byte {exc.start})"
        ) from None
    return _parse(text, path)


def _parse(text: str, path: Path) -> Any:
    """``text`` read as the format of ``path`` (TOML for ``.toml``, else JSON)."""
    if path.suffix.lower() == ".toml":
        if sys.version_info >= (3, 11):
            import tomllib
        else:  # pragma: no cover - Python 3.10
            import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise RoutingConfigError(f"{path}: invalid TOML ({exc})") from None
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise RoutingConfigError(f"{path}: invalid JSON ({str(exc)[:200]})") from None


def _fields_at(loc: tuple[int | str, ...]) -> tuple[str, ...]:
    """The keys allowed where an unknown key was found."""
    if len(loc) == 1:
        return tuple(ToolRoutingConfig.model_fields)
    if len(loc) == 3 and loc[0] == "profiles":
        return tuple(AgentToolOverride.model_fields)
    if len(loc) == 3 and loc[0] == "manuals":
        return tuple(ManualOverride.model_fields)
    return ()


def _key(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "(top level)"


def _line(error: ErrorDetails) -> str:
    loc = tuple(part for part in error["loc"] if part not in ("[key]",))
    kind = error["type"]
    if kind == "extra_forbidden":
        allowed = ", ".join(_fields_at(loc)) or "none"
        return f"{_key(loc)}: unknown key; allowed keys here: {allowed}"
    if kind == "enum":
        return f"{_key(loc)}: {str(error.get('input'))[:80]!r} is not a category; allowed values: {allowed_values()}"
    if kind == "literal_error":
        expected = (error.get("ctx") or {}).get("expected", "")
        return f"{_key(loc)}: {str(error.get('input'))[:80]!r} is not allowed; allowed values: {expected}"
    if kind == "string_pattern_mismatch":
        what = "an agent type" if loc[:1] == ("profiles",) and len(loc) == 2 else "a tool name"
        return (
            f"{_key(loc)}: {str(error.get('input'))[:80]!r} is not {what} "
            "(letters, digits, '_' and '-', 1-64 characters)"
        )
    message = error["msg"].removeprefix("Value error, ")
    return f"{_key(loc)}: {message}"


def _describe(exc: ValidationError, source: str) -> str:
    errors = exc.errors(include_url=False)
    lines = [_line(error) for error in errors[:_MAX_ERRORS]]
    if len(errors) > _MAX_ERRORS:
        lines.append(f"... and {len(errors) - _MAX_ERRORS} more")
    return f"{source}: invalid routing config:\n  " + "\n  ".join(lines)
