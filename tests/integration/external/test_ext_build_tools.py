"""build_external_tools end to end: a config in, a registry call out, for every adapter type.

Each test uses the real thing: a loopback HTTP server, a real CLI program (``sort``), the
reference MCP server ``mcp-server-time`` and a tool binary on disk. Before the fix every
call answered ``unknown_tool``: the adapters were never given the configs.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tools import LocalToolRegistry
from tools.errors import ToolDefinitionError
from tools.external import (
    CLIAdapter,
    HTTPAdapter,
    ToolAdapterRegistry,
    ToolConfig,
    ToolExecutorService,
    build_external_tools,
)


def _registry(config: ToolConfig, adapters: ToolAdapterRegistry, **kwargs: Any) -> LocalToolRegistry:
    registry = LocalToolRegistry()
    for tool in build_external_tools(config, adapters, **kwargs):
        registry.register(tool)
    return registry


def test_http_config(ext_http_server: Any) -> None:
    ext_http_server.script("GET /items/7", (200, {}, b'{"id": 7, "name": "lamp"}'))
    ext_http_server.script("POST /items", (201, {}, b'{"created": true}'))
    config = ToolConfig.model_validate(
        {
            "id": "shop-api",
            "name": "shop",
            "adapter_type": "http",
            "config": {
                "base_url": ext_http_server.url,
                "endpoints": {
                    "get_item": {"path": "/items/{item_id}", "description": "Read an item."},
                    "add_item": {"method": "POST", "path": "/items", "body": ["name"], "description": "Add one."},
                },
            },
        }
    )
    adapter = HTTPAdapter()
    registry = _registry(config, ToolAdapterRegistry([adapter]))
    try:
        got = registry.call_tool("shop", action="get_item", item_id="7", name=None)
        assert got.error is None, got.error
        assert got.data == {"id": 7, "name": "lamp"}
        added = registry.call_tool("shop", action="add_item", name="desk", item_id=None)
        assert added.data == {"created": True}
        assert json.loads(ext_http_server.seen[-1].body) == {"name": "desk"}
        unknown = registry.call_tool("shop", action="delete_item")
        assert unknown.error is not None and unknown.error.type == "unknown_action"
    finally:
        adapter.close()


def test_cli_config_runs_a_real_program(tmp_path: Path) -> None:
    sort = shutil.which("sort")
    assert sort is not None
    config = ToolConfig.model_validate(
        {
            "id": "sorter",
            "name": "sort_words",
            "adapter_type": "cli",
            "config": {
                "command": [sort],
                "actions": {
                    "sort": {"args": ["--", "{*files}"], "description": "Sort the lines of files."},
                    "reverse": {"args": ["-r", "--", "{*files}"], "description": "Sort them backwards."},
                },
            },
        }
    )
    adapter = CLIAdapter(env={"PATH": os.defpath, "LC_ALL": "C"})
    registry = _registry(config, ToolAdapterRegistry([adapter]), split_actions=True)
    words = tmp_path / "words.txt"
    words.write_text("pear\napple\nfig\n")
    try:
        assert sorted(registry) == ["sort_words_reverse", "sort_words_sort"]
        result = registry.call_tool("sort_words_sort", files=[str(words)])
        assert result.error is None, result.error
        assert result.data == "apple\nfig\npear"
        assert registry.call_tool("sort_words_reverse", files=[str(words)]).data == "pear\nfig\napple"
    finally:
        adapter.close()


@pytest.fixture
def mcp_adapters() -> Iterator[ToolAdapterRegistry]:
    pytest.importorskip("mcp_server_time")
    from tools.external.mcp import MCPAdapter

    with MCPAdapter() as adapter:
        yield ToolAdapterRegistry([adapter])


TIME_SERVER = {
    "id": "clock",
    "name": "clock",
    "adapter_type": "mcp",
    "description": "Current time and time-zone conversion.",
    "config": {"command": [sys.executable, "-m", "mcp_server_time", "--local-timezone", "UTC"]},
}


def test_mcp_config_becomes_one_tool_with_the_servers_tools_as_actions(mcp_adapters: ToolAdapterRegistry) -> None:
    registry = _registry(ToolConfig.model_validate(TIME_SERVER), mcp_adapters)
    (exported,) = registry.to_openai_tools(strict=True)
    action = exported["function"]["parameters"]["properties"]["action"]
    assert action["enum"] == ["get_current_time", "convert_time"]
    now = registry.call_tool("clock", action="get_current_time", timezone="Europe/Lisbon")
    assert now.error is None, now.error
    assert now.data["timezone"] == "Europe/Lisbon"
    converted = registry.call_tool(
        "clock",
        action="convert_time",
        source_timezone="UTC",
        time="12:00",
        target_timezone="Asia/Tokyo",
        timezone=None,  # what a strict-mode model sends for the other action's argument
    )
    assert converted.error is None, converted.error
    assert converted.data["target"]["datetime"].endswith("21:00:00+09:00")


def test_mcp_config_split_into_one_tool_per_server_tool(mcp_adapters: ToolAdapterRegistry) -> None:
    registry = _registry(ToolConfig.model_validate(TIME_SERVER), mcp_adapters, split_actions=True)
    assert sorted(registry) == ["clock_convert_time", "clock_get_current_time"]
    result = registry.call_tool("clock_get_current_time", timezone="UTC")
    assert result.error is None, result.error
    assert result.data["timezone"] == "UTC"


def test_mcp_server_that_cannot_start_is_a_definition_error(tmp_path: Path) -> None:
    from tools.external.mcp import MCPAdapter

    config = ToolConfig.model_validate(
        {**TIME_SERVER, "config": {"command": [sys.executable, "-c", "raise SystemExit(3)"], "timeout": 10}}
    )
    with MCPAdapter() as adapter, pytest.raises(ToolDefinitionError, match="cannot list its tools"):
        build_external_tools(config, ToolAdapterRegistry([adapter]))


WORD_COUNT = """
import json, sys
if sys.argv[1:] == ["--schema"]:
    print(json.dumps({"name": "word_count", "description": "Count the words of a text.",
        "input_schema": {"type": "object", "properties": {"text": {"type": "string"}},
                         "required": ["text"], "additionalProperties": False},
        "output_schema": {"type": "object", "properties": {"words": {"type": "integer"}},
                          "required": ["words"]},
        "tags": ["text", "stats"]}))
    sys.exit(0)
print(json.dumps({"words": len(json.load(sys.stdin)["text"].split())}))
"""


@pytest.mark.parametrize("config_id", ["word_count", "wc-1"])
def test_binary_config(tmp_path: Path, make_script: Callable[..., Path], config_id: str) -> None:
    make_script("word_count", WORD_COUNT, tmp_path / "bin")
    with ToolExecutorService(tmp_path / "bin", poll_interval=0) as service:
        config = ToolConfig(id=config_id, name="word_count", adapter_type="binary", capabilities=["text"])
        (tool,) = build_external_tools(config, ToolAdapterRegistry([service]))
        assert tool.tags == ("text",)
        assert tool.input_schema()["required"] == ["text"]
        registry = LocalToolRegistry()
        registry.register(tool)
        result = registry.call_tool("word_count", text="one two three")
        assert result.error is None, result.error
        assert result.data == {"words": 3}
        assert service.status()["word_count"].calls == 1


def test_binary_config_for_a_missing_binary_is_a_definition_error(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    with ToolExecutorService(tmp_path / "bin", poll_interval=0) as service:
        config = ToolConfig(id="nope", name="nope", adapter_type="binary")
        with pytest.raises(ToolDefinitionError, match="no runnable tool binary named 'nope'"):
            build_external_tools(config, ToolAdapterRegistry([service]))
