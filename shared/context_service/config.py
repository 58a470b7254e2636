"""The context service's config file (JSON or TOML) as validated, frozen models.

Example (TOML)::

    cache_ttl_seconds = 60
    api_key_env = "TOOLDECK_CONTEXT_API_KEY"    # the key itself never lives in the file

    [places]
    home = { lat = 38.7223, lon = -9.1393 }
    office = { lat = 38.7369, lon = -9.1427, label = "Office" }

    [users.default]
    timezone = "Europe/Lisbon"

    [[users.default.adapters]]
    category = "calendar"
    platform = "ics"
    path = "calendar.ics"                        # relative to the config file

Every key of an adapter entry other than ``category``, ``platform``, ``enabled`` and
``cache_ttl_seconds`` is an option of that adapter. ``places`` and the user's ``timezone``
are handed to adapters whose options declare them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from shared.adapters.base import format_validation_error
from shared.adapters.places import Place

__all__ = ["AdapterEntry", "ConfigError", "ServiceConfig", "UserConfig", "load_config"]

_ENTRY_KEYS = frozenset({"category", "platform", "enabled", "cache_ttl_seconds"})
MAX_CONFIG_BYTES = 1024 * 1024


class ConfigError(ValueError):
    """The config file is missing, unreadable or invalid; the message says where."""


class AdapterEntry(BaseModel):
    """One enabled data source of a user."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    category: str = Field(min_length=1, max_length=40)
    platform: str = Field(min_length=1, max_length=40)
    enabled: bool = True
    cache_ttl_seconds: float | None = Field(None, ge=0, le=86_400)
    options: dict[str, Any] = Field(default_factory=dict)


class UserConfig(BaseModel):
    """One user's settings and data sources."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    timezone: str = "UTC"
    calendar_days: int = Field(7, ge=1, le=60, description="Days of events in /context.")
    finance_days: int = Field(30, ge=1, le=366, description="Days summarised in /context.")
    large_expense: float = Field(500, ge=0, description="Expenses at least this big alert.")
    default_destination: str | None = Field(None, description="Commute destination by default.")
    adapters: list[AdapterEntry] = Field(default_factory=list)

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        """Refuse an unknown zone at load time (not at the first request)."""
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(
                f"unknown time zone {value[:64]!r}; use an IANA name such as Europe/Lisbon, America/New_York or UTC"
            ) from None
        return value

    @field_validator("adapters", mode="before")
    @classmethod
    def _split_options(cls, value: Any) -> Any:
        if not isinstance(value, list):
            return value
        out = []
        for item in value:
            if isinstance(item, dict) and "options" not in item:
                entry = {k: v for k, v in item.items() if k in _ENTRY_KEYS}
                entry["options"] = {k: v for k, v in item.items() if k not in _ENTRY_KEYS}
                out.append(entry)
            else:
                out.append(item)
        return out


class ServiceConfig(BaseModel):
    """The whole service config."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    cache_ttl_seconds: float = Field(60, ge=0, le=86_400)
    api_key_env: str | None = Field(None, description="Environment variable holding the API key.")
    places: dict[str, Place] = Field(default_factory=dict)
    users: dict[str, UserConfig] = Field(default_factory=dict)


def _read(path: Path) -> dict[str, Any]:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{path.name}: cannot read config ({exc.strerror})") from None
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{path.name}: config is larger than 1 MiB")
    if path.suffix.lower() == ".toml":
        if sys.version_info >= (3, 11):
            import tomllib
        else:  # pragma: no cover - Python 3.10
            import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]
        try:
            loaded: Any = tomllib.loads(data.decode("utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{path.name}: invalid TOML ({exc})") from None
    else:
        try:
            loaded = json.loads(data)
        except ValueError as exc:
            raise ConfigError(f"{path.name}: invalid JSON ({exc})") from None
    if not isinstance(loaded, dict):
        raise ConfigError(f"{path.name}: the config must be an object/table")
    return loaded


def load_config(path: str | Path) -> ServiceConfig:
    """Load and validate a JSON (``.json``) or TOML (``.toml``) config file.

    Relative ``path`` options of adapters are resolved against the config file's folder.

    Raises:
        ConfigError: The file is unreadable, too large, not JSON/TOML, or invalid; the
            message names the file and the offending keys.
    """
    path = Path(path)
    try:
        config = ServiceConfig.model_validate(_read(path))
    except ValidationError as exc:
        raise ConfigError(f"{path.name}: {format_validation_error(exc)}") from None
    base = path.resolve().parent
    users = {}
    for user_id, user in config.users.items():
        entries = []
        for entry in user.adapters:
            options = dict(entry.options)
            file = options.get("path")
            if isinstance(file, str) and not Path(file).is_absolute():
                options["path"] = str(base / file)
            entries.append(entry.model_copy(update={"options": options}))
        users[user_id] = user.model_copy(update={"adapters": entries})
    return config.model_copy(update={"users": users})
