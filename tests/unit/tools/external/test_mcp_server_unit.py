"""build_mcp_server driven in-process by the SDK's Client (no transport, no subprocess)."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from mcp import Client
from pydantic import BaseModel, Field

from tools import BaseTool, LocalToolRegistry, ToolError
from tools.external.mcp import build_mcp_server
from tools.external.mcp.__main__ import load_registry
from tools.result import ToolResult

pytestmark = pytest.mark.mcp


class Query(BaseModel):
    term: str = Field(description="What to look up")
    limit: int = Field(default=3, ge=1, le=10, description="How many hits, 1-10")


class Hits(BaseModel):
    term: str
    hits: list[str]


class LookupTool(BaseTool[Query, Hits]):
    name = "lookup"
    description = "Look a term up."

    def execute_internal(self, request: Query) -> Hits:
        if request.term == "forbidden":
            raise ToolError("That term cannot be looked up; try a different one.")
        return Hits(term=request.term, hits=[f"{request.term}-{i}" for i in range(request.limit)])


def listing() -> list[str]:
    """List things (returns a list, so no object output schema)."""
    return ["a", "b"]


def _registry() -> LocalToolRegistry:
    registry = LocalToolRegistry()
    registry.register(LookupTool())
    registry.register(listing)
    return registry


async def _drive(registry: Any, calls: list[tuple[str, dict[str, Any] | None]]) -> Any:
    async with Client(build_mcp_server(registry, name="unit")) as client:
        tools = (await client.list_tools()).tools
        results = [await client.call_tool(name, args) for name, args in calls]
    return tools, results


def _text(result: Any) -> str:
    return "\n".join(block.text for block in result.content)


def test_tools_are_listed_from_the_registry() -> None:
    registry = _registry()
    tools, _ = anyio.run(_drive, registry, [])
    expected = {entry["name"]: entry for entry in registry.to_mcp_tools()}

    assert [tool.name for tool in tools] == ["lookup", "listing"]
    for tool in tools:
        assert tool.input_schema == expected[tool.name]["inputSchema"]
        assert tool.description == expected[tool.name]["description"]
    assert tools[0].output_schema == expected["lookup"]["outputSchema"]
    assert tools[1].output_schema is None


def test_success_and_error_results() -> None:
    calls: list[tuple[str, dict[str, Any] | None]] = [
        ("lookup", {"term": "x", "limit": 2}),
        ("listing", None),
        ("lookup", {"term": "forbidden"}),
        ("lookup", {"term": "x", "limit": 50}),
        ("lookup", {"term": "x", "color": "red"}),
        ("missing", {}),
    ]
    _, (ok, plain, refused, too_many, extra, missing) = anyio.run(_drive, _registry(), calls)

    assert ok.is_error is False
    assert ok.structured_content == {"term": "x", "hits": ["x-0", "x-1"]}
    assert json.loads(_text(ok)) == ok.structured_content
    assert plain.is_error is False
    assert plain.structured_content is None
    assert json.loads(_text(plain)) == ["a", "b"]
    assert refused.is_error is True
    assert _text(refused) == "That term cannot be looked up; try a different one."
    assert too_many.is_error is True
    assert "limit" in _text(too_many)
    assert extra.is_error is True
    assert "color" in _text(extra)
    assert missing.is_error is True
    assert "lookup" in _text(missing)


class _RaisingRegistry:
    """A broken registry that violates the never-raise contract."""

    def to_mcp_tools(self) -> list[dict[str, Any]]:
        return [{"name": "x", "description": "X.", "inputSchema": {"type": "object"}}]

    async def acall_tool(self, name: str, /, **arguments: Any) -> ToolResult:
        raise RuntimeError("secret=hunter2")


def test_a_raising_registry_still_answers_without_leaking() -> None:
    calls: list[tuple[str, dict[str, Any] | None]] = [("x", {})]
    _, (result,) = anyio.run(_drive, _RaisingRegistry(), calls)

    assert result.is_error is True
    assert "internal error" in _text(result)
    assert "hunter2" not in _text(result)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("no_colon", "package.module:factory"),
        ("no_such_module_xyz:build", "cannot import"),
        ("json:not_there", "not a callable factory"),
        ("json:JSONDecoder", "not a tool registry"),
    ],
)
def test_load_registry_explains_bad_specs(spec: str, message: str) -> None:
    with pytest.raises(SystemExit) as caught:
        load_registry(spec)
    assert message in str(caught.value)
