"""The 17 old names of the module system, each called with its old arguments."""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.tools.builtin.modules.support import RUNS_ADAPTER
from tools import LocalToolRegistry, ToolDefinitionError
from tools.builtin.modules import MODULE_ALIASES, ModuleAliasTool, ModuleToolkit

BASE = "http://127.0.0.1:8000/api/runs"

OLD_SIGNATURES: dict[str, dict[str, tuple[bool, str | None]]] = {
    "build_module": {
        "name": (True, "string"),
        "category": (True, "string"),
        "description": (False, "string"),
        "requires_api_key": (False, "boolean"),
        "api_url": (False, "string"),
        "auth_type": (False, "string"),
    },
    "write_module_code": {"module_id": (True, "string"), "adapter_code": (True, "string")},
    "repair_module": {"module_id": (True, "string")},
    "validate_module": {"module_id": (True, "string")},
    "install_module": {"module_id": (True, "string"), "validation_attestation": (False, None)},
    "uninstall_module": {"module_id": (True, "string")},
    "list_modules": {},
    "enable_module": {"module_id": (True, "string")},
    "disable_module": {"module_id": (True, "string")},
    "store_module_credentials": {
        "module_id": (True, "string"),
        "api_key": (False, None),
        "credentials_json": (False, None),
    },
    "create_draft": {"module_id": (True, "string")},
    "edit_draft": {"draft_id": (True, "string"), "file_path": (True, "string"), "content": (True, "string")},
    "diff_draft": {"draft_id": (True, "string")},
    "validate_draft": {"draft_id": (True, "string")},
    "promote_draft": {"draft_id": (True, "string")},
    "list_versions": {"module_id": (True, "string")},
    "rollback_version": {"module_id": (True, "string"), "target_version_id": (True, "string")},
}


def test_there_are_seventeen_old_names_each_with_its_old_signature(registry: LocalToolRegistry) -> None:
    assert [a.name for a in MODULE_ALIASES] == list(OLD_SIGNATURES)
    for name, params in OLD_SIGNATURES.items():
        tool = registry.get(name)
        assert tool is not None, name
        schema = tool.tool.input_schema()
        assert set(schema.get("properties", {})) == set(params), name
        assert set(schema.get("required", [])) == {p for p, (req, _) in params.items() if req}, name
        for param, (_, kind) in params.items():
            if kind is not None:
                assert schema["properties"][param].get("type") == kind, (name, param)


def test_every_alias_runs_its_action_with_its_old_arguments(registry: LocalToolRegistry, kit: ModuleToolkit) -> None:
    def call(tool: str, /, **arguments: Any) -> Any:
        result = registry.call_tool(tool, **arguments)
        assert result.ok, (tool, result.error)
        assert result.metadata["alias_of"] in ("module_pipeline", "module_admin")
        assert result.metadata["tool_name"] == tool
        return result.data

    built = call(
        "build_module",
        name="Run Log",
        category="fitness",
        description="My runs",
        requires_api_key=True,
        api_url=BASE,
        auth_type="api_key",
    )
    module_id = built["module_id"]
    assert call("write_module_code", module_id=module_id, adapter_code="import os\n" + RUNS_ADAPTER)["written"]
    assert call("validate_module", module_id=module_id)["passed"] is False
    failing = registry.call_tool("repair_module", module_id=module_id)  # no gateway configured here
    assert failing.error is not None and "needs an LLM gateway" in failing.error.message
    call("write_module_code", module_id=module_id, adapter_code=RUNS_ADAPTER)
    attestation = call("validate_module", module_id=module_id)["attestation"]
    assert call("install_module", module_id=module_id, validation_attestation=attestation)["version_id"] == "v1"
    assert call("list_modules")["modules"][0]["module_id"] == module_id
    assert call("enable_module", module_id=module_id)["enabled"] is True
    assert call("store_module_credentials", module_id=module_id, api_key="secret-value-1", credentials_json="")[
        "stored"
    ] == ["api_key"]
    assert call("store_module_credentials", module_id=module_id, credentials_json='{"api_key": "secret-value-2"}')[
        "stored"
    ] == ["api_key"]
    draft_id = call("create_draft", module_id=module_id)["draft_id"]
    call("edit_draft", draft_id=draft_id, file_path="adapter.py", content=RUNS_ADAPTER + "# v2\n")
    assert call("diff_draft", draft_id=draft_id)["changed_files"] == ["adapter.py"]
    assert call("validate_draft", draft_id=draft_id)["passed"] is True
    assert call("promote_draft", draft_id=draft_id)["version_id"] == "v2"
    assert [v["version_id"] for v in call("list_versions", module_id=module_id)["versions"]] == ["v1", "v2"]
    assert call("rollback_version", module_id=module_id, target_version_id="v1")["active_version"] == "v1"
    assert call("disable_module", module_id=module_id)["enabled"] is False
    assert call("uninstall_module", module_id=module_id)["uninstalled"] is True


def test_install_module_without_the_attestation_says_how_to_get_one(registry: LocalToolRegistry) -> None:
    registry.call_tool("build_module", name="Run Log", category="fitness", api_url=BASE)
    result = registry.call_tool("install_module", module_id="run_log")
    assert result.error is not None and result.error.type == "validation_error"
    assert result.error.message.startswith("install_module needs the attestation that validate_module returns")


def test_old_arguments_the_new_actions_refuse_are_reported_for_the_alias(registry: LocalToolRegistry) -> None:
    result = registry.call_tool("build_module", name="Run Log", category="astrology")
    assert result.error is not None and "category" in result.error.message
    extra = registry.call_tool("enable_module", module_id="x", force=True)
    assert extra.error is not None and "force" in extra.error.message


def test_an_alias_needs_its_own_target(kit: ModuleToolkit) -> None:
    with pytest.raises(ToolDefinitionError, match="maps onto 'module_pipeline'"):
        ModuleAliasTool(MODULE_ALIASES[0], target=kit.admin)


def test_the_aliases_export_strict(registry: LocalToolRegistry) -> None:
    names = {a.name for a in MODULE_ALIASES}
    assert not [t for t in registry.to_openai_tools() if t["function"]["name"] in names]  # hidden: not offered
    exported = [t for t in registry.to_openai_tools(strict=True, include_hidden=True) if t["function"]["name"] in names]
    assert len(exported) == 17
    assert all(t["function"].get("strict") for t in exported)
