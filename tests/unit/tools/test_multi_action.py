"""One multi-action rule: CompositeTool and ExternalTool against the same table of cases."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pytest
from pydantic import BaseModel, Field

from tools import ActionStrategy, CompositeTool, LocalToolRegistry, ToolDefinitionError, ToolResult
from tools._actions import Action, ActionSet
from tools.base import BaseTool
from tools.external import ExternalTool, ToolConfig
from tools.external.config import ActionSpec
from tools.schema import model_schema


class ListRequest(BaseModel):
    prefix: str | None = Field(default=None, description="Only names starting with this.")


class EnableRequest(BaseModel):
    module: str = Field(description="Module name.")
    force: bool = False


class _Echo(ActionStrategy[Any]):
    def execute(self, request: BaseModel) -> Any:
        return {"action": self.action_name, **request.model_dump()}


class ListModules(_Echo):
    action_name = "list"
    description = "List installed modules."
    RequestModel = ListRequest


class EnableModule(_Echo):
    action_name = "enable"
    description = "Enable a module."
    RequestModel = EnableRequest


class Admin(CompositeTool):
    name = "admin"
    description = "Manage modules."

    def __init__(self) -> None:
        super().__init__([ListModules(), EnableModule()])


class EchoAdapter:
    """Answers with the action and the validated arguments it was given."""

    adapter_type = "echo"

    def __init__(self) -> None:
        self.calls: list[tuple[str, str | None, dict[str, Any]]] = []

    def execute(
        self, tool_id: str, action: str | None, params: Mapping[str, Any], timeout: float | None = None
    ) -> ToolResult:
        self.calls.append((tool_id, action, dict(params)))
        return ToolResult.success({"action": action, **params})

    def is_available(self, config: ToolConfig) -> bool:
        return True


def external_admin() -> ExternalTool:
    config = ToolConfig(id="admin", name="admin", adapter_type="echo", description="Manage modules.")
    specs = [
        ActionSpec("list", "List installed modules.", model_schema(ListRequest)),
        ActionSpec("enable", "Enable a module.", model_schema(EnableRequest)),
    ]
    return ExternalTool(config, adapter=EchoAdapter(), actions=specs)


TOOLS: dict[str, Callable[[], BaseTool[Any, Any]]] = {"composite": Admin, "external": external_admin}

ENABLE_ACCEPTS = "Accepted arguments: module (string, required); force (boolean, default false)."

#: (arguments, expected data) for calls that must succeed.
SUCCESSES: list[tuple[dict[str, Any], dict[str, Any]]] = [
    ({"action": "list"}, {"action": "list", "prefix": None}),
    ({"action": "list", "prefix": "w"}, {"action": "list", "prefix": "w"}),
    # what a strict-mode model sends: every parameter, the unused ones null
    ({"action": "list", "prefix": None, "module": None, "force": None}, {"action": "list", "prefix": None}),
    (
        {"action": "enable", "module": "web", "prefix": None, "force": None},
        {"action": "enable", "module": "web", "force": False},
    ),
    ({"action": "enable", "module": "web", "force": True}, {"action": "enable", "module": "web", "force": True}),
]

#: (arguments, error type, fragments the message must contain, same message from both tools).
#: Only the wording of a type error differs (pydantic's for CompositeTool, JSON Schema's for
#: ExternalTool): everything the dispatch rule itself says is identical.
FAILURES: list[tuple[dict[str, Any], str, list[str], bool]] = [
    (
        {"action": "enable", "module": "web", "prefix": "w"},
        "validation_error",
        [
            "Invalid arguments for action 'enable' of tool 'admin':",
            "- prefix: not an argument of action 'enable'",
            ENABLE_ACCEPTS,
        ],
        True,
    ),
    ({"action": "list", "bogus": None}, "validation_error", ["- bogus: not an argument of action 'list'"], True),
    ({"action": "list", "bogus": 1}, "validation_error", ["- bogus: not an argument of action 'list'"], True),
    (
        {"action": "enable", "force": "maybe"},
        "validation_error",
        [
            "Invalid arguments for action 'enable' of tool 'admin':",
            "- module: required argument is missing",
            "- force:",
            ENABLE_ACCEPTS,
        ],
        False,
    ),
    # A null for a required argument is reported as sent (pydantic and jsonschema word it apart).
    ({"action": "enable", "module": None}, "validation_error", ["- module: ", "(got null)"], False),
    *[
        (
            arguments,
            "unknown_action",
            [
                "Available actions:",
                "- list: List installed modules. Takes: prefix?.",
                "- enable: Enable a module. Takes: module, force?.",
                'Call again with e.g. {"action": "list", ...}.',
            ],
            True,
        )
        for arguments in ({}, {"action": None}, {"action": "explode"}, {"action": 3}, {"action": ["list"]})
    ],
]


@pytest.mark.parametrize("kind", TOOLS)
@pytest.mark.parametrize(("arguments", "expected"), SUCCESSES)
def test_successes(kind: str, arguments: dict[str, Any], expected: dict[str, Any]) -> None:
    result = TOOLS[kind]().execute(**arguments)
    assert result.error is None, result.error
    assert result.data == expected


@pytest.mark.parametrize("kind", TOOLS)
@pytest.mark.parametrize(("arguments", "error_type", "fragments", "same"), FAILURES)
def test_failures(kind: str, arguments: dict[str, Any], error_type: str, fragments: list[str], same: bool) -> None:
    result = TOOLS[kind]().execute(**arguments)
    assert result.error is not None
    assert result.error.type == error_type
    for fragment in fragments:
        assert fragment in result.error.message


@pytest.mark.parametrize(("arguments", "same"), [(case[0], case[3]) for case in FAILURES])
def test_both_tools_give_the_same_error(arguments: dict[str, Any], same: bool) -> None:
    composite, external = (TOOLS[kind]().execute(**arguments).error for kind in TOOLS)
    assert composite is not None and external is not None
    assert composite.type == external.type
    if same:
        assert composite.message == external.message
        assert composite.details == external.details


def test_unknown_action_details() -> None:
    for make in TOOLS.values():
        error = make().execute(action="explode").error
        assert error is not None
        assert error.details == {"actions": ["list", "enable"], "got": "explode"}
        assert error.message.startswith("Tool 'admin' has no action 'explode'.")
        missing = make().execute().error
        assert missing is not None
        assert missing.message.startswith("Tool 'admin' needs an 'action' argument.")


def test_same_flat_schema_and_strict_export() -> None:
    composite, external = Admin(), external_admin()
    assert (
        composite.input_schema()
        == external.input_schema()
        == {
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
                "force": {"type": "boolean", "default": False, "description": "Used by action enable (optional)."},
            },
            "required": ["action"],
            "additionalProperties": False,
        }
    )
    exports = []
    for tool in (composite, external):
        registry = LocalToolRegistry()
        registry.register(tool)
        exports.append(registry.to_openai_tools(strict=True))
    assert exports[0] == exports[1]
    assert exports[0][0]["function"]["strict"] is True


def test_open_action_passes_unknown_arguments_to_its_own_validation() -> None:
    """An action whose schema is open (an HTTP endpoint with no query/body lists) takes extra keys."""
    config = ToolConfig(id="api", name="api", adapter_type="echo")
    specs = [
        ActionSpec("get", "Get.", {"type": "object", "properties": {"id": {"type": "string"}}}),
        ActionSpec("put", "Put.", {"type": "object", "properties": {"body": {"type": "string"}}}),
    ]
    tool = ExternalTool(config, adapter=EchoAdapter(), actions=specs)
    assert "additionalProperties" not in tool.input_schema()
    assert tool.execute(action="get", id="1", page="2", body=None).data == {"action": "get", "id": "1", "page": "2"}


def test_definition_errors() -> None:
    def ok(arguments: dict[str, Any], headline: str, tool_name: str) -> Any:
        return arguments

    schema = {"type": "object", "properties": {}}
    with pytest.raises(ToolDefinitionError, match="unique, non-empty"):
        ActionSet([Action("a", "", schema, ok), Action("a", "", schema, ok)], owner="T")
    with pytest.raises(ToolDefinitionError, match="unique, non-empty"):
        ActionSet([Action("", "", schema, ok)], owner="T")
    with pytest.raises(ToolDefinitionError, match="at least one"):
        ActionSet([], owner="T")
    with pytest.raises(ToolDefinitionError, match="argument called 'action'"):
        ActionSet([Action("a", "", {"type": "object", "properties": {"action": {}}}, ok)], owner="T")
    defs_a = {"type": "object", "properties": {}, "$defs": {"X": {"type": "string"}}}
    defs_b = {"type": "object", "properties": {}, "$defs": {"X": {"type": "integer"}}}
    with pytest.raises(ToolDefinitionError, match="different schemas named 'X'"):
        ActionSet([Action("a", "", defs_a, ok), Action("b", "", defs_b, ok)], owner="T")


def test_the_rule_has_one_home() -> None:
    """Both tools dispatch through ActionSet: neither re-implements the rule."""
    for tool in (Admin(), external_admin()):
        assert isinstance(tool._actions, ActionSet)
