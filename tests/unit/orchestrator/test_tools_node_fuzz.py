"""Hostile tool calls through ToolsNode: nothing raises, every call id is answered once, in order.

The arguments and names a model (or an attacker steering one) can send: JSON nested
thousands of levels deep, lone surrogates, NaN and Infinity, 10 MB strings, non-strings,
and random text. Each tool message must be strict JSON (no NaN) that can be sent over the
wire (encodable as UTF-8).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from orchestrator.graph import ToolsNode
from tools import BaseTool, LocalToolRegistry

DEEP = 5000
HUGE = "x" * 10_000_000
HOSTILE_ARGUMENTS: list[Any] = [
    "[" * DEEP + "]" * DEEP,
    '{"a":' * DEEP + "1" + "}" * DEEP,
    '{"text": ' + "[" * DEEP + "]" * DEEP + "}",
    '{"a": NaN, "b": Infinity, "c": -Infinity}',
    '{"text": "\\ud800 lone surrogate escape"}',
    '{"text": "\ud800 raw lone surrogate"}',
    "\udcff",
    b'{"text": "\xff\xfe bytes that are not UTF-8"}',
    '{"text": "' + HUGE + '"}',
    HUGE,
    {"text": float("nan")},
    {"text": "\ud800"},
    {"nested": {"deeper": [1, 2, {"x": None}]}},
    ["not", "an", "object"],
    12345,
    None,
    "",
    "null",
    '"just a string"',
]
HOSTILE_NAMES: list[Any] = ["echo", "add", "", "\ud800", "n" * 100_000, None, 7, "../../etc/passwd", "add\x00"]


class EchoTool(BaseTool[Any, Any]):
    """Returns its (open-schema) arguments, so hostile input flows into results too."""

    name = "echo"
    description = "Echo the arguments."
    parameters = {"type": "object", "properties": {"text": {"type": "string"}}}

    def execute_internal(self, request: Any) -> Any:
        return request


def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: First.
        b: Second.
    """
    return a + b


@pytest.fixture(scope="module")
def node() -> Iterator[ToolsNode]:
    registry = LocalToolRegistry()
    registry.register(EchoTool())
    registry.register(add)
    with ToolsNode(registry, max_output_chars=4000) as node:
        yield node


def _strict(value: str) -> Any:
    raise ValueError(f"non-standard JSON constant {value}")


def check_update(calls: list[dict[str, Any]], update: Mapping[str, Any]) -> None:
    ids = [c["id"] for c in calls]
    assert [m["tool_call_id"] for m in update["messages"]] == ids
    assert [r["tool_call_id"] for r in update["tool_results"]] == ids
    for message in update["messages"]:
        assert message["role"] == "tool"
        content = message["content"]
        assert len(content) <= 4000
        content.encode("utf-8")  # no lone surrogates: it must go over the wire
        body = json.loads(content, parse_constant=_strict)
        assert body["status"] in ("success", "error")
    for record in update["tool_results"]:
        assert record["status"] in ("success", "error")


def calls_of(pairs: list[tuple[Any, Any]]) -> list[dict[str, Any]]:
    return [
        {"id": f"c{i}", "type": "function", "function": {"name": name, "arguments": arguments}}
        for i, (name, arguments) in enumerate(pairs)
    ]


def state_of(calls: list[dict[str, Any]]) -> dict[str, Any]:
    return {"messages": [{"role": "assistant", "content": None, "tool_calls": calls}]}


@pytest.mark.parametrize("entry", ["sync", "async"])
def test_every_known_hostile_argument_is_answered(node: ToolsNode, entry: str) -> None:
    pairs = [(name, arguments) for arguments in HOSTILE_ARGUMENTS for name in ("echo", "add")]
    pairs += [(name, "{}") for name in HOSTILE_NAMES]
    calls = calls_of(pairs)
    for batch in (calls, calls[:1]):  # a batch (worker threads) and a single call (inline)
        update = node(state_of(batch)) if entry == "sync" else asyncio.run(node.ainvoke(state_of(batch)))
        check_update(batch, update)


text_anything = st.text(alphabet=st.characters(exclude_categories=()), max_size=200)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | text_anything,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(text_anything, inner, max_size=4),
    max_leaves=20,
)
arguments_strategy = st.one_of(
    text_anything,
    st.binary(max_size=200),
    json_values.map(lambda v: json.dumps({"text": v}, ensure_ascii=False)),
    st.dictionaries(text_anything, json_values, max_size=4),
    st.sampled_from(HOSTILE_ARGUMENTS),
    json_values,
)
names_strategy = st.one_of(st.sampled_from(HOSTILE_NAMES), text_anything)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pairs=st.lists(st.tuples(names_strategy, arguments_strategy), min_size=1, max_size=6), use_async=st.booleans())
def test_fuzzed_calls_are_all_answered_in_order(node: ToolsNode, pairs: list[tuple[Any, Any]], use_async: bool) -> None:
    calls = calls_of(pairs)
    update = asyncio.run(node.ainvoke(state_of(calls))) if use_async else node(state_of(calls))
    check_update(calls, update)
