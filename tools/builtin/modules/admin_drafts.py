"""The draft and version actions of ``module_admin``."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from shared.modules import ManifestError, ModuleManifest
from tools.builtin.modules.drafts import MAX_CONTENT_CHARS, DraftManager
from tools.builtin.modules.pipeline import ModuleIdRequest, report_data
from tools.builtin.modules.report import Attestation
from tools.builtin.modules.store import ModuleStore
from tools.builtin.modules.validation import ModuleValidator
from tools.builtin.modules.versions import VersionManager
from tools.composite import ActionStrategy
from tools.errors import InvalidArgumentsError, PermissionDeniedError

__all__ = [
    "CreateDraft",
    "DiffDraft",
    "DraftIdRequest",
    "EditDraft",
    "EditDraftRequest",
    "ListVersions",
    "PromoteDraft",
    "RollbackRequest",
    "RollbackVersion",
    "ValidateDraft",
]

_DRAFT_ID_HELP = "The draft's id, as create_draft returned it (e.g. 'd_0123456789ab')."


class DraftIdRequest(BaseModel):
    """Arguments of the actions that take only a draft id."""

    model_config = ConfigDict(extra="forbid")

    draft_id: str = Field(max_length=64, description=_DRAFT_ID_HELP)


class EditDraftRequest(BaseModel):
    """Arguments of ``edit_draft``."""

    model_config = ConfigDict(extra="forbid")

    draft_id: str = Field(max_length=64, description=_DRAFT_ID_HELP)
    file_path: str = Field(
        max_length=200, description="The file inside the module, e.g. 'adapter.py' or 'test_adapter.py'."
    )
    content: str = Field(max_length=MAX_CONTENT_CHARS, description="The file's complete new content.")


class RollbackRequest(BaseModel):
    """Arguments of ``rollback_version``."""

    model_config = ConfigDict(extra="forbid")

    module_id: str = Field(max_length=64, description="The module's id, as build returned it (e.g. 'strava_runs').")
    target_version_id: str = Field(max_length=16, description="The version to make active again, e.g. 'v1'.")


class CreateDraft(ActionStrategy[ModuleIdRequest]):
    """``create_draft``: a copy of the active version to change."""

    action_name = "create_draft"
    risk = "safe"
    mutating = True
    description = "Start a draft of an installed module: a copy of its active version to change safely."

    def __init__(self, drafts: DraftManager) -> None:
        self._drafts = drafts

    def execute(self, request: ModuleIdRequest) -> dict[str, Any]:
        """Copy the active version into a new draft."""
        info = self._drafts.create(request.module_id)
        return {
            "draft_id": info.draft_id,
            "module_id": info.module_id,
            "base_version": info.base_version,
            "files": sorted(self._drafts.files(info.draft_id)),
            "next": "Change files with edit_draft, check them with diff_draft and validate_draft, then promote_draft.",
        }


class EditDraft(ActionStrategy[EditDraftRequest]):
    """``edit_draft``: write one file of a draft."""

    action_name = "edit_draft"
    risk = "dangerous"
    mutating = True
    description = "Write one file of a draft (file_path inside the module, the complete content)."

    def __init__(self, drafts: DraftManager) -> None:
        self._drafts = drafts

    def execute(self, request: EditDraftRequest) -> dict[str, Any]:
        """Write the file (paths outside the module are refused)."""
        return self._drafts.edit(request.draft_id, request.file_path, request.content)


class DiffDraft(ActionStrategy[DraftIdRequest]):
    """``diff_draft``: what the draft changes."""

    action_name = "diff_draft"
    risk = "safe"
    mutating = False
    description = "Show a draft's changes as a unified diff against the version it started from."

    def __init__(self, drafts: DraftManager) -> None:
        self._drafts = drafts

    def execute(self, request: DraftIdRequest) -> dict[str, Any]:
        """The unified diff."""
        return self._drafts.diff(request.draft_id)


class ValidateDraft(ActionStrategy[DraftIdRequest]):
    """``validate_draft``: validate a draft's files."""

    action_name = "validate_draft"
    risk = "safe"
    mutating = True
    description = "Validate a draft like validate does a module (static scan, then its tests in the sandbox)."

    def __init__(self, drafts: DraftManager, validator: ModuleValidator) -> None:
        self._drafts = drafts
        self._validator = validator

    def execute(self, request: DraftIdRequest) -> dict[str, Any]:
        """Validate and keep the report with the draft."""
        info = self._drafts.info(request.draft_id)
        files = self._drafts.files(info.draft_id)
        report = self._validator.validate(info.module_id, files, target=f"draft:{info.draft_id}")
        self._drafts.save_report(info.draft_id, report.model_dump(mode="json"))
        step = (
            f"Call promote_draft(draft_id='{info.draft_id}')."
            if report.passed
            else "Fix each finding with edit_draft, then validate_draft again."
        )
        return report_data(report, next_step=step)


class PromoteDraft(ActionStrategy[DraftIdRequest]):
    """``promote_draft``: a validated draft becomes the module's next version."""

    action_name = "promote_draft"
    risk = "dangerous"
    mutating = True
    description = "Make a validated draft the module's new active version (atomic; the draft is then removed)."

    def __init__(
        self, store: ModuleStore, drafts: DraftManager, versions: VersionManager, validator: ModuleValidator
    ) -> None:
        self._store = store
        self._drafts = drafts
        self._versions = versions
        self._validator = validator

    def approval_preview(self, request: DraftIdRequest) -> str:
        """What a person approves: the draft's code against the module's active version."""
        from tools.builtin.modules._preview import code_change

        info = self._drafts.info(request.draft_id)
        files = self._drafts.files(info.draft_id)
        return code_change(self._store, self._versions, info.module_id, files, source=f"draft {info.draft_id}")

    def execute(self, request: DraftIdRequest) -> dict[str, Any]:
        """Check the draft's attestation against its files now, then snapshot and switch."""
        with self._store.locked():
            info = self._drafts.info(request.draft_id)
            refusal = (
                f"Not promoted: run validate_draft(draft_id='{info.draft_id}') and fix what it finds; "
                "promote needs a passing validation of the draft's current files"
            )
            report = info.report or {}
            try:
                attestation = Attestation.model_validate(report.get("attestation"))
            except ValidationError:
                raise PermissionDeniedError(refusal + ".") from None
            files = self._drafts.files(info.draft_id)
            problem = self._validator.check(
                attestation, module_id=info.module_id, target=f"draft:{info.draft_id}", files=files
            )
            if problem is not None:
                raise PermissionDeniedError(f"{refusal} ({problem}).")
            entry = self._store.entry(info.module_id)
            if entry is None:
                raise InvalidArgumentsError(f"Module {info.module_id!r} is no longer installed; the draft is stale.")
            try:
                manifest = ModuleManifest.from_json(files.get("manifest.json", b""))
            except ManifestError as exc:  # pragma: no cover - validation checked the manifest
                raise InvalidArgumentsError(str(exc)) from None
            record = self._versions.create(
                info.module_id, files, category=manifest.category, source=f"draft {info.draft_id}"
            )
            self._drafts.remove(info.draft_id)
        return {
            "module_id": info.module_id,
            "version_id": record.version_id,
            "previous_version": entry.active_version,
            "draft_id": info.draft_id,
            "promoted": True,
        }


class ListVersions(ActionStrategy[ModuleIdRequest]):
    """``list_versions``: a module's installed versions."""

    action_name = "list_versions"
    risk = "safe"
    mutating = False
    description = "List a module's installed versions and which one is active."

    def __init__(self, store: ModuleStore, versions: VersionManager) -> None:
        self._store = store
        self._versions = versions

    def execute(self, request: ModuleIdRequest) -> dict[str, Any]:
        """Oldest first."""
        module_id = self._store.require(request.module_id)
        return {
            "module_id": module_id,
            "active_version": self._versions.active(module_id),
            "versions": self._versions.list_versions(module_id),
        }


class RollbackVersion(ActionStrategy[RollbackRequest]):
    """``rollback_version``: make an earlier version active again."""

    action_name = "rollback_version"
    risk = "dangerous"
    mutating = True
    description = "Make an earlier version active again (atomic; exactly that version's files are served)."

    def __init__(self, store: ModuleStore, versions: VersionManager) -> None:
        self._store = store
        self._versions = versions

    def execute(self, request: RollbackRequest) -> dict[str, Any]:
        """Verify the version's files, then switch the index to it."""
        module_id = self._store.require(request.module_id)
        previous = self._versions.rollback(module_id, request.target_version_id)
        return {"module_id": module_id, "active_version": request.target_version_id, "previous_version": previous}
