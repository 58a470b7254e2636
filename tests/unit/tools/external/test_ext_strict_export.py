"""External tools that take any arguments export non-strict, with a warning, never as `{}`-only."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import pytest

from tools import LocalToolRegistry, ToolResult, UnsupportedSchemaError
from tools.base import BaseTool
from tools.external import BinaryTool, ExternalTool, ToolConfig
from tools.external.binary_tool import free_form_schema


class NullAdapter:
    adapter_type = "custom"

    def execute(
        self, tool_id: str, action: str | None, params: Mapping[str, Any], timeout: float | None = None
    ) -> ToolResult:
        return ToolResult.success(dict(params))

    def is_available(self, config: ToolConfig) -> bool:
        return True


def _binary_without_schema() -> BinaryTool:
    return BinaryTool(
        name="plain",
        description="A binary that does not answer --schema.",
        version="0.0.0",
        parameters=None,
        output_schema=None,
        invoke=ToolResult.success,
        path="/bin/plain",
    )


def _external_without_parameters() -> ExternalTool:
    return ExternalTool(ToolConfig(id="plain", name="plain", adapter_type="custom"), adapter=NullAdapter())


@pytest.mark.parametrize("make", [_binary_without_schema, _external_without_parameters])
def test_free_form_tool_exports_non_strict_with_a_warning(make: Any, caplog: pytest.LogCaptureFixture) -> None:
    tool: BaseTool[Any, Any] = make()
    registry = LocalToolRegistry()
    registry.register(tool)
    with caplog.at_level(logging.WARNING, logger="tools.schema.export"):
        (exported,) = registry.to_openai_tools(strict=True)
    function = exported["function"]
    assert function["strict"] is False
    assert function["parameters"] == tool.input_schema()  # not the closed `{}`-only object
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("'plain' exported with strict=false" in w and "could only ever send {}" in w for w in warnings)
    # the model can still send arguments, and they reach the tool
    assert registry.call_tool("plain", anything=1).data == {"anything": 1}
    with pytest.raises(UnsupportedSchemaError, match="'plain'"):
        registry.to_openai_tools(strict=True, on_unsupported="raise")


def test_free_form_schema_is_what_binaries_without_schema_get() -> None:
    assert _binary_without_schema().input_schema() == free_form_schema()


def test_a_tool_that_says_it_takes_no_arguments_stays_strict() -> None:
    config = ToolConfig(
        id="ping",
        name="ping",
        adapter_type="custom",
        parameters={"type": "object", "properties": {}, "additionalProperties": False},
    )
    registry = LocalToolRegistry()
    registry.register(ExternalTool(config, adapter=NullAdapter()))
    (exported,) = registry.to_openai_tools(strict=True)
    assert exported["function"]["strict"] is True
    assert exported["function"]["parameters"] == {
        "type": "object",
        "properties": {},
        "required": [],
        "additionalProperties": False,
    }
