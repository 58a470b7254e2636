"""``AdoptedTool``: a tool declared as data, cheap to build, run by its adapter on demand.

Building 500 adopted tools must not pay for 500 JSON-schema meta-schema checks and 500
adapter registrations up front: an ``AdoptedTool`` knows its name, description, schema and
manual from its config at once, and creates the adapter-backed tool (an
:class:`~tools.external.ExternalTool`) on its first call. Arguments are validated against
the schema before that, like for every tool.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from tools.base import BaseTool
from tools.errors import ToolDefinitionError, ToolError
from tools.external.config import ToolConfig as ExternalConfig
from tools.external.external_tool import combined_schema
from tools.store.config import ToolConfig


def schema_of(external: ExternalConfig) -> dict[str, Any]:
    """The argument schema an :class:`~tools.external.ExternalTool` of ``external`` exports."""
    specs = external.action_specs()
    if len(specs) == 1:
        return dict(specs[0].parameters)
    return combined_schema(specs)


def description_of(config: ToolConfig, external: ExternalConfig) -> str:
    """The description shown to the model: the config's, else its only action's."""
    if config.description:
        return config.description
    specs = external.action_specs()
    if len(specs) == 1 and specs[0].description:
        return specs[0].description
    return f"Runs the {config.adapter_type} tool '{config.id}'."


class AdoptedTool(BaseTool[dict[str, Any], Any]):
    """An adopted HTTP, CLI or MCP tool; the adapter-backed tool is made on first use.

    Args:
        config: The tool's configuration.
        external: The same configuration in the adapters' form.
        make: Creates the adapter-backed tool (called once, on the first call).
    """

    name = "adopted_tool"
    description = "A tool adopted from the tooldeck registry."
    parameters: dict[str, Any] | None = {"type": "object"}

    def __init__(
        self,
        config: ToolConfig,
        external: ExternalConfig,
        make: Callable[[], BaseTool[dict[str, Any], Any]],
    ) -> None:
        self.name = config.id
        self.description = description_of(config, external)
        self.version = (config.version_hash or config.compute_version_hash())[:12]
        self.parameters = schema_of(external)
        self.config = config
        self._make = make
        self._inner: BaseTool[dict[str, Any], Any] | None = None
        self._lock = threading.Lock()

    def delegate(self) -> BaseTool[dict[str, Any], Any]:
        """The adapter-backed tool (created now if needed).

        Raises:
            ToolDefinitionError: the config cannot be turned into a tool.
        """
        with self._lock:
            if self._inner is None:
                self._inner = self._make()
            return self._inner

    def validate_input(self, /, **kwargs: Any) -> Any:
        """Validate as the adapter-backed tool does (one action, or the action chosen)."""
        return self._inner_or_error().validate_input(**kwargs)

    def execute_internal(self, request: Any) -> Any:
        """Run the call through the adapter-backed tool (its envelope is kept)."""
        return self._inner_or_error().execute_internal(request)

    def _inner_or_error(self) -> BaseTool[Any, Any]:
        try:
            return self.delegate()
        except ToolDefinitionError as exc:
            raise ToolError(f"Tool '{self.name}' is misconfigured and cannot run: {exc}") from None

    def __repr__(self) -> str:
        return f"AdoptedTool({self.name!r}, adapter_type={self.config.adapter_type!r})"
