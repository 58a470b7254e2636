"""``ModuleAdminTool`` (``module_admin``): list, enable, disable, credentials, drafts, versions.

Enabling or disabling a module replaces ``index.json``; the context service notices on its
next request and loads or drops the module, without a restart. Credentials go in
encrypted and never come back out: every result names them, none shows a value.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

from shared.modules import IndexEntry, ManifestError, ModuleAdapters, ModuleManifest
from tools.builtin.modules.admin_drafts import (
    CreateDraft,
    DiffDraft,
    EditDraft,
    ListVersions,
    PromoteDraft,
    RollbackVersion,
    ValidateDraft,
)
from tools.builtin.modules.credentials import CredentialStore
from tools.builtin.modules.drafts import DraftManager
from tools.builtin.modules.pipeline import ModuleIdRequest
from tools.builtin.modules.store import ModuleStore
from tools.builtin.modules.validation import ModuleValidator
from tools.builtin.modules.versions import VersionManager
from tools.composite import ActionStrategy, CompositeTool
from tools.errors import InvalidArgumentsError, ToolError
from tools.manual import ToolCategory, ToolManual

__all__ = ["ModuleAdminTool", "StoreCredentialsRequest"]

_CREDENTIAL_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_")

# Secret arguments are validated by the action, not by pydantic: a type error from pydantic
# would quote the value back in the error message.
SecretText = Annotated[Any, WithJsonSchema({"type": ["string", "null"]})]


class StoreCredentialsRequest(BaseModel):
    """Arguments of ``store_credentials`` (values are never shown back)."""

    model_config = ConfigDict(extra="forbid")

    module_id: str = Field(max_length=64, description="The module's id, as build returned it (e.g. 'strava_runs').")
    api_key: SecretText = Field(None, description="The API key, for modules with auth_type 'api_key'.")
    credentials_json: SecretText = Field(
        None,
        description='Several credentials as a JSON object text, e.g. \'{"username": "...", "password": "..."}\' '
        'or \'{"token": "..."}\'.',
    )


class ListModules(ActionStrategy[BaseModel]):
    """``list``: every module with its state."""

    action_name = "list"
    risk = "safe"
    mutating = False
    description = "List the modules: installed or not, enabled, active version, credentials stored, load status."
    RequestModel = None

    def __init__(
        self,
        store: ModuleStore,
        versions: VersionManager,
        credentials: CredentialStore,
        adapters: ModuleAdapters | None,
    ) -> None:
        self._store = store
        self._versions = versions
        self._credentials = credentials
        self._adapters = adapters

    def execute(self, request: BaseModel) -> dict[str, Any]:
        """One row per module."""
        index = self._store.index()
        return {"modules": [self._row(mid, index.modules.get(mid)) for mid in self._store.ids()]}

    def _row(self, module_id: str, entry: IndexEntry | None) -> dict[str, Any]:
        manifest = current_manifest(self._store, self._versions, module_id)
        report = self._store.load_report(module_id)
        row: dict[str, Any] = {
            "module_id": module_id,
            "name": manifest.name if manifest else None,
            "category": manifest.category if manifest else (entry.category if entry else None),
            "installed": entry is not None,
            "enabled": bool(entry and entry.enabled),
            "active_version": entry.active_version if entry else None,
            "versions": len(self._versions.layout.version_ids(module_id)),
            "required_credentials": list(manifest.required_credentials) if manifest else [],
            "credentials_stored": self._credentials.has(module_id),
            "last_validation": None if report is None else ("passed" if report.get("passed") else "failed"),
        }
        if entry is not None and entry.enabled and self._adapters is not None:
            status = self._adapters.status(module_id)
            row["loaded"] = status.loaded if status else False
            if status is not None and status.reason:
                row["load_error"] = status.reason
        return row


class EnableModule(ActionStrategy[ModuleIdRequest]):
    """``enable``: the context service starts serving the module."""

    action_name = "enable"
    risk = "dangerous"
    mutating = True
    description = "Enable an installed module: the context service serves its data (no restart needed)."

    def __init__(
        self,
        store: ModuleStore,
        versions: VersionManager,
        credentials: CredentialStore,
        adapters: ModuleAdapters | None,
    ) -> None:
        self._store = store
        self._versions = versions
        self._credentials = credentials
        self._adapters = adapters

    def approval_preview(self, request: ModuleIdRequest) -> str:
        """What a person approves: the code of the version enabling starts serving."""
        from tools.builtin.modules._preview import served_code

        return served_code(self._store, self._versions, request.module_id)

    def execute(self, request: ModuleIdRequest) -> dict[str, Any]:
        """Set the flag, then report whether the module loads."""
        module_id = _installed(self._store, request.module_id)
        self._store.update_index(lambda modules: _set_enabled(modules, module_id, True))
        out: dict[str, Any] = {"module_id": module_id, "enabled": True}
        if self._adapters is not None:
            status = self._adapters.status(module_id)
            out["loaded"] = bool(status and status.loaded)
            if status is not None and status.reason:
                out["load_error"] = status.reason
                out["next"] = "Fix it with a draft (create_draft, edit_draft, validate_draft, promote_draft)."
        manifest = current_manifest(self._store, self._versions, module_id)
        required = list(manifest.required_credentials) if manifest else []
        stored = self._credentials.names(module_id) if required else []
        missing = [name for name in required if name not in stored]
        if missing:
            out["credentials_missing"] = missing
            out["next"] = (
                f"Store them with module_admin(action='store_credentials', module_id='{module_id}', ...); "
                "until then its category reports that they are missing."
            )
        return out


class DisableModule(ActionStrategy[ModuleIdRequest]):
    """``disable``: the context service stops serving the module."""

    action_name = "disable"
    risk = "moderate"
    mutating = True
    description = "Disable a module: the context service stops serving it (it stays installed)."

    def __init__(self, store: ModuleStore) -> None:
        self._store = store

    def execute(self, request: ModuleIdRequest) -> dict[str, Any]:
        """Clear the flag."""
        module_id = _installed(self._store, request.module_id)
        self._store.update_index(lambda modules: _set_enabled(modules, module_id, False))
        return {"module_id": module_id, "enabled": False}


class StoreCredentials(ActionStrategy[StoreCredentialsRequest]):
    """``store_credentials``: encrypt and keep a module's credentials."""

    action_name = "store_credentials"
    risk = "dangerous"
    mutating = True
    description = (
        "Store a module's credentials, encrypted: api_key, or credentials_json for several. They are never shown again."
    )

    def __init__(self, store: ModuleStore, versions: VersionManager, credentials: CredentialStore) -> None:
        self._store = store
        self._versions = versions
        self._credentials = credentials

    def execute(self, request: StoreCredentialsRequest) -> dict[str, Any]:
        """Check the values (never echoing them), store them, name what is missing."""
        module_id = self._store.require(request.module_id)
        values = _credential_values(request.api_key, request.credentials_json)
        names = self._credentials.store(module_id, values)
        manifest = current_manifest(self._store, self._versions, module_id)
        required = list(manifest.required_credentials) if manifest else []
        return {
            "module_id": module_id,
            "stored": names,
            "missing": [name for name in required if name not in names],
        }


def current_manifest(store: ModuleStore, versions: VersionManager, module_id: str) -> ModuleManifest | None:
    """The manifest of the module's active version, else of its build area, else None."""
    entry = store.entry(module_id)
    try:
        if entry is not None:
            data = versions.files(module_id, entry.active_version).get("manifest.json", b"")
        elif store.has_work(module_id):
            data = store.files(module_id).get("manifest.json", b"")
        else:
            return None
        return ModuleManifest.from_json(data)
    except (ManifestError, ToolError):  # missing or damaged: callers report what they can
        return None


def _credential_values(api_key: object, credentials_json: object) -> dict[str, str]:
    given_key = api_key not in (None, "")
    given_json = credentials_json not in (None, "")
    if given_key and given_json:
        raise InvalidArgumentsError("Give api_key or credentials_json, not both.")
    if not (given_key or given_json):
        raise InvalidArgumentsError(
            "Give the credentials: api_key='...' for an API key, or credentials_json='{\"token\": \"...\"}'."
        )
    if given_key:
        if not isinstance(api_key, str):
            raise InvalidArgumentsError("api_key must be a string (the value you sent is not shown).")
        return {"api_key": api_key}
    if not isinstance(credentials_json, str):
        raise InvalidArgumentsError("credentials_json must be a string holding a JSON object (the value is not shown).")
    try:
        parsed = json.loads(credentials_json)
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict) or not all(isinstance(v, str) for v in parsed.values()):
        raise InvalidArgumentsError(
            "credentials_json must be a JSON object of names to strings, e.g. "
            '\'{"username": "...", "password": "..."}\' (the text you sent is not shown).'
        )
    for name in parsed:
        if not name or len(name) > 40 or not set(name) <= _CREDENTIAL_NAME_CHARS or not name[0].isalpha():
            raise InvalidArgumentsError(
                f"credential names must be lower_snake_case, e.g. 'api_key' or 'token'; got {str(name)[:40]!r}."
            )
    return {str(k): v for k, v in parsed.items()}


def _installed(store: ModuleStore, module_id: str) -> str:
    store.require(module_id)
    if store.entry(module_id) is None:
        raise InvalidArgumentsError(
            f"Module {module_id!r} is not installed. Validate it with module_pipeline(action='validate', "
            f"module_id='{module_id}'), then install it with the attestation."
        )
    return module_id


def _set_enabled(modules: dict[str, IndexEntry], module_id: str, enabled: bool) -> None:
    entry = modules.get(module_id)
    if entry is None:
        raise InvalidArgumentsError(f"Module {module_id!r} is not installed.")
    modules[module_id] = entry.model_copy(update={"enabled": enabled})


class ModuleAdminTool(CompositeTool):
    """``module_admin``: manage installed modules, their credentials, drafts and versions.

    Args:
        store: The module store.
        versions: Installed versions.
        drafts: Drafts.
        credentials: Encrypted credentials.
        validator: Validates drafts and checks attestations.
        adapters: The enabled modules as loaded (for load status; None: not reported).
    """

    name = "module_admin"
    description = (
        "Manage data-source modules: list, enable/disable (no restart), store_credentials (encrypted, never "
        "shown), change an installed module through a draft (create_draft, edit_draft, diff_draft, "
        "validate_draft, promote_draft) and list_versions / rollback_version."
    )
    version = "1.0.0"
    timeout = 180.0
    sequential = True
    manual = ToolManual(
        name="module_admin",
        display_name="Module admin",
        description=(
            "Lists, enables and disables modules, keeps their credentials, edits drafts and switches "
            "versions. Risk is per action: list, list_versions and diff_draft are safe; enable, "
            "store_credentials, edit_draft, promote_draft and rollback_version are dangerous (they "
            "change which code runs or what it can reach)."
        ),
        category=ToolCategory.FILE_WRITE,
        risk="dangerous",
        mutating=True,
        token_cost="medium",  # noqa: S106 - a cost level, not a secret
        capabilities=("modules", "data_sources", "credentials", "versions"),
    )

    def __init__(
        self,
        *,
        store: ModuleStore,
        versions: VersionManager,
        drafts: DraftManager,
        credentials: CredentialStore,
        validator: ModuleValidator,
        adapters: ModuleAdapters | None = None,
    ) -> None:
        super().__init__(
            [
                ListModules(store, versions, credentials, adapters),
                EnableModule(store, versions, credentials, adapters),
                DisableModule(store),
                StoreCredentials(store, versions, credentials),
                CreateDraft(drafts),
                EditDraft(drafts),
                DiffDraft(drafts),
                ValidateDraft(drafts, validator),
                PromoteDraft(store, drafts, versions, validator),
                ListVersions(store, versions),
                RollbackVersion(store, versions),
            ]
        )
