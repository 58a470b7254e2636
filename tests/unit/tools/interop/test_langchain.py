"""LangChain both ways: tooldeck tools as StructuredTools and LangChain tools as tooldeck tools.

The langchain-tests standard suites run here against converted tools, offline.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool as LCBaseTool
from langchain_core.tools import StructuredTool, ToolException, tool
from langchain_tests.integration_tests import ToolsIntegrationTests
from langchain_tests.unit_tests import ToolsUnitTests
from pydantic import BaseModel, Field

from tools import InMemoryMetrics, InvalidToolNameError, LocalToolRegistry
from tools.approvals import ApprovalPolicy
from tools.interop import LangChainTool, from_langchain_tool, to_langchain_tools
from tools.manual import ToolCategory, ToolManual


class Order(BaseModel):
    product_id: str = Field(description="The product's id, e.g. 'p-1'.")
    quantity: int = Field(default=1, ge=1, description="How many.")


def build_registry(**options: Any) -> LocalToolRegistry:
    registry = LocalToolRegistry(**options)

    @registry.tool
    def add(a: int, b: int = 0) -> int:
        """Add two integers.

        Args:
            a: The first number.
            b: The second number.
        """
        return a + b

    @registry.tool
    def place_order(order: Order) -> dict[str, Any]:
        """Place an order for a product."""
        if order.product_id == "missing":
            raise ToolException("Product not found")
        return {"ordered": order.product_id, "quantity": order.quantity}

    return registry


def _by_name(tools: list[StructuredTool], name: str) -> StructuredTool:
    return next(t for t in tools if t.name == name)


# -- the standard suites, for a tooldeck tool converted out -----------------------------------


class TestToolsOutStandardUnit(ToolsUnitTests):
    @property
    def tool_constructor(self) -> LCBaseTool:
        return _by_name(to_langchain_tools(build_registry()), "add")

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"a": 2, "b": 3}


class TestToolsOutStandardIntegration(ToolsIntegrationTests):
    @property
    def tool_constructor(self) -> LCBaseTool:
        return _by_name(to_langchain_tools(build_registry()), "place_order")

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"order": {"product_id": "p-1", "quantity": 2}}


# -- and for a LangChain tool brought in and sent out again -----------------------------------


@tool
def multiply(x: float, y: float) -> float:
    """Multiply two numbers."""
    return x * y


def _round_trip() -> LCBaseTool:
    registry = LocalToolRegistry()
    registry.register(from_langchain_tool(multiply))
    return to_langchain_tools(registry)[0]


class RoundTrip:
    @property
    def tool_constructor(self) -> LCBaseTool:
        return _round_trip()

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"x": 2.5, "y": 4}


class TestRoundTripStandardUnit(RoundTrip, ToolsUnitTests):
    pass


class TestRoundTripStandardIntegration(RoundTrip, ToolsIntegrationTests):
    pass


# -- out: calls go through the registry -------------------------------------------------------


def _call(name: str, args: dict[str, Any], call_id: str = "call-1") -> dict[str, Any]:
    return {"type": "tool_call", "name": name, "args": args, "id": call_id}


def test_calls_go_through_the_registry_sync_and_async() -> None:
    metrics = InMemoryMetrics()
    registry = build_registry(metrics=metrics)
    add = _by_name(to_langchain_tools(registry), "add")
    message = add.invoke(_call("add", {"a": 2, "b": 3}))
    assert isinstance(message, ToolMessage)
    assert (message.content, message.status, message.tool_call_id) == ("5", "success", "call-1")
    assert message.artifact["status"] == "success" and message.artifact["data"] == 5
    assert message.artifact["_metadata"]["tool_name"] == "add"
    amessage = asyncio.run(add.ainvoke(_call("add", {"a": 1})))
    assert amessage.content == "1"
    order = _by_name(to_langchain_tools(registry), "place_order")
    assert json.loads(order.invoke({"order": {"product_id": "p-9"}})) == {"ordered": "p-9", "quantity": 1}
    assert metrics.stats("add").invocations == 2 and metrics.stats("place_order").invocations == 1


def test_errors_are_error_messages_the_model_can_read() -> None:
    tools = to_langchain_tools(build_registry())
    add, order = _by_name(tools, "add"), _by_name(tools, "place_order")
    bad = add.invoke(_call("add", {"a": "two"}))
    assert bad.status == "error" and "Invalid arguments for tool 'add'" in bad.content and "- a:" in bad.content
    missing = order.invoke(_call("place_order", {"order": {"product_id": "missing"}}))
    assert (missing.status, missing.content) == ("error", "Product not found")
    # invoked without a tool call, the error text is the return value (LangChain's convention)
    assert order.invoke({"order": {"product_id": "missing"}}) == "Product not found"


def test_breaker_approvals_and_views_apply() -> None:
    registry = build_registry(failure_threshold=1)

    manual = ToolManual(name="wire_money", description="Send money.", category=ToolCategory.EXECUTION, risk="dangerous")

    @registry.tool(manual=manual)
    def wire_money(amount: int) -> str:
        """Send money."""
        raise RuntimeError("bank down at 10.0.0.7")

    wire = _by_name(to_langchain_tools(registry), "wire_money")
    first = wire.invoke(_call("wire_money", {"amount": 5}))
    assert first.status == "error" and "internal error" in first.content and "10.0.0.7" not in first.content
    second = wire.invoke(_call("wire_money", {"amount": 5}))
    assert second.content == registry.call_tool("wire_money", amount=5).error.message  # type: ignore[union-attr]
    assert registry.call_tool("wire_money", amount=5).error.type == "circuit_open"  # type: ignore[union-attr]
    gated = build_registry(policy=ApprovalPolicy("low"))
    denied = _by_name(to_langchain_tools(gated), "add").invoke(_call("add", {"a": 1}))
    assert denied.status == "error" and denied.content == gated.call_tool("add", a=1).error.message  # type: ignore[union-attr]
    assert gated.call_tool("add", a=1).error.type == "permission_denied"  # type: ignore[union-attr]
    view = registry.for_agent("explore")
    names = {t.name for t in to_langchain_tools(view)}
    assert names == {t["function"]["name"] for t in view.to_openai_tools()} and "wire_money" not in names


def test_names_filter_and_schema_is_the_registrys() -> None:
    registry = build_registry()
    (add,) = to_langchain_tools(registry, names=["add"])
    assert add.tool_call_schema == {
        **registry.to_openai_tools()[0]["function"]["parameters"],
        "description": add.description,
    }
    assert add.description == "Add two integers."


# -- in: a LangChain tool as a tooldeck tool --------------------------------------------------


class LookupInput(BaseModel):
    sku: str = Field(description="Stock keeping unit.")


def _lookup(sku: str) -> str:
    if sku == "none":
        raise ToolException(f"No product with SKU {sku!r}; try search_products first.")
    if sku == "crash":
        raise KeyError("internal index at /srv/db token=abc")
    return f"product {sku}"


def test_from_langchain_tool_registers_with_its_schema_and_runs() -> None:
    lookup = StructuredTool.from_function(
        _lookup, name="lookup", description="Find a product.", args_schema=LookupInput
    )
    registry = LocalToolRegistry()
    registered = registry.register(from_langchain_tool(lookup))
    assert isinstance(registered, LangChainTool)
    assert registry.to_openai_tools()[0]["function"] == {
        "name": "lookup",
        "description": "Find a product.",
        "parameters": {
            "type": "object",
            "properties": {"sku": {"type": "string", "description": "Stock keeping unit."}},
            "required": ["sku"],
        },
    }
    assert registry("lookup", sku="A1")["data"] == "product A1"
    assert registry("lookup", sku="none")["error"] == "No product with SKU 'none'; try search_products first."
    crash = registry("lookup", sku="crash")
    assert "internal error" in crash["error"] and "abc" not in crash["error"]
    assert registry("lookup")["error_type"] == "validation_error"


def test_handled_tool_errors_and_langchain_validation_errors() -> None:
    handled = StructuredTool.from_function(
        _lookup, name="lookup", description="Find.", args_schema=LookupInput, handle_tool_error=True
    )
    registry = LocalToolRegistry()
    registry.register(from_langchain_tool(handled))
    out = registry("lookup", sku="none")
    assert (out["status"], out["error"]) == ("error", "No product with SKU 'none'; try search_products first.")

    class Strict(BaseModel):
        count: int = Field(ge=1)

    def count(count: int) -> int:
        return count

    counting = StructuredTool.from_function(count, name="count", description="Count.", args_schema=Strict)
    # A schema LangChain checks more strictly than it exports: its ValidationError is the model's to fix.
    registry.register(from_langchain_tool(counting), parameters={"type": "object", "properties": {"count": {}}})
    bad = registry("count", count=0)
    assert bad["error_type"] == "validation_error" and "count" in bad["error"]


def test_async_only_langchain_tools_run_from_sync_and_async_callers() -> None:
    async def fetch(url: str) -> str:
        """Fetch a page."""
        await asyncio.sleep(0)
        return f"page at {url}"

    fetcher = StructuredTool.from_function(coroutine=fetch, name="fetch", description="Fetch a page.")
    registry = LocalToolRegistry()
    registry.register(from_langchain_tool(fetcher))
    assert registry("fetch", url="http://x")["data"] == "page at http://x"
    assert asyncio.run(registry.acall_tool("fetch", url="http://y")).data == "page at http://y"


def test_a_name_tooldeck_rejects_needs_name() -> None:
    spaced = StructuredTool.from_function(_lookup, name="product lookup", description="Find.")
    with pytest.raises(InvalidToolNameError):
        from_langchain_tool(spaced)
    assert from_langchain_tool(spaced, name="product_lookup").name == "product_lookup"


def test_import_tools_does_not_import_langchain() -> None:
    code = "import sys, tools, tools.interop; assert not any(m.startswith('langchain') for m in sys.modules), 'leak'"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0
