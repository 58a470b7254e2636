"""The freedom dial's table, level names, the per-run override, and the two hashes approvals
are bound to (a tool's version, a call's arguments)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tools import LocalToolRegistry
from tools.approvals import (
    DEFAULT_FREEDOM,
    FreedomLevel,
    InvalidFreedomLevelError,
    arguments_hash,
    freedom_from_env,
    tool_version_hash,
)
from tools.errors import InvalidArgumentsError
from tools.store import ToolBuilder, ToolConfig

from .conftest import LEVELS, RISKS, RUNS_FREELY, Runs, add_tools, manual


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("risk", RISKS)
def test_the_dial_table(level: FreedomLevel, risk: Any) -> None:
    assert level.requires_approval(risk) is (risk not in RUNS_FREELY[level])


def test_an_unknown_risk_counts_as_dangerous() -> None:
    assert FreedomLevel.HIGH.requires_approval("catastrophic")  # type: ignore[arg-type]


@pytest.mark.parametrize("text", ["low", "MEDIUM", " High ", FreedomLevel.LOW])
def test_level_names_parse(text: Any) -> None:
    assert FreedomLevel.parse(text).value == str(text).strip().lower()


@pytest.mark.parametrize("bad", ["", "max", "lowest", "1", None, 2, "l o w", "x" * 10_000])
def test_invalid_level_names_list_the_allowed_values(bad: Any) -> None:
    with pytest.raises(InvalidFreedomLevelError) as caught:
        FreedomLevel.parse(bad)
    message = str(caught.value)
    assert "low (nothing runs without approval)" in message
    assert "medium (only safe tools run freely)" in message
    assert "high (only dangerous tools need approval)" in message
    assert len(message) < 300  # a 10,000-character value is not echoed whole


def test_the_env_override_is_read_only_from_the_mapping_given() -> None:
    assert freedom_from_env({}) is None
    assert freedom_from_env({"TOOLDECK_FREEDOM": "  "}) is None
    assert freedom_from_env({"TOOLDECK_FREEDOM": "high"}) is FreedomLevel.HIGH
    with pytest.raises(InvalidFreedomLevelError, match="TOOLDECK_FREEDOM='hihg' is not a freedom level"):
        freedom_from_env({"TOOLDECK_FREEDOM": "hihg"})
    assert DEFAULT_FREEDOM is FreedomLevel.MEDIUM


def test_arguments_hash_is_canonical() -> None:
    as_dict = arguments_hash({"b": [1, {"y": 2, "x": "é"}], "a": None})
    assert arguments_hash('{"a": null, "b": [1, {"x": "é", "y": 2}]}') == as_dict
    assert arguments_hash(b'{"b":[1,{"y":2,"x":"\\u00e9"}],"a":null}') == as_dict
    assert arguments_hash({"a": None, "b": [1, {"x": "é", "y": 3}]}) != as_dict
    assert arguments_hash({"a": None, "b": [{"x": "é", "y": 2}, 1]}) != as_dict  # list order counts
    assert arguments_hash(None) == arguments_hash("") == arguments_hash({})
    assert len(as_dict) == 64


@pytest.mark.parametrize("bad", ["not json", "[1, 2]", '"text"', "{"])
def test_arguments_hash_refuses_what_is_not_an_object(bad: str) -> None:
    with pytest.raises(InvalidArgumentsError):
        arguments_hash(bad)


def _one(registry: LocalToolRegistry, name: str = "moderate_tool") -> str:
    tool = registry.get_tool(name)
    assert tool is not None
    return tool_version_hash(tool, manual=registry.get_manual(name))


def test_a_builtin_tools_hash_changes_with_its_schema_version_and_risk() -> None:
    registry = LocalToolRegistry()
    add_tools(registry, Runs())
    before = _one(registry)
    assert _one(registry) == before == registry.tool_version_hash("moderate_tool")
    tool = registry.get_tool("moderate_tool")
    assert tool is not None
    tool.parameters = {"type": "object", "properties": {"path": {"type": "string"}, "force": {"type": "boolean"}}}
    tool.reset_schema_cache()
    changed_schema = _one(registry)
    assert changed_schema != before
    tool.version = "9.9.9"
    assert _one(registry) != changed_schema
    registry.register(tool, manual=manual("moderate_tool", "dangerous"), replace=True)
    assert registry.tool_version_hash("moderate_tool") not in (before, changed_schema)
    assert registry.tool_version_hash("nope") is None


def test_a_preset_is_part_of_the_hash() -> None:
    registry = LocalToolRegistry()
    add_tools(registry, Runs())
    tool = registry.get_tool("safe_tool")
    assert tool is not None
    registry.register(tool, name="rooted", preset={"path": "/srv"})
    registry.register(tool, name="rooted_wider", preset={"path": "/"})
    plain = tool_version_hash(tool)
    rooted = registry.tool_version_hash("rooted")
    assert rooted is not None
    assert rooted != plain
    assert registry.tool_version_hash("rooted_wider") != rooted


def _http(**extra: Any) -> ToolConfig:
    data = {
        "id": "weather",
        "adapter_type": "http",
        "description": "Current weather for a city.",
        "http": {"base_url": "http://127.0.0.1:9", "endpoints": {"current": {"path": "/w", "query": ["city"]}}},
        **extra,
    }
    return ToolConfig.model_validate(data).with_version_hash()


def test_an_adopted_tools_hash_is_the_stores_version_hash() -> None:
    config = _http()
    builder = ToolBuilder()
    tool = builder.build(config)
    assert tool_version_hash(tool) == config.compute_version_hash() == config.version_hash
    edited = ToolConfig.model_validate(
        {**config.model_dump(), "http": {**config.model_dump()["http"], "base_url": "http://127.0.0.1:10"}}
    )
    assert tool_version_hash(builder.build(edited)) != config.version_hash
    assert tool_version_hash(tool, preset={"city": "Lisbon"}) != config.version_hash
    builder.close()


def test_hashing_does_not_choke_on_values_json_lacks() -> None:
    from datetime import date

    assert arguments_hash({"when": date(2026, 1, 2)}) == arguments_hash({"when": "2026-01-02"})
    assert json.loads(json.dumps({"ok": arguments_hash({"n": float("nan")})}))
