"""CompositeTool: action dispatch, per-action validation, the flat schema."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic import BaseModel, Field

from tools import ActionStrategy, CompositeTool, LocalToolRegistry, ToolDefinitionError, ToolError


class ListRequest(BaseModel):
    prefix: str | None = Field(default=None, description="Only names starting with this.")


class EnableRequest(BaseModel):
    module: str = Field(description="Module name.")
    force: bool = False


class ListModules(ActionStrategy[ListRequest]):
    action_name = "list"
    description = "List installed modules."

    def __init__(self, store: list[str]) -> None:
        self.store = store

    def execute(self, request: ListRequest) -> Any:
        return [m for m in self.store if m.startswith(request.prefix or "")]


class EnableModule(ActionStrategy[EnableRequest]):
    action_name = "enable"
    description = "Enable a module."

    def __init__(self, store: list[str]) -> None:
        self.store = store

    async def execute(self, request: EnableRequest) -> Any:
        if request.module not in self.store:
            raise ToolError(f"No module {request.module!r}; installed: {', '.join(self.store)}.")
        return {"enabled": request.module, "forced": request.force}


class ModuleAdmin(CompositeTool):
    name = "module_admin"
    description = "Manage modules."

    def __init__(self, store: list[str]) -> None:
        super().__init__([ListModules(store), EnableModule(store)])


@pytest.fixture
def admin() -> ModuleAdmin:
    return ModuleAdmin(["web", "math", "weather"])


def test_dispatch_sync_and_async_actions(admin: ModuleAdmin) -> None:
    assert admin(action="list", prefix="w")["data"] == ["web", "weather"]
    assert admin(action="enable", module="math")["data"] == {"enabled": "math", "forced": False}
    assert asyncio.run(admin.aexecute(action="enable", module="web", force=True)).data["forced"] is True
    assert admin(action="enable", module="nope")["error"].startswith("No module 'nope'")


@pytest.mark.parametrize("action", [None, "explode", 3])
def test_missing_or_unknown_action_lists_actions_and_arguments(admin: ModuleAdmin, action: Any) -> None:
    kwargs = {} if action is None else {"action": action}
    out = admin(**kwargs)
    assert out["error_type"] == "unknown_action"
    assert "- list: List installed modules. Takes: prefix?." in out["error"]
    assert "- enable: Enable a module. Takes: module, force?." in out["error"]
    assert out["details"]["actions"] == ["list", "enable"]


def test_per_action_validation(admin: ModuleAdmin) -> None:
    out = admin(action="enable", force="maybe")
    assert out["error_type"] == "validation_error"
    assert out["error"].startswith("Invalid arguments for action 'enable' of tool 'module_admin':")
    assert "module: required argument is missing" in out["error"]
    assert "Accepted arguments: module (string, required); force (boolean, default false)." in out["error"]


def test_nulls_of_other_actions_dropped_non_null_rejected(admin: ModuleAdmin) -> None:
    # What a model sends under strict mode: every parameter, the unused ones null.
    assert admin(action="list", prefix=None, module=None, force=None)["status"] == "success"
    assert admin(action="enable", module="web", prefix=None, force=None)["data"]["forced"] is False
    out = admin(action="enable", module="web", prefix="w")
    assert out["error_type"] == "validation_error"
    assert "prefix: not an argument of action 'enable'" in out["error"]
    assert "Accepted arguments: module" in out["error"]
    assert "bogus" in admin(action="list", bogus=None)["error"]


def test_flat_schema(admin: ModuleAdmin) -> None:
    assert admin.input_schema() == {
        "type": "object",
        "properties": {
            "action": {
                "type": "string",
                "enum": ["list", "enable"],
                "description": "The action to perform. 'list': List installed modules. 'enable': Enable a module.",
            },
            "prefix": {
                "anyOf": [{"type": "string"}, {"type": "null"}],
                "default": None,
                "description": "Only names starting with this. Used by action list (optional).",
            },
            "module": {"type": "string", "description": "Module name. Used by action enable."},
            "force": {
                "type": "boolean",
                "default": False,
                "description": "Used by action enable (optional).",
            },
        },
        "required": ["action"],
        "additionalProperties": False,
    }


def test_strict_export_of_composite(admin: ModuleAdmin) -> None:
    registry = LocalToolRegistry()
    registry.register(admin)
    function = registry.to_openai_tools(strict=True)[0]["function"]
    assert function["strict"] is True
    params = function["parameters"]
    assert params["required"] == ["action", "prefix", "module", "force"]
    assert params["properties"]["module"]["type"] == ["string", "null"]
    # the null-filled call a strict model sends works
    call = {"action": "list", "prefix": None, "module": None, "force": None}
    assert registry("module_admin", **call)["status"] == "success"


def test_definition_errors() -> None:
    with pytest.raises(ToolDefinitionError, match="unique"):
        CompositeTool.__init__(ModuleAdmin.__new__(ModuleAdmin), [ListModules([]), ListModules([])])
    with pytest.raises(ToolDefinitionError, match="at least one"):
        CompositeTool.__init__(ModuleAdmin.__new__(ModuleAdmin), [])
