""":class:`BinaryTool`: one subprocess tool binary as a :class:`~tools.base.BaseTool`."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from tools.base import BaseTool
from tools.result import ToolResult


def free_form_schema() -> dict[str, Any]:
    """Arguments schema of a binary that does not answer ``--schema``: any object."""
    return {"type": "object", "description": "Arguments for the tool, as a JSON object."}


class BinaryTool(BaseTool[dict[str, Any], Any]):
    """A tool whose work is done by an executable speaking the binary contract.

    Built by :class:`~tools.external.executor.ToolExecutorService`; each call spawns its own
    process, so calls run concurrently and a binary replaced on disk never disturbs calls in
    flight. Arguments are validated against the binary's ``input_schema`` before it runs;
    when it declared an ``output_schema`` its output is checked against it (a mismatch is an
    ``upstream_error`` naming the binary and the field).

    Attributes:
        tags: The ``tags`` of the binary's ``--schema`` answer (for manuals and capability
            lookup); empty when it gave none.
        path: Absolute path of the executable.
    """

    name = "binary_tool"
    description = "A tool implemented by an executable."
    version = "0.0.0"
    parameters: dict[str, Any] | None = {"type": "object"}

    def __init__(
        self,
        *,
        name: str,
        description: str,
        version: str,
        parameters: Mapping[str, Any] | None,
        output_schema: Mapping[str, Any] | None,
        invoke: Callable[[dict[str, Any]], ToolResult],
        path: str,
        tags: Iterable[str] = (),
    ) -> None:
        self.name = name
        self.description = description or f"Runs the executable '{name}'."
        self.version = version
        self.parameters = dict(parameters) if parameters is not None else free_form_schema()
        self._output_schema = dict(output_schema) if output_schema is not None else None
        self._invoke = invoke
        self.path = path
        self.tags: tuple[str, ...] = tuple(dict.fromkeys(tags))

    def output_schema(self) -> dict[str, Any] | None:
        """The binary's ``output_schema`` (a fresh copy), if it declared one."""
        return dict(self._output_schema) if self._output_schema is not None else None

    def execute_internal(self, request: dict[str, Any]) -> Any:
        """Run the binary with ``request`` on stdin; returns its envelope (exit code, stderr in metadata)."""
        return self._invoke(dict(request))
