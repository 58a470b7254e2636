"""Every call path gives the same answer: presets, validation mode, JSON-safe envelopes."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from datetime import date, datetime, timezone
from decimal import Decimal
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from tools import BaseTool, LocalToolRegistry, ToolResult


class AccountRequest(BaseModel):
    tenant: str
    account: str
    limit: int = 10


class AccountTool(BaseTool[AccountRequest, dict[str, Any]]):
    name = "account"
    description = "Balance of an account of a tenant."

    def execute_internal(self, request: AccountRequest) -> dict[str, Any]:
        return {"tenant": request.tenant, "account": request.account, "limit": request.limit}


def every_path(registry: LocalToolRegistry, name: str, arguments: dict[str, Any]) -> list[dict[str, Any]]:
    """The same call through every registry path, as result dicts without metadata."""
    raw = json.dumps(arguments)
    bound = registry.get(name)
    assert bound is not None
    results: list[ToolResult | dict[str, Any]] = [
        registry.call_tool(name, **arguments),
        registry.call_tool_raw(name, raw),
        registry.call_tool_raw(name, arguments),
        registry(name, **arguments),
        bound(**arguments),
        asyncio.run(registry.acall_tool(name, **arguments)),
        asyncio.run(registry.acall_tool_raw(name, raw)),
    ]
    out = []
    for result in results:
        as_dict = result.to_dict() if isinstance(result, ToolResult) else result
        as_dict.pop("_metadata")
        out.append(as_dict)
    return out


# ----------------------------------------------------------------------------- presets


def test_a_model_cannot_override_a_preset_on_any_path() -> None:
    registry = LocalToolRegistry()
    registry.register(AccountTool(), name="acme_account", preset={"tenant": "globex-7"})
    schema = registry.to_openai_tools()[0]["function"]["parameters"]
    assert "tenant" not in schema["properties"] and "tenant" not in schema.get("required", [])

    ok = every_path(registry, "acme_account", {"account": "savings"})
    assert all(
        r == {"status": "success", "data": {"tenant": "globex-7", "account": "savings", "limit": 10}} for r in ok
    )

    hijack = every_path(registry, "acme_account", {"account": "savings", "tenant": "evil"})
    for result in hijack:
        assert result["error_type"] == "validation_error"
        assert "tenant: unknown argument" in result["error"]
        # The accepted arguments shown are the exported ones: the preset stays hidden.
        assert "Accepted arguments: account (string, required); limit (integer, default 10)." in result["error"]
        assert "globex" not in result["error"]


def test_a_preset_sent_as_null_is_refused_too() -> None:
    registry = LocalToolRegistry()
    registry.register(AccountTool(), name="acme_account", preset={"tenant": "globex-7"})
    result = registry.call_tool_raw("acme_account", '{"account": "a", "tenant": null}')
    assert result.error is not None and result.error.type == "validation_error"


# ----------------------------------------------------------------------------- one validation mode


class StrictDated(BaseModel):
    model_config = ConfigDict(strict=True)

    day: date
    amount: Decimal = Decimal("0")
    note: str = "none"


class StrictDatedTool(BaseTool[StrictDated, dict[str, Any]]):
    name = "dated"
    description = "Echo a dated amount."

    def execute_internal(self, request: StrictDated) -> dict[str, Any]:
        return {"day": request.day.isoformat(), "amount": str(request.amount), "note": request.note}


@pytest.mark.parametrize(
    "arguments",
    [
        {"day": "2026-11-25"},
        {"day": "2026-11-25", "amount": "12.50"},
        {"day": "2026-11-25", "note": "null"},  # a string that merely contains "null"
        {"day": "2026-11-25", "note": "not nullable, null"},
        {"day": "2026-11-25", "note": None},  # null means the default
        {"day": "25/11/2026"},
        {"day": 20261125},
        {"day": None},
    ],
)
def test_a_strict_model_with_a_date_gives_one_outcome_on_every_path(arguments: dict[str, Any]) -> None:
    registry = LocalToolRegistry()
    registry.register(StrictDatedTool())
    results = every_path(registry, "dated", arguments)
    assert all(r == results[0] for r in results), results


def test_python_values_from_python_callers_validate_like_their_json() -> None:
    registry = LocalToolRegistry()
    registry.register(StrictDatedTool())
    result = registry.call_tool("dated", day=date(2026, 11, 25), amount=Decimal("1.10"))
    assert result.data == {"day": "2026-11-25", "amount": "1.10", "note": "none"}


# ----------------------------------------------------------------------------- JSON-safe envelope


class Stamp(BaseModel):
    at: datetime


class RichFormat(BaseTool[AccountRequest, Any]):
    name = "rich"
    description = "Returns Python values from format_output."

    def execute_internal(self, request: AccountRequest) -> Any:
        return request

    def format_output(self, response: Any) -> Any:
        return {
            "when": datetime(2026, 11, 25, 10, 0, tzinfo=timezone.utc),
            "amount": Decimal("10.50"),
            "tags": {"a"},
            "stamp": Stamp(at=datetime(2026, 1, 1, tzinfo=timezone.utc)),
            "day": date(2026, 11, 25),
        }


@pytest.mark.parametrize("call", ["execute", "registry", "async"])
def test_a_custom_format_output_is_made_json_safe_on_every_path(call: str) -> None:
    tool = RichFormat()
    registry = LocalToolRegistry()
    registry.register(tool)
    args = {"tenant": "t", "account": "a"}
    runners: dict[str, Callable[[], ToolResult]] = {
        "execute": lambda: tool.execute(**args),
        "registry": lambda: registry.call_tool("rich", **args),
        "async": lambda: asyncio.run(registry.acall_tool("rich", **args)),
    }
    result = runners[call]()
    encoded = json.loads(json.dumps(result.to_dict()))
    assert encoded["data"] == {
        "when": "2026-11-25T10:00:00Z",
        "amount": "10.50",
        "tags": ["a"],
        "stamp": {"at": "2026-01-01T00:00:00Z"},
        "day": "2026-11-25",
    }
