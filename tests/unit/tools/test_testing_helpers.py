"""tools.testing.schema_drift reports where parameters and RequestModel disagree."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from tools import BaseTool
from tools.testing import schema_drift


class Req(BaseModel):
    city: str
    days: int = 1


class Agrees(BaseTool[Req, Any]):
    name = "agrees"
    parameters = {
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        "required": ["city"],
    }

    def execute_internal(self, request: Req) -> Any:
        return request


class Drifts(Agrees):
    name = "drifts"
    parameters = {
        "type": "object",
        "properties": {"city": {"type": "integer"}, "country": {"type": "string"}},
        "required": ["city", "country"],
    }


def test_no_drift() -> None:
    assert schema_drift(Agrees()) == []


def test_drift_is_reported() -> None:
    assert schema_drift(Drifts()) == [
        "'country' is in parameters but not in Req",
        "'days' is in Req but not in parameters",
        "'city' has type ['integer'] in parameters but ['string'] in the model",
    ]
