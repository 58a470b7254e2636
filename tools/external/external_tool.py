""":class:`ExternalTool`: an adapter plus a :class:`ToolConfig`, as an ordinary BaseTool.

Registered in a :class:`~tools.registry.LocalToolRegistry`, an external tool exports
OpenAI/Anthropic/MCP schemas and goes through the same envelope, breaker, retry, timeout and
metrics as any other tool. Errors the adapter reports keep their type, message and
retryability.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from jsonschema import validators

from tools._actions import Action, ActionSet
from tools._arguments import validate_with_schema
from tools._names import check_tool_name
from tools.base import BaseTool, check_parameters_schema
from tools.errors import ToolDefinitionError
from tools.external.adapter import ConfigurableAdapter, DiscoveringAdapter, ToolAdapter, ToolAdapterRegistry
from tools.external.config import ActionSpec, ToolConfig
from tools.schema import NullStripper


@dataclass(frozen=True)
class ExternalCall:
    """A validated call of an :class:`ExternalTool`: the action and its arguments."""

    action: str
    arguments: dict[str, Any]


class ExternalTool(BaseTool[ExternalCall, Any]):
    """A tool run by a :class:`ToolAdapter` (HTTP, CLI, MCP, binary, ...).

    The adapter is told the config (``add_tool``) when it takes configs, and asked for the
    tool's actions when it discovers them (an MCP server's tools, a binary's ``--schema``);
    otherwise the actions come from the config. With one action (or ``action=`` given) the
    tool's schema is that action's schema. With several, the tool follows the same
    multi-action rule as :class:`~tools.composite.CompositeTool` (one shared
    implementation): a flat schema with a required ``action`` enum plus the union of the
    actions' arguments; arguments of other actions sent as null are dropped, others are a
    ``validation_error`` naming what the chosen action accepts; a missing or unknown
    ``action`` is ``unknown_action`` listing every action and its arguments.

    Attributes:
        config: The tool's configuration.
        adapter: The adapter that runs it.
        tags: The config's ``capabilities`` (for manuals and capability lookup).

    Args:
        config: The tool's configuration.
        adapter: The adapter that runs it (its ``adapter_type`` should match the config).
        action: Expose only this action.
        name: Tool name shown to the model (default: ``config.name``).
        description: Description for the model (default: from the config and actions).
        call_timeout: Seconds passed to the adapter per call (default: the config's own).
        actions: The tool's actions when already known (``build_external_tools`` passes
            them to every tool it splits); default: asked from the adapter or the config.

    Raises:
        ToolDefinitionError: unknown ``action``, invalid name or argument schema, or an
            adapter that cannot describe the tool (e.g. an MCP server that does not start).
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
        actions: Sequence[ActionSpec] | None = None,
    ) -> None:
        if actions is None:
            actions = _discover(config, adapter)
        specs = {s.name: s for s in actions}
        if action is not None and action not in specs:
            raise ToolDefinitionError(f"external tool {config.id!r}: unknown action {action!r}; known: {sorted(specs)}")
        if action is None and len(specs) == 1:
            action = next(iter(specs))
        self.config = config
        self.adapter = adapter
        self.tags: tuple[str, ...] = tuple(config.capabilities)
        self._action = action
        self._call_timeout = call_timeout
        self.name = name or config.name
        check_tool_name(self.name, owner=f"external tool {config.id!r}")
        self.version = config.version
        owner = f"external tool {config.id!r}"
        self._actions: ActionSet | None = None
        if action is not None:
            spec = specs[action]
            check_parameters_schema(spec.parameters, owner=owner)
            self.parameters = dict(spec.parameters)
            default = spec.description or config.description
        else:
            for spec in specs.values():
                check_parameters_schema(spec.parameters, owner=f"{owner}, action {spec.name!r}")
            self._actions = ActionSet([_schema_action(s) for s in specs.values()], owner=owner)
            self.parameters = copy.deepcopy(self._actions.flat_schema())
            default = config.description
        self.description = description or default or f"Runs the external tool '{self.name}'."

    def validate_input(self, /, **kwargs: Any) -> ExternalCall:
        """Validate against the action's schema (picking the action first when there are several)."""
        if self._actions is None:
            return ExternalCall(self._action or "", super().validate_input(**kwargs))  # type: ignore[arg-type]
        chosen = self._actions.dispatch(kwargs, tool_name=self.name)
        return ExternalCall(chosen.action.name, chosen.request)

    def execute_internal(self, request: ExternalCall) -> Any:
        """Pass the call to the adapter and return its result envelope (metadata included)."""
        return self.adapter.execute(self.config.id, request.action, request.arguments, self._call_timeout)


def _discover(config: ToolConfig, adapter: ToolAdapter) -> list[ActionSpec]:
    """Tell the adapter about ``config``, then ask it (or the config) for the actions."""
    if isinstance(adapter, ConfigurableAdapter):
        adapter.add_tool(config)
    if isinstance(adapter, DiscoveringAdapter):
        return list(adapter.action_specs(config))
    return config.action_specs()


def _schema_action(spec: ActionSpec) -> Action:
    """An :class:`Action` validated against a hand-written JSON schema."""
    schema = spec.parameters
    validator = validators.validator_for(schema)(schema)
    strip = NullStripper(schema)

    def validate(arguments: dict[str, Any], headline: str, tool_name: str) -> dict[str, Any]:
        return validate_with_schema(
            validator, arguments, schema=schema, tool_name=tool_name, headline=headline, strip=strip
        )

    return Action(spec.name, spec.description, schema, validate)


def combined_schema(specs: Sequence[ActionSpec], *, owner: str = "external tool") -> dict[str, Any]:
    """The flat multi-action schema an :class:`ExternalTool` with these actions exports."""

    def unused(arguments: dict[str, Any], headline: str, tool_name: str) -> Any:  # pragma: no cover
        raise NotImplementedError

    actions = [Action(spec.name, spec.description, spec.parameters, unused) for spec in specs]
    return copy.deepcopy(ActionSet(actions, owner=owner).flat_schema())


def build_external_tools(
    config: ToolConfig,
    adapters: ToolAdapterRegistry,
    *,
    split_actions: bool = False,
    call_timeout: float | None = None,
) -> list[ExternalTool]:
    """The tool(s) for ``config``, run by the adapter registered for its ``adapter_type``.

    The adapter is given the config (so calls find it) and, for MCP servers and binaries,
    asked for the tool's actions: an MCP server's tools become the actions, listed once.

    Args:
        config: The tool's configuration.
        adapters: Where to find the adapter.
        split_actions: One tool per action (named ``<name>_<action>``) instead of one tool
            with an ``action`` argument.
        call_timeout: Seconds passed to the adapter per call.

    Raises:
        UnknownAdapterError: no adapter for ``config.adapter_type`` (lists the known ones).
        ToolDefinitionError: the adapter cannot describe the tool (see :class:`ExternalTool`).
    """
    adapter = adapters.get_adapter(config.adapter_type)
    specs = _discover(config, adapter)
    if not split_actions or len(specs) == 1:
        return [ExternalTool(config, adapter=adapter, call_timeout=call_timeout, actions=specs)]
    return [
        ExternalTool(
            config,
            adapter=adapter,
            action=s.name,
            name=f"{config.name}_{s.name}"[:64],
            call_timeout=call_timeout,
            actions=specs,
        )
        for s in specs
    ]
