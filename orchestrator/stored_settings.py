"""`SettingsFile`: the settings a person stored (the console's Settings page), under the environment.

Most settings come from ``TOOLDECK_<NAME>`` variables and flags, read once at an entry point
(`Settings.from_env`). A few are meant to be set once and kept: they live in the user's
``settings.json`` (``$XDG_CONFIG_HOME/tooldeck/settings.json``, else
``~/.config/tooldeck/settings.json``), which `Settings.from_env` reads below the environment
and the flags::

    {"version": 1, "max_subagent_iterations": 5, "routing_config": "/home/ana/.config/tooldeck/routing.json"}

Only the settings in :data:`STORED_SETTINGS` may be stored, each validated by the very field
of `Settings` that the environment variable feeds (same bounds, same messages). Writes take
a file lock and replace the file atomically; a file that cannot be used is an error naming
the file and the problem, never silently replaced.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout
from pydantic import BaseModel, ConfigDict, Field

from tools._datafile import parse_document, read_text
from tools._files import atomic_write_text
from tools.errors import DataFileError

__all__ = ["SETTINGS_FILE", "STORED_SETTINGS", "SettingsFile", "SettingsFileError", "StoredSettings"]

#: The file's name in the user's configuration directory.
SETTINGS_FILE = "settings.json"
#: The settings a person may store (the rest come from the environment and flags only).
STORED_SETTINGS: tuple[str, ...] = ("max_subagent_iterations", "routing_config")
_VERSION = 1
_MAX_BYTES = 1 << 20


class SettingsFileError(DataFileError, ValueError):
    """The user's settings file cannot be used; it is left untouched (a ``ValueError``, like
    `SettingsError`, so entry points report both the same way)."""

    kind = "settings file"


class StoredSettings(BaseModel):
    """The content of the settings file (frozen); None means "not stored".

    Attributes:
        version: The file's schema version.
        max_subagent_iterations: Model turns per sub-agent (1-10).
        routing_config: The routing-overrides file (JSON or TOML) agents are routed with.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    version: int = Field(default=_VERSION, ge=1, le=_VERSION)
    max_subagent_iterations: int | None = Field(default=None, ge=1, le=10)
    routing_config: Path | None = None

    def values(self) -> dict[str, Any]:
        """The stored settings by name (those set only)."""
        return {name: getattr(self, name) for name in STORED_SETTINGS if getattr(self, name) is not None}

    def to_json_text(self) -> str:
        """Human-readable JSON with a trailing newline."""
        doc: dict[str, Any] = {"version": self.version}
        doc.update({name: str(value) if isinstance(value, Path) else value for name, value in self.values().items()})
        return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


class SettingsFile:
    """The user's stored settings.

    Args:
        path: The file (use `from_env` for the user's).
        lock_timeout: Seconds a write waits for another writer's lock.
    """

    def __init__(self, path: str | os.PathLike[str], *, lock_timeout: float = 30.0) -> None:
        self.path = Path(path)
        self._lock_timeout = lock_timeout

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> SettingsFile:
        """The user's settings file for environment ``env`` (``XDG_CONFIG_HOME``, ``HOME``)."""
        from tools.store.registry_store import user_config_dir

        return cls(user_config_dir(env) / SETTINGS_FILE)

    def __repr__(self) -> str:
        return f"SettingsFile({str(self.path)!r})"

    def load(self) -> StoredSettings:
        """The stored settings (none when the file does not exist).

        Raises:
            SettingsFileError: the file is unreadable, too large, not JSON or invalid.
        """
        text = read_text(self.path, error=SettingsFileError, max_bytes=_MAX_BYTES, empty_example='{"version": 1}')
        if text is None:
            return StoredSettings()
        return parse_document(text, self.path, StoredSettings, error=SettingsFileError, newest=_VERSION)

    def store(self, **changes: Any) -> StoredSettings:
        """Store ``changes`` (setting name -> value; None removes one) and return the result.

        Each value is validated by its `Settings` field first, so the file never holds what
        the environment variable would refuse.

        Raises:
            SettingsError: a value is out of range or malformed (the message says what a good
                value is); nothing is written.
            TypeError: a name is not one of :data:`STORED_SETTINGS` (a programming error).
            SettingsFileError: the existing file is unusable, or the lock timed out.
        """
        from orchestrator.settings import Settings

        unknown = set(changes) - set(STORED_SETTINGS)
        if unknown:
            raise TypeError(f"not stored settings: {', '.join(sorted(unknown))} (stored: {', '.join(STORED_SETTINGS)})")
        checked = Settings(**{k: v for k, v in changes.items() if v is not None})
        clean = {name: (getattr(checked, name) if value is not None else None) for name, value in changes.items()}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            with FileLock(str(self.path) + ".lock", timeout=self._lock_timeout):
                new = self.load().model_copy(update=clean)
                atomic_write_text(self.path, new.to_json_text(), mode=0o600)
        except Timeout:
            raise SettingsFileError(
                self.path, f"another tooldeck process held its lock for {self._lock_timeout:g} s; retry"
            ) from None
        except OSError as exc:
            raise SettingsFileError(self.path, f"cannot be written ({exc.strerror or exc})") from None
        return new
