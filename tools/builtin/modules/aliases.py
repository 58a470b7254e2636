"""The 17 old function names of the module system, kept callable as small alias tools.

Stored conversations replay calls such as ``build_module(name=..., category=...)``. Each
alias here has exactly its old signature as its request model (so its exported schema is
the old one, not the union of every action), and runs one action of ``module_pipeline``
or ``module_admin`` with those arguments. The result is the new tool's envelope, with
``alias_of`` (the new tool) and ``action`` added to its metadata.

==========================  ============================================
old name                    runs
==========================  ============================================
build_module                module_pipeline, action build
write_module_code           module_pipeline, action write_code
repair_module               module_pipeline, action repair
validate_module             module_pipeline, action validate
install_module              module_pipeline, action install
uninstall_module            module_pipeline, action uninstall
list_modules                module_admin, action list
enable_module               module_admin, action enable
disable_module              module_admin, action disable
store_module_credentials    module_admin, action store_credentials
create_draft                module_admin, action create_draft
edit_draft                  module_admin, action edit_draft
diff_draft                  module_admin, action diff_draft
validate_draft              module_admin, action validate_draft
promote_draft               module_admin, action promote_draft
list_versions               module_admin, action list_versions
rollback_version            module_admin, action rollback_version
==========================  ============================================
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from tools.base import BaseTool
from tools.builtin.modules.admin import SecretText
from tools.builtin.modules.report import Attestation
from tools.errors import InvalidArgumentsError, ToolDefinitionError
from tools.result import ToolResult

if TYPE_CHECKING:
    from tools.registry import LocalToolRegistry

__all__ = ["MODULE_ALIASES", "ModuleAlias", "ModuleAliasTool", "module_alias_tools", "register_module_aliases"]

_ID = "The module's id, as build_module returned it."
_DRAFT = "The draft's id, as create_draft returned it."


class _Old(BaseModel):
    model_config = ConfigDict(extra="forbid")


class BuildModuleArgs(_Old):
    """build_module(name, category, description="", requires_api_key=True, api_url="", auth_type="api_key")."""

    name: str = Field(max_length=80, description="Name of the data source, e.g. 'Strava runs'.")
    category: str = Field(max_length=40, description="Context category, e.g. 'fitness' or 'finance'.")
    description: str = Field("", max_length=1000, description="What the data source is.")
    requires_api_key: bool = Field(True, description="Whether the API needs credentials.")
    api_url: str = Field("", max_length=500, description="Base URL of the API.")
    auth_type: str = Field("api_key", max_length=20, description="'api_key', 'bearer', 'basic' or 'none'.")


class WriteModuleCodeArgs(_Old):
    """write_module_code(module_id, adapter_code)."""

    module_id: str = Field(max_length=64, description=_ID)
    adapter_code: str = Field(max_length=100_000, description="The complete adapter.py.")


class ModuleIdArgs(_Old):
    """(module_id)."""

    module_id: str = Field(max_length=64, description=_ID)


class InstallModuleArgs(_Old):
    """install_module(module_id, validation_attestation=None)."""

    module_id: str = Field(max_length=64, description=_ID)
    validation_attestation: Attestation | None = Field(
        None, description="The attestation validate_module returned, unchanged."
    )


class NoArgs(_Old):
    """No arguments."""


class StoreModuleCredentialsArgs(_Old):
    """store_module_credentials(module_id, api_key="", credentials_json="")."""

    module_id: str = Field(max_length=64, description=_ID)
    api_key: SecretText = Field("", description="The API key.")
    credentials_json: SecretText = Field("", description="Several credentials as a JSON object text.")


class DraftIdArgs(_Old):
    """(draft_id)."""

    draft_id: str = Field(max_length=64, description=_DRAFT)


class EditDraftArgs(_Old):
    """edit_draft(draft_id, file_path, content)."""

    draft_id: str = Field(max_length=64, description=_DRAFT)
    file_path: str = Field(max_length=200, description="The file inside the module, e.g. 'adapter.py'.")
    content: str = Field(max_length=200_000, description="The file's complete new content.")


class RollbackVersionArgs(_Old):
    """rollback_version(module_id, target_version_id)."""

    module_id: str = Field(max_length=64, description=_ID)
    target_version_id: str = Field(max_length=16, description="The version to make active again, e.g. 'v1'.")


@dataclass(frozen=True)
class ModuleAlias:
    """One old name: its signature, and the action it runs.

    Attributes:
        name: The old function name.
        target: ``module_pipeline`` or ``module_admin``.
        action: The action of the target.
        arguments: The old signature as a request model.
        description: For the model.
        needed: Arguments the old signature made optional but the action needs, with
            what to tell the model when one is missing.
    """

    name: str
    target: str
    action: str
    arguments: type[BaseModel]
    description: str
    needed: tuple[tuple[str, str], ...] = ()


_P, _A = "module_pipeline", "module_admin"

#: The old names, in the order of the table above.
MODULE_ALIASES: tuple[ModuleAlias, ...] = (
    ModuleAlias("build_module", _P, "build", BuildModuleArgs, "Create a new data-source module from a template."),
    ModuleAlias("write_module_code", _P, "write_code", WriteModuleCodeArgs, "Replace a module's adapter.py."),
    ModuleAlias("repair_module", _P, "repair", ModuleIdArgs, "Ask the LLM to fix a module's last failed validation."),
    ModuleAlias("validate_module", _P, "validate", ModuleIdArgs, "Validate a module (static scan, sandboxed tests)."),
    ModuleAlias(
        "install_module",
        _P,
        "install",
        InstallModuleArgs,
        "Install a validated module with the attestation validate_module returned.",
        needed=(
            (
                "validation_attestation",
                "install_module needs the attestation that validate_module returns: call "
                "validate_module(module_id=...), then install_module(module_id=..., "
                "validation_attestation=<that attestation>).",
            ),
        ),
    ),
    ModuleAlias("uninstall_module", _P, "uninstall", ModuleIdArgs, "Uninstall a module."),
    ModuleAlias("list_modules", _A, "list", NoArgs, "List the modules and their state."),
    ModuleAlias("enable_module", _A, "enable", ModuleIdArgs, "Enable an installed module."),
    ModuleAlias("disable_module", _A, "disable", ModuleIdArgs, "Disable a module."),
    ModuleAlias(
        "store_module_credentials",
        _A,
        "store_credentials",
        StoreModuleCredentialsArgs,
        "Store a module's credentials, encrypted (never shown again).",
    ),
    ModuleAlias("create_draft", _A, "create_draft", ModuleIdArgs, "Start a draft of an installed module."),
    ModuleAlias("edit_draft", _A, "edit_draft", EditDraftArgs, "Write one file of a draft."),
    ModuleAlias("diff_draft", _A, "diff_draft", DraftIdArgs, "Show a draft's changes as a unified diff."),
    ModuleAlias("validate_draft", _A, "validate_draft", DraftIdArgs, "Validate a draft."),
    ModuleAlias("promote_draft", _A, "promote_draft", DraftIdArgs, "Make a validated draft the active version."),
    ModuleAlias("list_versions", _A, "list_versions", ModuleIdArgs, "List a module's installed versions."),
    ModuleAlias(
        "rollback_version", _A, "rollback_version", RollbackVersionArgs, "Make an earlier version active again."
    ),
)


class ModuleAliasTool(BaseTool[BaseModel, ToolResult]):
    """An old module-system name, with its old signature, running one action of a new tool.

    Args:
        alias: Which old name.
        target: The new tool instance (``module_pipeline`` or ``module_admin``).

    Raises:
        ToolDefinitionError: ``target`` is not the tool the alias maps to.
    """

    def __init__(self, alias: ModuleAlias, *, target: BaseTool[Any, Any]) -> None:
        if target.name != alias.target:
            raise ToolDefinitionError(
                f"the old name {alias.name!r} maps onto {alias.target!r}; it was given the tool {target.name!r}"
            )
        self.alias = alias
        self.name = alias.name
        self.description = alias.description
        self.RequestModel = alias.arguments
        self.version = target.version
        self.timeout = target.timeout
        self.sequential = target.sequential
        # An old name of the target (alias_of): routing follows the target; risk is the action's.
        self.manual = target.get_manual().as_alias(alias.name, action=alias.action)
        self._target = target

    def execute_internal(self, request: BaseModel) -> ToolResult:
        """Run the target's action with the old arguments (nulls left out)."""
        arguments = request.model_dump(exclude_none=True)
        for name, message in self.alias.needed:
            if name not in arguments:
                raise InvalidArgumentsError(message)
        result = self._target.execute(action=self.alias.action, **arguments)
        return result.with_metadata(alias_of=self._target.name, action=self.alias.action)

    def approval_preview(self, request: BaseModel) -> str | None:
        """What the target's action would change, shown to the person asked to approve the
        call (``install_module`` and ``promote_draft``: the code diff), exactly as the new
        tool shows it; None when the action shows nothing (:mod:`tools.approvals.preview`)."""
        try:
            call = self._target.validate_input(action=self.alias.action, **request.model_dump(exclude_none=True))
        except InvalidArgumentsError:  # the call itself will be refused for them
            return None
        hook = getattr(getattr(call, "strategy", None), "approval_preview", None)
        if not callable(hook):
            return None
        preview = hook(getattr(call, "request", call))
        return None if preview is None else str(preview)


def module_alias_tools(*, pipeline: BaseTool[Any, Any], admin: BaseTool[Any, Any]) -> list[ModuleAliasTool]:
    """One alias tool per old name (register each one)."""
    targets = {pipeline.name: pipeline, admin.name: admin}
    return [ModuleAliasTool(alias, target=targets[alias.target]) for alias in MODULE_ALIASES]


def register_module_aliases(
    registry: LocalToolRegistry, *, pipeline: BaseTool[Any, Any], admin: BaseTool[Any, Any], hidden: bool = True
) -> list[str]:
    """Register every old module-system name in ``registry``; returns the names.

    By default they are hidden: callable (a stored conversation replays) but not offered to
    models, whose prompts get the two new tools instead.
    """
    tools = module_alias_tools(pipeline=pipeline, admin=admin)
    for tool in tools:
        registry.register(tool, hidden=hidden)
    return [tool.name for tool in tools]
