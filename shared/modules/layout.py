"""Where a module store keeps things on disk, and the records it reads back.

::

    <root>/
      index.json                      installed modules: active version, enabled (ModuleIndex)
      work/<module_id>/               the build area that build, write_code and repair edit
      reports/<module_id>.json        the last validation report of the build area
      versions/<module_id>/<vN>/      an installed version: files/ (immutable) + version.json
      drafts/<draft_id>/              a draft: files/ + draft.json
      credentials/<module_id>.token   the module's credentials, encrypted

``index.json`` is the single pointer to what is active: promote, rollback, install,
enable and disable each replace it atomically, so a reader (the context service in another
process) sees the old state or the new one, never a mix. The writers live in
``tools.builtin.modules``; this module only reads.
"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from shared.modules.manifest import MODULE_ID_RULE

__all__ = ["IndexEntry", "ModuleIndex", "ModuleLayout", "StoreError", "VersionRecord"]

logger = logging.getLogger(__name__)

_MODULE_ID = re.compile(MODULE_ID_RULE)
_VERSION_ID = re.compile(r"^v[1-9][0-9]{0,5}$")
_DRAFT_ID = re.compile(r"^d_[0-9a-f]{12}$")
MAX_RECORD_BYTES = 1024 * 1024


class StoreError(ValueError):
    """A record of the module store is missing or damaged; the message names it."""


class IndexEntry(BaseModel):
    """One installed module in ``index.json``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    active_version: str = Field(pattern=_VERSION_ID.pattern)
    category: str = Field(min_length=1, max_length=40)
    enabled: bool = False
    installed_at: str = ""


class ModuleIndex(BaseModel):
    """``index.json``: the installed modules and a generation that every change increments."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    generation: int = 0
    modules: dict[str, IndexEntry] = Field(default_factory=dict)


class VersionRecord(BaseModel):
    """``version.json`` of an installed version; ``signature`` covers every other field."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    module_id: str
    version_id: str
    files_hash: str
    created_at: str
    source: str
    signature: str = ""

    def signed_fields(self) -> dict[str, Any]:
        """The fields the signature covers."""
        return self.model_dump(exclude={"signature"})


class ModuleLayout:
    """The paths of a module store under ``root`` and readers for its records.

    Args:
        root: The store's folder (created by the writers on first use).
    """

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def __repr__(self) -> str:
        return f"ModuleLayout({str(self.root)!r})"

    # -- ids ----------------------------------------------------------------------------

    @staticmethod
    def is_module_id(value: object) -> bool:
        """Whether ``value`` is a well-formed module id."""
        return isinstance(value, str) and bool(_MODULE_ID.match(value))

    @staticmethod
    def is_version_id(value: object) -> bool:
        """Whether ``value`` is a well-formed version id (``v1``, ``v2``, ...)."""
        return isinstance(value, str) and bool(_VERSION_ID.match(value))

    @staticmethod
    def is_draft_id(value: object) -> bool:
        """Whether ``value`` is a well-formed draft id (``d_`` and 12 hex digits)."""
        return isinstance(value, str) and bool(_DRAFT_ID.match(value))

    # -- paths (ids must be checked by the caller) --------------------------------------

    @property
    def index_path(self) -> Path:
        """``index.json``."""
        return self.root / "index.json"

    @property
    def lock_path(self) -> Path:
        """The lock file writers hold."""
        return self.root / ".lock"

    def work_dir(self, module_id: str) -> Path:
        """The build area of a module."""
        return self.root / "work" / module_id

    def report_path(self, module_id: str) -> Path:
        """The last validation report of a module's build area."""
        return self.root / "reports" / f"{module_id}.json"

    def versions_dir(self, module_id: str) -> Path:
        """The folder holding a module's versions."""
        return self.root / "versions" / module_id

    def version_dir(self, module_id: str, version_id: str) -> Path:
        """One version's folder."""
        return self.versions_dir(module_id) / version_id

    def version_files(self, module_id: str, version_id: str) -> Path:
        """One version's files."""
        return self.version_dir(module_id, version_id) / "files"

    def drafts_dir(self) -> Path:
        """The folder holding every draft."""
        return self.root / "drafts"

    def draft_dir(self, draft_id: str) -> Path:
        """One draft's folder."""
        return self.drafts_dir() / draft_id

    def credential_path(self, module_id: str) -> Path:
        """A module's encrypted credentials."""
        return self.root / "credentials" / f"{module_id}.token"

    # -- readers ------------------------------------------------------------------------

    def read_index(self) -> ModuleIndex:
        """``index.json`` (empty when missing).

        Raises:
            StoreError: The file is damaged.
        """
        loaded = read_json(self.index_path, "index.json", missing={})
        try:
            return ModuleIndex.model_validate(loaded)
        except ValidationError:
            raise StoreError("index.json of the module store is damaged") from None

    def read_version(self, module_id: str, version_id: str) -> VersionRecord:
        """The record of one version.

        Raises:
            StoreError: No such version, or its record is damaged.
        """
        if not (self.is_module_id(module_id) and self.is_version_id(version_id)):
            raise StoreError(f"no version {version_id!r} of module {module_id!r}")
        path = self.version_dir(module_id, version_id) / "version.json"
        loaded = read_json(path, f"version {version_id} of {module_id}", missing=None)
        if loaded is None:
            raise StoreError(f"module {module_id!r} has no version {version_id!r}")
        try:
            record = VersionRecord.model_validate(loaded)
        except ValidationError:
            raise StoreError(f"the record of version {version_id} of {module_id} is damaged") from None
        if record.module_id != module_id or record.version_id != version_id:
            raise StoreError(f"the record of version {version_id} of {module_id} names another version")
        return record

    def version_ids(self, module_id: str) -> list[str]:
        """The module's version ids, oldest first (complete versions only)."""
        folder = self.versions_dir(module_id)
        if not self.is_module_id(module_id) or not folder.is_dir():
            return []
        ids = [p.name for p in folder.iterdir() if self.is_version_id(p.name) and (p / "version.json").is_file()]
        return sorted(ids, key=lambda v: int(v[1:]))


def read_json(path: Path, what: str, *, missing: Any) -> Any:
    """The JSON in ``path``, ``missing`` when the file does not exist.

    Raises:
        StoreError: The file is unreadable, too large or not JSON.
    """
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_RECORD_BYTES + 1)
    except FileNotFoundError:
        return missing
    except OSError as exc:
        raise StoreError(f"cannot read {what} ({exc.strerror})") from None
    if len(data) > MAX_RECORD_BYTES:
        raise StoreError(f"{what} is too large")
    try:
        return json.loads(data)
    except ValueError:
        raise StoreError(f"{what} is not valid JSON") from None
