"""``ModulePipelineTool`` (``module_pipeline``): build, write, repair, validate, install, uninstall.

The model builds a module from a template (``build``), writes its adapter
(``write_code``), validates it (``validate``: the static scan, then the module's tests in
the sandbox; a passing run returns a signed attestation), asks for a fix when validation
fails (``repair``), and installs exactly the validated files (``install`` with that
attestation). ``uninstall`` removes the installed versions and the credentials.
"""

from __future__ import annotations

import ast
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from shared.adapters.base import format_validation_error
from shared.modules import CREDENTIALS_BY_AUTH, AuthType, ModuleManifest, files_hash, module_id_for
from tools.builtin.modules.credentials import CredentialStore
from tools.builtin.modules.drafts import DraftManager
from tools.builtin.modules.repair import ChatGateway, ModuleRepairer
from tools.builtin.modules.report import Attestation, Finding, ValidationReport
from tools.builtin.modules.scan import StaticScanner
from tools.builtin.modules.store import ModuleStore
from tools.builtin.modules.validation import ModuleValidator
from tools.builtin.modules.versions import VersionManager
from tools.composite import ActionStrategy, CompositeTool
from tools.errors import InvalidArgumentsError, PermissionDeniedError, ToolError
from tools.manual import ToolCategory, ToolManual

__all__ = [
    "BuildRequest",
    "Category",
    "InstallRequest",
    "ModuleIdRequest",
    "ModulePipelineTool",
    "WriteCodeRequest",
]

Category = Literal["calendar", "finance", "weather", "commute", "health", "fitness", "gaming", "social"]
MAX_ADAPTER_CHARS = 100_000
_MODULE_ID_HELP = "The module's id, as build returned it (e.g. 'strava_runs')."


class BuildRequest(BaseModel):
    """Arguments of ``build``."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(
        min_length=1, max_length=80, description="Name of the data source, e.g. 'Strava runs' (the id is made from it)."
    )
    category: Category = Field(description="The context category its data belongs to.")
    description: str = Field("", max_length=1000, description="What the data source is and what its API returns.")
    requires_api_key: bool = Field(True, description="Whether the API needs credentials (false: no authentication).")
    api_url: str = Field(
        "",
        max_length=500,
        description="Base URL of the API, e.g. 'https://api.example.com/v1/runs'; every request must stay under it.",
    )
    auth_type: AuthType = Field(
        "api_key",
        description="How the API authenticates: 'api_key' (X-API-Key header), 'bearer', 'basic' or 'none'.",
    )


class WriteCodeRequest(BaseModel):
    """Arguments of ``write_code``."""

    model_config = ConfigDict(extra="forbid")

    module_id: str = Field(max_length=64, description=_MODULE_ID_HELP)
    adapter_code: str = Field(
        max_length=MAX_ADAPTER_CHARS,
        description="The complete adapter.py: a BaseAdapter subclass with fetch_raw, transform, normalize_for_tools.",
    )


class ModuleIdRequest(BaseModel):
    """Arguments of the actions that take only a module id."""

    model_config = ConfigDict(extra="forbid")

    module_id: str = Field(max_length=64, description=_MODULE_ID_HELP)


class InstallRequest(BaseModel):
    """Arguments of ``install``."""

    model_config = ConfigDict(extra="forbid")

    module_id: str = Field(max_length=64, description=_MODULE_ID_HELP)
    validation_attestation: Attestation = Field(
        description="The attestation object returned by validate, copied unchanged."
    )


def report_data(report: ValidationReport, *, next_step: str) -> dict[str, Any]:
    """A validation report as the model sees it."""
    data = report.model_dump(mode="json")
    data["next"] = next_step
    return data


class BuildModule(ActionStrategy[BuildRequest]):
    """``build``: a new module from the template."""

    action_name = "build"
    risk = "safe"
    mutating = True
    description = "Create a new module (a data-source adapter) from a template; returns its id and starting code."

    def __init__(self, store: ModuleStore, reserved_ids: frozenset[str]) -> None:
        self._store = store
        self._reserved = reserved_ids

    def execute(self, request: BuildRequest) -> dict[str, Any]:
        """Scaffold the module's files in its build area."""
        auth = request.auth_type if request.requires_api_key else "none"
        if request.requires_api_key and auth == "none":
            raise InvalidArgumentsError(
                "requires_api_key=true needs auth_type 'api_key', 'bearer' or 'basic'; for an open API pass "
                "requires_api_key=false."
            )
        try:
            module_id = module_id_for(request.name)
        except ValueError as exc:
            raise InvalidArgumentsError(f"{exc}. Example: name='Strava runs'.") from None
        if module_id in self._reserved:
            module_id = f"{module_id}_module"[:40]
        try:
            manifest = ModuleManifest(
                id=module_id,
                name=request.name.strip(),
                description=request.description.strip(),
                category=request.category,
                auth_type=auth,
                required_credentials=CREDENTIALS_BY_AUTH[auth],
                api_url=request.api_url.strip(),
            )
        except ValidationError as exc:
            raise InvalidArgumentsError(f"Cannot build the module: {format_validation_error(exc)}.") from None
        from tools.builtin.modules.template import scaffold

        files = scaffold(manifest)
        self._store.create(manifest, files)
        steps = "Adapt adapter.py to the API with write_code, then validate."
        if not manifest.api_url:
            steps = "Set api_url (rebuild, or edit manifest.json), then " + steps[0].lower() + steps[1:]
        return {
            "module_id": module_id,
            "manifest": manifest.model_dump(mode="json"),
            "files": sorted(files),
            "adapter_code": files["adapter.py"],
            "next": steps,
        }


class WriteCode(ActionStrategy[WriteCodeRequest]):
    """``write_code``: replace the module's adapter.py."""

    action_name = "write_code"
    risk = "dangerous"
    mutating = True
    description = "Replace the module's adapter.py with adapter_code (then validate)."

    def __init__(self, store: ModuleStore) -> None:
        self._store = store

    def execute(self, request: WriteCodeRequest) -> dict[str, Any]:
        """Write adapter.py and say whether it parses."""
        module_id = self._store.require(request.module_id)
        self._store.files(module_id)  # the module must have a build area
        self._store.write_file(module_id, "adapter.py", request.adapter_code)
        out: dict[str, Any] = {"module_id": module_id, "written": "adapter.py", "characters": len(request.adapter_code)}
        try:
            ast.parse(request.adapter_code)
        except SyntaxError as exc:
            out["syntax_error"] = f"line {exc.lineno}: {exc.msg}"
        except (ValueError, RecursionError):
            out["syntax_error"] = "the code cannot be parsed"
        out["next"] = "Fix the syntax error, then validate." if "syntax_error" in out else "Call validate."
        return out


class RepairModule(ActionStrategy[ModuleIdRequest]):
    """``repair``: ask the LLM gateway for a fix of the last failed validation."""

    action_name = "repair"
    risk = "dangerous"
    mutating = True
    description = "Ask the LLM for a corrected adapter.py from the last failed validation (then validate again)."

    def __init__(self, store: ModuleStore, repairer: ModuleRepairer | None, scanner: StaticScanner) -> None:
        self._store = store
        self._repairer = repairer
        self._scanner = scanner

    def execute(self, request: ModuleIdRequest) -> dict[str, Any]:
        """Propose, write, and pre-scan a fix."""
        if self._repairer is None:
            raise ToolError("repair needs an LLM gateway, and none is configured; fix the code with write_code.")
        module_id = self._store.require(request.module_id)
        report = self._store.load_report(module_id)
        if report is None:
            raise InvalidArgumentsError(
                f"Module {module_id!r} has no validation report yet. Call validate(module_id='{module_id}') first."
            )
        files = self._store.files(module_id)
        if report.get("passed") and report.get("files_hash") == files_hash(files):
            raise InvalidArgumentsError(f"Module {module_id!r} passed its last validation; there is nothing to repair.")
        findings = [Finding.model_validate(f) for f in report.get("findings", []) if isinstance(f, dict)]
        old = files.get("adapter.py", b"").decode("utf-8", errors="replace")
        new = self._repairer.propose(self._store.manifest(module_id), old, findings)
        self._store.write_file(module_id, "adapter.py", new)
        _, remaining = self._scanner.scan(self._store.files(module_id))
        return {
            "module_id": module_id,
            "changed": new != old,
            "adapter_code": new,
            "static_findings": [f.model_dump(mode="json") for f in remaining],
            "next": "Call validate: the repair is not trusted until it passes.",
        }


class ValidateModule(ActionStrategy[ModuleIdRequest]):
    """``validate``: static scan, then the module's tests in the sandbox."""

    action_name = "validate"
    risk = "safe"
    mutating = True
    description = (
        "Check the module: a static code scan, then its tests in the sandbox (network off). "
        "When it passes, the result holds the attestation install needs."
    )

    def __init__(self, store: ModuleStore, validator: ModuleValidator) -> None:
        self._store = store
        self._validator = validator

    def execute(self, request: ModuleIdRequest) -> dict[str, Any]:
        """Validate the build area and keep the report."""
        module_id = self._store.require(request.module_id)
        report = self._validator.validate(module_id, self._store.files(module_id))
        self._store.save_report(module_id, report.model_dump(mode="json"))
        if report.passed:
            step = f"Call install with module_id='{module_id}' and this validation_attestation, unchanged."
        else:
            step = "Fix each finding (write_code, or repair), then validate again."
        return report_data(report, next_step=step)


class InstallModule(ActionStrategy[InstallRequest]):
    """``install``: the validated files become the module's next version."""

    action_name = "install"
    risk = "dangerous"
    mutating = True
    description = "Install the module's validated files; needs the attestation validate returned."

    def __init__(self, store: ModuleStore, versions: VersionManager, validator: ModuleValidator) -> None:
        self._store = store
        self._versions = versions
        self._validator = validator

    def approval_preview(self, request: InstallRequest) -> str:
        """What a person approves: the build area's code against the active version (all of it
        for a first install), and whether the attestation still matches it."""
        from tools.builtin.modules._preview import code_change

        module_id = self._store.require(request.module_id)
        files = self._store.files(module_id)
        text = code_change(self._store, self._versions, module_id, files, source="the build area")
        problem = self._validator.check(
            request.validation_attestation, module_id=module_id, target="module", files=files
        )
        note = "The attestation matches these files." if problem is None else f"install will refuse: {problem}."
        return f"{text}\n{note}\n"

    def execute(self, request: InstallRequest) -> dict[str, Any]:
        """Check the attestation against the files now, then snapshot them."""
        module_id = self._store.require(request.module_id)
        with self._store.locked():
            files = self._store.files(module_id)
            problem = self._validator.check(
                request.validation_attestation, module_id=module_id, target="module", files=files
            )
            if problem is not None:
                raise PermissionDeniedError(
                    f"Not installed: {problem}. Call validate(module_id='{module_id}') and pass the attestation "
                    "it returns to install, unchanged."
                )
            manifest = self._store.manifest(module_id)
            entry = self._store.entry(module_id)
            if entry is not None and self._versions.record(module_id, entry.active_version).files_hash == files_hash(
                files
            ):
                version_id, new = entry.active_version, False
            else:
                version_id, new = (
                    self._versions.create(module_id, files, category=manifest.category, source="install").version_id,
                    True,
                )
        enabled = bool(entry and entry.enabled)
        out: dict[str, Any] = {
            "module_id": module_id,
            "version_id": version_id,
            "new_version": new,
            "enabled": enabled,
        }
        if manifest.required_credentials:
            out["required_credentials"] = list(manifest.required_credentials)
        out["next"] = (
            "It serves data now."
            if enabled
            else f"Enable it with module_admin(action='enable', module_id='{module_id}')."
        )
        if manifest.required_credentials:
            out["next"] += " Store its credentials with module_admin(action='store_credentials', ...)."
        return out


class UninstallModule(ActionStrategy[ModuleIdRequest]):
    """``uninstall``: remove the installed versions, drafts and credentials."""

    action_name = "uninstall"
    risk = "dangerous"
    mutating = True
    description = "Uninstall the module: its versions, drafts and credentials are removed; the build area stays."

    def __init__(
        self, store: ModuleStore, versions: VersionManager, drafts: DraftManager, credentials: CredentialStore
    ) -> None:
        self._store = store
        self._versions = versions
        self._drafts = drafts
        self._credentials = credentials

    def execute(self, request: ModuleIdRequest) -> dict[str, Any]:
        """Take it out of the index first (it stops serving), then delete its files."""
        module_id = self._store.require(request.module_id)
        with self._store.locked():
            if self._store.entry(module_id) is None:
                raise InvalidArgumentsError(f"Module {module_id!r} is not installed.")
            self._store.update_index(lambda modules: modules.pop(module_id, None))
            removed = self._versions.remove_all(module_id)
            drafts = self._drafts.remove_for(module_id)
            credentials = self._credentials.delete(module_id)
        return {
            "module_id": module_id,
            "uninstalled": True,
            "versions_removed": removed,
            "drafts_removed": drafts,
            "credentials_removed": credentials,
            "build_area_kept": self._store.has_work(module_id),
        }


class ModulePipelineTool(CompositeTool):
    """``module_pipeline``: the model builds, validates and installs data-source modules.

    Args:
        store: The module store (build areas, reports, index).
        versions: Installed versions.
        drafts: Drafts (removed on uninstall).
        credentials: Credentials (removed on uninstall).
        validator: Static scan + sandboxed tests + attestations.
        llm_gateway: The model asked by ``repair`` (a ``ChatModel``); None: repair is off.
        reserved_ids: Platform names a module id may not take (the built-in adapters').
    """

    name = "module_pipeline"
    description = (
        "Build new data sources (modules) for the user's context: build from a template, write_code, validate "
        "(static scan + tests in a sandbox), repair with the LLM, install with the attestation validate returns, "
        "uninstall. Installed modules are enabled with module_admin and then served by user_context."
    )
    version = "1.0.0"
    timeout = 180.0
    sequential = True
    manual = ToolManual(
        name="module_pipeline",
        display_name="Module pipeline",
        description=(
            "Builds, validates and installs data-source modules. Risk is per action: build and validate "
            "are safe (tooldeck's own build area, tests in the sandbox); write_code, repair, install and "
            "uninstall are dangerous (they change the code that will run)."
        ),
        category=ToolCategory.FILE_WRITE,
        secondary_categories=(ToolCategory.EXECUTION,),
        risk="dangerous",
        mutating=True,
        token_cost="high",  # noqa: S106 - a cost level, not a secret
        capabilities=("modules", "data_sources", "adapters"),
    )

    def __init__(
        self,
        *,
        store: ModuleStore,
        versions: VersionManager,
        drafts: DraftManager,
        credentials: CredentialStore,
        validator: ModuleValidator,
        llm_gateway: ChatGateway | None = None,
        scanner: StaticScanner | None = None,
        reserved_ids: frozenset[str] = frozenset(),
    ) -> None:
        scan = scanner or StaticScanner()
        repairer = ModuleRepairer(gateway=llm_gateway) if llm_gateway is not None else None
        super().__init__(
            [
                BuildModule(store, reserved_ids),
                WriteCode(store),
                RepairModule(store, repairer, scan),
                ValidateModule(store, validator),
                InstallModule(store, versions, validator),
                UninstallModule(store, versions, drafts, credentials),
            ]
        )
