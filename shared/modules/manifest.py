"""A module's manifest (``manifest.json``): what the module is and what it needs.

A module is a data-source adapter the model wrote: ``adapter.py`` (a
:class:`~shared.adapters.base.BaseAdapter` subclass), ``manifest.json`` (this model) and
``test_*.py`` files (``unittest``). The manifest names the module (``id`` is also its
platform in the context service), its context ``category``, how it authenticates
(``auth_type`` and the names of the ``required_credentials``) and the one base URL its
adapter may reach (``api_url``).
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from shared.adapters.base import format_validation_error
from shared.adapters.registry import KNOWN_CATEGORIES

__all__ = [
    "CREDENTIALS_BY_AUTH",
    "MODULE_ID_RULE",
    "AuthType",
    "ManifestError",
    "ModuleManifest",
    "module_id_for",
]

#: Module ids: lower-case letters, digits and underscores, 2-40 characters, a letter first.
MODULE_ID_RULE = r"^[a-z][a-z0-9_]{1,39}$"
_MODULE_ID = re.compile(MODULE_ID_RULE)
_CREDENTIAL_NAME = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
_MAX_MANIFEST_BYTES = 16 * 1024

AuthType = Literal["none", "api_key", "bearer", "basic"]

#: The credentials each kind of authentication needs, by name.
CREDENTIALS_BY_AUTH: dict[str, tuple[str, ...]] = {
    "none": (),
    "api_key": ("api_key",),
    "bearer": ("token",),
    "basic": ("username", "password"),
}


class ManifestError(ValueError):
    """``manifest.json`` is missing, not JSON, or invalid; the message says which field."""


class ModuleManifest(BaseModel):
    """The contents of a module's ``manifest.json`` (frozen; unknown keys are refused).

    Attributes:
        id: The module id (:data:`MODULE_ID_RULE`); also its platform name.
        name: A human-readable name.
        description: What the data source is.
        category: The context category it feeds (one of ``KNOWN_CATEGORIES``).
        auth_type: ``none``, ``api_key``, ``bearer`` or ``basic``.
        required_credentials: Names of the credentials the adapter reads from
            ``config["credentials"]``.
        api_url: The base URL the adapter may reach (http or https, no user name or
            password in it); every request must stay under it.
        version: The module's own version, ``MAJOR.MINOR.PATCH``.
        adapter_class: The adapter class in ``adapter.py``.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=MODULE_ID_RULE)
    name: str = Field(min_length=1, max_length=80)
    description: str = Field("", max_length=1000)
    category: str
    auth_type: AuthType = "none"
    required_credentials: tuple[str, ...] = Field((), max_length=10)
    api_url: str = Field("", max_length=500)
    version: str = Field("0.1.0", pattern=r"^\d{1,4}\.\d{1,4}\.\d{1,4}$")
    adapter_class: str = Field("Adapter", pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")

    @field_validator("category")
    @classmethod
    def _known_category(cls, value: str) -> str:
        if value not in KNOWN_CATEGORIES:
            raise ValueError(f"unknown category {value[:40]!r}; use one of {', '.join(KNOWN_CATEGORIES)}")
        return value

    @field_validator("required_credentials")
    @classmethod
    def _credential_names(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for name in value:
            if not _CREDENTIAL_NAME.match(name):
                raise ValueError(f"credential name {name[:40]!r} must be lower_snake_case, e.g. 'api_key'")
        return value

    @field_validator("api_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        if not value:
            return value
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("api_url must be an http:// or https:// URL, e.g. 'https://api.example.com/v1'")
        if parts.username or parts.password:
            raise ValueError("api_url must not carry a user name or password; store those as credentials")
        if parts.fragment:
            raise ValueError("api_url must not have a #fragment")
        return value

    @classmethod
    def from_json(cls, data: bytes | str) -> ModuleManifest:
        """Parse ``manifest.json``.

        Raises:
            ManifestError: Not JSON, too large, or invalid (the message names the fields).
        """
        raw = data.encode() if isinstance(data, str) else data
        if len(raw) > _MAX_MANIFEST_BYTES:
            raise ManifestError(f"manifest.json is larger than {_MAX_MANIFEST_BYTES // 1024} KiB")
        try:
            loaded: Any = json.loads(raw)
        except ValueError as exc:
            raise ManifestError(f"manifest.json is not valid JSON ({exc})") from None
        if not isinstance(loaded, dict):
            raise ManifestError("manifest.json must hold a JSON object")
        try:
            return cls.model_validate(loaded)
        except ValidationError as exc:
            raise ManifestError(f"manifest.json: {format_validation_error(exc)}") from None

    def to_json(self) -> str:
        """The manifest as pretty JSON text (what ``manifest.json`` holds)."""
        return json.dumps(self.model_dump(mode="json"), indent=2) + "\n"

    @property
    def missing_fields(self) -> list[str]:
        """Fields a module needs before it can be validated (``api_url`` when empty)."""
        return [] if self.api_url else ["api_url"]


def module_id_for(name: str) -> str:
    """A module id made from a name: ``"Strava Runs!"`` -> ``"strava_runs"``.

    Raises:
        ValueError: The name has no letter or digit to make an id from.
    """
    slug = re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")
    if not slug:
        raise ValueError(f"cannot make a module id from the name {name[:80]!r}; use letters or digits")
    if not slug[0].isalpha():
        slug = "m_" + slug
    slug = slug[:40].rstrip("_")
    if len(slug) < 2:
        slug = (slug + "_module")[:40]
    if not _MODULE_ID.match(slug):  # pragma: no cover - the steps above always make a valid id
        raise ValueError(f"cannot make a module id from the name {name[:80]!r}")
    return slug
