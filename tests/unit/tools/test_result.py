"""The envelope: success and error results, always JSON-serialisable."""

from __future__ import annotations

import json
from datetime import date, datetime, timezone
from decimal import Decimal
from typing import Any
from uuid import UUID

import pytest
from pydantic import BaseModel

from tools import BaseTool, ErrorInfo, ToolError, ToolResult, UpstreamError

META_KEYS = {"duration_ms", "tool_name", "tool_version", "request_id", "started_at", "attempts"}


class Item(BaseModel):
    when: datetime
    price: Decimal


class Empty(BaseModel):
    pass


class Exotic(BaseTool[Empty, Any]):
    name = "exotic"
    description = "Returns values JSON cannot hold natively."
    version = "2.1.0"

    def execute_internal(self, request: Empty) -> Any:
        return {
            "when": datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc),
            "day": date(2026, 1, 2),
            "amount": Decimal("12.50"),
            "tags": {"b"},
            "item": Item(when=datetime(2026, 1, 1, tzinfo=timezone.utc), price=Decimal("1.10")),
            "id": UUID(int=1),
            "blob": b"raw",
        }


def test_success_dict_is_json_serialisable_with_exotic_values() -> None:
    out = Exotic()()
    text = json.dumps(out)
    assert json.loads(text) == out
    assert out["status"] == "success"
    assert out["data"] == {
        "when": "2026-01-02T03:04:05Z",
        "day": "2026-01-02",
        "amount": "12.50",
        "tags": ["b"],
        "item": {"when": "2026-01-01T00:00:00Z", "price": "1.10"},
        "id": "00000000-0000-0000-0000-000000000001",
        "blob": "raw",
    }
    assert set(out["_metadata"]) == META_KEYS
    assert out["_metadata"]["tool_name"] == "exotic"
    assert out["_metadata"]["tool_version"] == "2.1.0"
    assert out["_metadata"]["attempts"] == 1
    assert datetime.fromisoformat(out["_metadata"]["started_at"]).tzinfo is not None


def test_error_dict_shape() -> None:
    class Failing(BaseTool[Empty, Any]):
        name = "failing"

        def execute_internal(self, request: Empty) -> Any:
            raise UpstreamError("The bank API answered 503; try again in a minute.", details={"status": 503})

    out = Failing()()
    assert {k: v for k, v in out.items() if k != "_metadata"} == {
        "status": "error",
        "error": "The bank API answered 503; try again in a minute.",
        "error_type": "upstream_error",
        "retryable": True,
        "details": {"status": 503},
    }
    assert set(out["_metadata"]) == META_KEYS
    json.dumps(out)


def test_tool_result_is_frozen_and_converts_data_on_construction() -> None:
    result = ToolResult.success({"at": datetime(2026, 1, 1, tzinfo=timezone.utc), "s": {1}})
    assert result.data == {"at": "2026-01-01T00:00:00Z", "s": [1]}
    with pytest.raises(AttributeError):
        result.status = "error"  # type: ignore[misc]
    failure = ToolResult.failure("timeout", "too slow", retryable=True, details={"d": Decimal("1")})
    assert failure.error == ErrorInfo("timeout", "too slow", True, {"d": "1"})
    assert failure.to_dict()["details"] == {"d": "1"}
    assert not failure.ok and result.ok


def test_unserialisable_objects_fall_back_to_str() -> None:
    class Opaque:
        def __str__(self) -> str:
            return "opaque-thing"

    result = ToolResult.success({"x": Opaque()})
    assert json.loads(json.dumps(result.to_dict()))["data"] == {"x": "opaque-thing"}


def test_request_ids_are_unique() -> None:
    ids = {Exotic().execute().metadata["request_id"] for _ in range(200)}
    assert len(ids) == 200


def test_tool_error_text_is_shown() -> None:
    class NoAccount(BaseTool[Empty, Any]):
        name = "no_account"

        def execute_internal(self, request: Empty) -> Any:
            raise ToolError("No account named 'savings'. Accounts: checking, joint.")

    out = NoAccount()()
    assert out["error"] == "No account named 'savings'. Accounts: checking, joint."
    assert out["error_type"] == "execution_error"
    assert out["retryable"] is False


def test_started_at_is_iso_utc_and_matches_the_clock(mocker: Any) -> None:
    from datetime import datetime as real_datetime

    mocker.patch("tools.base._now", side_effect=[1_767_225_599.25, 1_767_225_600.5])
    first = Exotic().execute().metadata["started_at"]
    second = Exotic().execute().metadata["started_at"]
    assert first == "2025-12-31T23:59:59.250000+00:00"
    assert second == "2026-01-01T00:00:00.500000+00:00"
    assert real_datetime.fromisoformat(second).timestamp() == 1_767_225_600.5
