"""The export cache: shared read-only definitions, bounded by name set (LRU), invalidated per tool.

Tool search loads a different set of tools into a view after almost every query, and each
set is exported; the cache keeps at most ``export_cache_size`` sets (least recently used
dropped), each a list of references to one shared definition per tool and format.
"""

from __future__ import annotations

import copy
import gc
import json
import pickle
import random
import tracemalloc
from typing import Any

import pytest
from pydantic import BaseModel, Field

from tools import BaseTool, LocalToolRegistry
from tools.routing import ToolCategory, ToolManual, ToolView


class FindRequest(BaseModel):
    query: str = Field(description="What to look for.")
    limit: int = 10
    tags: list[str] = []


def _tool(index: int) -> BaseTool[Any, Any]:
    class Find(BaseTool[FindRequest, str]):
        name = f"find_{index}"
        description = f"Find things of kind {index}." + " More words." * 20
        manual = ToolManual(name=f"find_{index}", category=ToolCategory.SEARCH, risk="safe", mutating=False)

        def execute_internal(self, request: FindRequest) -> str:
            return request.query

    return Find()


@pytest.fixture(scope="module")
def tools() -> list[BaseTool[Any, Any]]:
    return [_tool(i) for i in range(120)]


def _registry(tools: list[BaseTool[Any, Any]], size: int) -> LocalToolRegistry:
    registry = LocalToolRegistry(export_cache_size=size)
    for tool in tools:
        registry.register(tool)
    return registry


def _exports_after(registry: LocalToolRegistry, sets: int, seed: int) -> None:
    pick = random.Random(seed)
    names = registry.names()
    for _ in range(sets):
        chosen = pick.sample(names, pick.randint(1, 12))
        registry.to_openai_tools(names=chosen, strict=pick.random() < 0.5)
        registry.to_anthropic_tools(names=chosen)


def test_many_distinct_name_sets_keep_entries_and_memory_bounded(tools: list[BaseTool[Any, Any]]) -> None:
    registry = _registry(tools, size=32)
    _exports_after(registry, 300, seed=1)  # every tool's definitions exist now
    stats = registry.stats()["exports"]
    assert stats["sets"] == 32 and stats["max_sets"] == 32
    assert stats["definitions"] <= 3 * len(tools)  # plain, strict and Anthropic, once per tool
    gc.collect()
    tracemalloc.start()
    try:
        _exports_after(registry, 200, seed=2)
        gc.collect()
        after_few, _ = tracemalloc.get_traced_memory()
        _exports_after(registry, 2_000, seed=3)
        gc.collect()
        after_many, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert registry.stats()["exports"]["sets"] == 32
    # Ten times the distinct sets, the same memory (a little slack for allocator noise).
    assert after_many - after_few < 256 * 1024, (after_few, after_many)


def test_tool_search_loading_set_after_set_stays_bounded(tools: list[BaseTool[Any, Any]]) -> None:
    registry = _registry(tools, size=16)
    view = ToolView(registry, "main", pinned=["find_0"])
    for i in range(1, 100):
        view.load([f"find_{i}"])
        exported = view.to_openai_tools()
        assert [t["function"]["name"] for t in exported][-2:] == [f"find_{i}", "tool_search"]
    assert registry.stats()["exports"]["sets"] <= 16


def test_the_least_recently_used_set_is_dropped_first(tools: list[BaseTool[Any, Any]]) -> None:
    registry = _registry(tools, size=2)
    a, b, c = ["find_1"], ["find_2"], ["find_3"]
    first_a = registry.to_openai_tools(names=a)[0]
    registry.to_openai_tools(names=b)
    assert registry.to_openai_tools(names=a)[0] is first_a  # a is now the most recent
    registry.to_openai_tools(names=c)  # drops b, keeps a
    assert registry.stats()["exports"]["sets"] == 2
    assert registry.to_openai_tools(names=a)[0] is first_a
    # b's list is rebuilt from the per-tool definition, which outlived the set
    assert registry.to_openai_tools(names=b)[0] is registry.to_openai_tools(names=["find_2", "find_9"])[0]


def test_definitions_are_shared_read_only_and_copy_as_plain_data(tools: list[BaseTool[Any, Any]]) -> None:
    registry = _registry(tools[:3], size=8)
    first = registry.to_mcp_tools()
    second = registry.to_mcp_tools()
    assert first is not second and first == second and first[0] is second[0]
    for change in (
        lambda: first[0].update(name="x"),
        first[0]["inputSchema"]["properties"].clear,
        lambda: first[0]["inputSchema"]["required"].append("limit"),
        lambda: first[0].setdefault("x", 1),
        lambda: first[0].__delitem__("name"),
    ):
        with pytest.raises(TypeError, match="read-only"):
            change()
    plain = copy.deepcopy(first)
    plain[0]["inputSchema"]["properties"].clear()
    assert type(plain[0]["inputSchema"]) is dict
    assert pickle.loads(pickle.dumps(first)) == first
    assert json.loads(json.dumps(first)) == second
    assert registry.to_mcp_tools()[0]["inputSchema"]["properties"]


def test_registration_invalidates_only_the_tool_concerned(tools: list[BaseTool[Any, Any]]) -> None:
    registry = _registry(tools[:3], size=8)
    before = registry.to_openai_tools()
    registry.register(_tool(0), name="find_1", replace=True)
    after = registry.to_openai_tools()
    assert after[0] is before[0] and after[2] is before[2]
    assert after[1] is not before[1] and after[1]["function"]["name"] == "find_1"
    assert after[1]["function"]["description"].startswith("Find things of kind 0.")
    registry.unregister("find_0")
    assert [t["function"]["name"] for t in registry.to_openai_tools()] == ["find_1", "find_2"]


def test_a_name_set_is_exported_in_registration_order_once_per_name(tools: list[BaseTool[Any, Any]]) -> None:
    registry = _registry(tools[:5], size=8)
    names = ["find_4", "find_1", "find_4", "nope", "find_0"]
    assert [t["name"] for t in registry.to_anthropic_tools(names=names)] == ["find_0", "find_1", "find_4"]
    registry.register(_tool(7), hidden=True)
    assert [t["name"] for t in registry.to_anthropic_tools(names=["find_7", "find_2"])] == ["find_2"]
    shown = registry.to_anthropic_tools(names=["find_7", "find_2"], include_hidden=True)
    assert [t["name"] for t in shown] == ["find_2", "find_7"]


def test_the_cache_size_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_sets"):
        LocalToolRegistry(export_cache_size=0)
