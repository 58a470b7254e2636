""":class:`ExternalTool`: an adapter plus a :class:`ToolConfig`, as an ordinary BaseTool.

Registered in a :class:`~tools.registry.LocalToolRegistry`, an external tool exports
OpenAI/Anthropic/MCP schemas and goes through the same envelope, breaker, retry, timeout and
metrics as any other tool. Errors the adapter reports keep their type, message and
retryability.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from jsonschema import validators

from tools.base import BaseTool, check_parameters_schema
from tools.errors import InvalidArgumentsError, InvalidToolNameError, ToolDefinitionError
from tools.external.adapter import ToolAdapter, ToolAdapterRegistry
from tools.external.config import ActionSpec, ToolConfig

_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
MAX_REPORTED_ERRORS = 5


def _combined_schema(specs: list[ActionSpec]) -> dict[str, Any]:
    """One flat schema: ``action`` as an enum, then the union of the actions' arguments."""
    users: dict[str, list[str]] = {}
    props: dict[str, Any] = {}
    closed = True
    for spec in specs:
        closed = closed and spec.parameters.get("additionalProperties") is False
        for pname, pschema in (spec.parameters.get("properties") or {}).items():
            users.setdefault(pname, []).append(spec.name)
            props.setdefault(pname, dict(pschema) if isinstance(pschema, Mapping) else {})
    for pname, names in users.items():
        prefix = f"(action{'s' if len(names) > 1 else ''}: {', '.join(names)}) "
        props[pname]["description"] = prefix + str(props[pname].get("description", ""))
    action_doc = "; ".join(f"'{s.name}': {s.description or 'no description'}" for s in specs)
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "action": {
                "type": "string",
                "enum": [s.name for s in specs],
                "description": f"What to do. {action_doc}",
            },
            **{k: v for k, v in props.items() if k != "action"},
        },
        "required": ["action"],
    }
    if closed:
        schema["additionalProperties"] = False
    return schema


class ExternalTool(BaseTool[dict[str, Any], Any]):
    """A tool run by a :class:`ToolAdapter` (HTTP, CLI, MCP, binary, ...).

    With one action (or ``action=`` given) the tool's schema is that action's schema. With
    several, the schema is flat: a required ``action`` enum plus the union of the actions'
    arguments; arguments of other actions sent as null are dropped, others are a
    ``validation_error`` naming what the chosen action accepts.

    Args:
        config: The tool's configuration.
        adapter: The adapter that runs it (its ``adapter_type`` should match the config).
        action: Expose only this action.
        name: Tool name shown to the model (default: ``config.name``).
        description: Description for the model (default: from the config and actions).
        call_timeout: Seconds passed to the adapter per call (default: the config's own).

    Raises:
        ToolDefinitionError: unknown ``action``, invalid name or argument schema.
    """

    name = "external_tool"
    description = "A tool that runs outside this process."
    parameters: dict[str, Any] | None = {"type": "object"}

    def __init__(
        self,
        config: ToolConfig,
        *,
        adapter: ToolAdapter,
        action: str | None = None,
        name: str | None = None,
        description: str | None = None,
        call_timeout: float | None = None,
    ) -> None:
        specs = {s.name: s for s in config.action_specs()}
        if action is not None and action not in specs:
            raise ToolDefinitionError(f"external tool {config.id!r}: unknown action {action!r}; known: {sorted(specs)}")
        if action is None and len(specs) == 1:
            action = next(iter(specs))
        self.config = config
        self.adapter = adapter
        self._action = action
        self._specs = specs
        self._validators: dict[str, Any] = {}
        self._call_timeout = call_timeout
        self.name = name or config.name
        if not _NAME.match(self.name):
            raise InvalidToolNameError(
                f"external tool {config.id!r}: name {self.name!r} must match ^[a-zA-Z0-9_-]{{1,64}}$"
            )
        self.version = config.version
        if action is not None:
            spec = specs[action]
            self.parameters = dict(spec.parameters)
            default = spec.description or config.description
        else:
            self.parameters = _combined_schema(list(specs.values()))
            default = config.description
        self.description = description or default or f"Runs the external tool '{self.name}'."
        check_parameters_schema(self.parameters, owner=f"external tool {config.id!r}")

    def execute_internal(self, request: dict[str, Any]) -> Any:
        """Pass the call to the adapter and return its result envelope (metadata included)."""
        params = dict(request)
        action = self._action
        if action is None:
            action = str(params.pop("action"))
            params = self._for_action(action, params)
        return self.adapter.execute(self.config.id, action, params, self._call_timeout)

    def _for_action(self, action: str, params: dict[str, Any]) -> dict[str, Any]:
        schema = self._specs[action].parameters
        accepted = set((schema.get("properties") or {}).keys())
        params = {k: v for k, v in params.items() if k in accepted or v is not None}
        validator = self._validators.get(action)
        if validator is None:
            validator = self._validators[action] = validators.validator_for(schema)(schema)
        errors = sorted(validator.iter_errors(params), key=lambda e: list(e.absolute_path))
        if errors:
            lines = [
                f"{'/'.join(str(p) for p in e.absolute_path) or '(arguments)'}: {e.message}"
                for e in errors[:MAX_REPORTED_ERRORS]
            ]
            raise InvalidArgumentsError(
                f"Invalid arguments for action '{action}' of tool '{self.name}': "
                + "; ".join(lines)
                + f". This action accepts: {', '.join(sorted(accepted)) or 'no arguments'}.",
                details={"action": action, "accepted": sorted(accepted)},
            )
        return params


def build_external_tools(
    config: ToolConfig,
    adapters: ToolAdapterRegistry,
    *,
    split_actions: bool = False,
    call_timeout: float | None = None,
) -> list[ExternalTool]:
    """The tool(s) for ``config``, run by the adapter registered for its ``adapter_type``.

    Args:
        config: The tool's configuration.
        adapters: Where to find the adapter.
        split_actions: One tool per action (named ``<name>_<action>``) instead of one tool
            with an ``action`` argument.
        call_timeout: Seconds passed to the adapter per call.

    Raises:
        UnknownAdapterError: no adapter for ``config.adapter_type`` (lists the known ones).
    """
    adapter = adapters.get_adapter(config.adapter_type)
    specs = config.action_specs()
    if not split_actions or len(specs) == 1:
        return [ExternalTool(config, adapter=adapter, call_timeout=call_timeout)]
    return [
        ExternalTool(
            config,
            adapter=adapter,
            action=s.name,
            name=f"{config.name}_{s.name}"[:64],
            call_timeout=call_timeout,
        )
        for s in specs
    ]
