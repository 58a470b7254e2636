"""Property: the same arguments give the same outcome on every call path.

Models and payloads are generated: scalar, date, decimal, nested-model and list fields,
required or defaulted, nullable or not, strict or lax models; payloads mix valid values,
wrong types, nulls and strings that merely contain "null".
"""

from __future__ import annotations

import asyncio
import json
from datetime import date
from decimal import Decimal
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, Field, create_model

from tools import BaseTool, LocalToolRegistry, ToolResult


class Inner(BaseModel):
    x: int
    label: str = "inner"


FIELD_TYPES: dict[str, tuple[Any, Any]] = {
    # name: (annotation, a default of that type)
    "int": (int, 3),
    "str": (str, "s"),
    "float": (float, 1.5),
    "bool": (bool, True),
    "date": (date, date(2026, 1, 1)),
    "decimal": (Decimal, Decimal("2.50")),
    "inner": (Inner, Inner(x=1)),
    "ints": (list[int], [1]),
    "opt_int": (int | None, 7),
}

VALUES = st.one_of(
    st.none(),
    st.integers(-5, 5),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.booleans(),
    st.sampled_from(["null", "a null", "2026-11-25", "12.50", "x", "", "NULL", "1"]),
    st.lists(st.one_of(st.none(), st.integers(0, 3)), max_size=3),
    st.fixed_dictionaries({"x": st.one_of(st.none(), st.integers(0, 3))}),
    st.fixed_dictionaries({"x": st.integers(0, 3), "label": st.one_of(st.none(), st.just("null"))}),
)


@st.composite
def model_and_payload(draw: st.DrawFn) -> tuple[type[BaseModel], dict[str, Any]]:
    kinds = draw(st.lists(st.sampled_from(sorted(FIELD_TYPES)), min_size=1, max_size=4))
    strict = draw(st.booleans())
    fields: dict[str, Any] = {}
    for index, kind in enumerate(kinds):
        annotation, default = FIELD_TYPES[kind]
        required = draw(st.booleans())
        fields[f"f{index}_{kind}"] = (annotation, Field(...) if required else Field(default=default))
    model = create_model("Generated", __config__=ConfigDict(strict=strict), **fields)
    names = list(fields)
    payload = draw(st.dictionaries(st.sampled_from([*names, "unknown"]), VALUES, max_size=len(names) + 1))
    return model, payload


def outcome(result: ToolResult | dict[str, Any]) -> tuple[Any, ...]:
    as_dict = result.to_dict() if isinstance(result, ToolResult) else dict(result)
    as_dict.pop("_metadata", None)
    return (as_dict["status"], json.dumps(as_dict, sort_keys=True))


def echo_tool(model: type[BaseModel]) -> BaseTool[Any, Any]:
    class Echo(BaseTool[model, Any]):  # type: ignore[valid-type]
        name = "echo"
        description = "Echo the validated request."

        def execute_internal(self, request: Any) -> Any:
            return request

    return Echo()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(model_and_payload())
def test_every_path_agrees(case: tuple[type[BaseModel], dict[str, Any]]) -> None:
    model, payload = case
    registry = LocalToolRegistry()
    registry.register(echo_tool(model))
    raw = json.dumps(payload)
    decoded = json.loads(raw)  # what a client hands to the kwargs paths

    async def both_async() -> tuple[ToolResult, ToolResult]:
        return (
            await registry.acall_tool_raw("echo", raw),
            await registry.acall_tool("echo", **decoded),
        )

    async_raw, async_kwargs = asyncio.run(both_async())
    outcomes = {
        "call_tool_raw": outcome(registry.call_tool_raw("echo", raw)),
        "call_tool_raw(bytes)": outcome(registry.call_tool_raw("echo", raw.encode())),
        "call_tool_raw(dict)": outcome(registry.call_tool_raw("echo", decoded)),
        "acall_tool_raw": outcome(async_raw),
        "call_tool": outcome(registry.call_tool("echo", **decoded)),
        "acall_tool": outcome(async_kwargs),
        "registry()": outcome(registry("echo", **decoded)),
    }
    assert len(set(outcomes.values())) == 1, outcomes
