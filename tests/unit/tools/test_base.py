"""BaseTool: generics, the lifecycle, model-facing validation errors, redaction."""

from __future__ import annotations

import asyncio
import json
import logging
import types
from typing import Any, Literal

import pytest
from pydantic import BaseModel, Field, field_validator

from tools import BaseTool, InvalidToolNameError, ToolDefinitionError


class Address(BaseModel):
    city: str
    zip_code: str = "00000"


class WeatherRequest(BaseModel):
    city: str = Field(description="City name, e.g. 'Lisbon'")
    units: Literal["metric", "imperial"] = "metric"
    days: int = Field(default=1, ge=1, le=7)
    home: Address | None = None
    stops: list[Address] = []


class WeatherReport(BaseModel):
    city: str
    units: str
    days: int


class WeatherTool(BaseTool[WeatherRequest, WeatherReport]):
    name = "weather"
    description = "Current weather for a city."
    version = "1.2.0"

    def execute_internal(self, request: WeatherRequest) -> WeatherReport:
        return WeatherReport(city=request.city, units=request.units, days=request.days)


def test_generic_arguments_become_models() -> None:
    assert WeatherTool.RequestModel is WeatherRequest
    assert WeatherTool.ResponseModel is WeatherReport


def test_types_new_class_works() -> None:
    def body(ns: dict[str, Any]) -> None:
        ns["name"] = "dyn"
        ns["execute_internal"] = lambda self, request: {"city": request.city}

    cls = types.new_class("Dyn", (BaseTool[WeatherRequest, Any],), {}, body)
    assert getattr(cls, "RequestModel", None) is WeatherRequest
    assert cls()(city="Oslo")["data"] == {"city": "Oslo"}


def test_success_path_formats_response_model() -> None:
    out = WeatherTool()(city="Lisbon")
    assert out["status"] == "success"
    assert out["data"] == {"city": "Lisbon", "units": "metric", "days": 1}


@pytest.mark.parametrize("bad", ["bad name", "x" * 65, "math.factorial", ""])
def test_bad_name_fails_at_class_creation(bad: str) -> None:
    with pytest.raises(InvalidToolNameError, match="a-zA-Z0-9_-"):
        types.new_class("Bad", (BaseTool[WeatherRequest, Any],), {}, lambda ns: ns.update(name=bad or " "))


def test_field_errors_name_path_expected_and_got() -> None:
    out = WeatherTool()(city="Lisbon", units="kelvin", days=30, home={"zip_code": 1})
    assert out["error_type"] == "validation_error"
    message = out["error"]
    assert "units: Input should be 'metric' or 'imperial' (got \"kelvin\")" in message
    assert "days: Input should be less than or equal to 7 (got 30)" in message
    assert "home.city: required argument is missing" in message
    assert "errors.pydantic.dev" not in message and "For further information" not in message
    assert "Accepted arguments: city (string, required)" in message
    assert [e["field"] for e in out["details"]["errors"]] == [
        "units",
        "days",
        "home.city",
        "home.zip_code",
    ]


def test_missing_and_unknown_arguments_are_named() -> None:
    out = WeatherTool()(town="Lisbon")
    assert out["error_type"] == "validation_error"
    assert "city: required argument is missing" in out["error"]
    assert "town: unknown argument, not accepted by this tool" in out["error"]
    assert out["details"]["accepted"] == ["city", "units", "days", "home", "stops"]


def test_unknown_nested_argument_is_rejected() -> None:
    out = WeatherTool()(city="Lisbon", home={"city": "Porto", "planet": "earth"})
    assert "home.planet: unknown argument" in out["error"]


def test_null_means_default_at_any_depth() -> None:
    class Echo(BaseTool[WeatherRequest, Any]):
        name = "echo"

        def execute_internal(self, request: WeatherRequest) -> Any:
            return request

    out = Echo()(
        city="Lisbon",
        units=None,
        days=None,
        home={"city": "Porto", "zip_code": None},
        stops=[{"city": "Faro", "zip_code": None}],
    )
    assert out["status"] == "success", out
    assert out["data"] == {
        "city": "Lisbon",
        "units": "metric",
        "days": 1,
        "home": {"city": "Porto", "zip_code": "00000"},
        "stops": [{"city": "Faro", "zip_code": "00000"}],
    }
    # Optional[T] keeps an explicit null; a required field's null is reported as missing.
    assert Echo()(city="Lisbon", home=None)["data"]["home"] is None
    # A required argument has no default for a null to stand for: the null is reported as sent.
    assert "city: Input should be a valid string (got null)" in Echo()(city=None)["error"]


def test_unexpected_exception_is_redacted_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    class Leaky(BaseTool[WeatherRequest, Any]):
        name = "leaky"

        def execute_internal(self, request: WeatherRequest) -> Any:
            raise RuntimeError("password=hunter2 at db.internal:5432")

    with caplog.at_level(logging.ERROR, logger="tools.base"):
        out = Leaky()(city="x")
    request_id = out["_metadata"]["request_id"]
    assert out["error_type"] == "execution_error"
    assert "hunter2" not in out["error"] and request_id in out["error"]
    record = next(r for r in caplog.records if request_id in r.getMessage())
    assert record.exc_info is not None and "hunter2" in str(record.exc_info[1])

    Leaky.expose_exceptions = True
    assert "RuntimeError: password=hunter2" in Leaky()(city="x")["error"]


def test_validation_error_inside_tool_is_not_blamed_on_the_model() -> None:
    class Parses(BaseTool[WeatherRequest, Any]):
        name = "parses"

        def execute_internal(self, request: WeatherRequest) -> Any:
            return WeatherReport.model_validate({"city": 1})

    out = Parses()(city="x")
    assert out["error_type"] == "execution_error"


def test_overridden_validate_input_and_format_output() -> None:
    class Custom(BaseTool[WeatherRequest, WeatherReport]):
        name = "custom"

        def validate_input(self, /, **kwargs: Any) -> WeatherRequest:
            kwargs.setdefault("city", "Default City")
            return WeatherRequest.model_validate(kwargs)

        def execute_internal(self, request: WeatherRequest) -> WeatherReport:
            return WeatherReport(city=request.city, units=request.units, days=request.days)

        def format_output(self, response: WeatherReport) -> Any:
            return f"{response.city}: {response.days} day(s)"

    assert Custom()()["data"] == "Default City: 1 day(s)"
    assert Custom().execute_raw('{"city": "Rome"}').data == "Rome: 1 day(s)"
    assert "days" in Custom()(days="many")["error"]


def test_model_validators_errors_are_shown() -> None:
    class Positive(BaseModel):
        n: int

        @field_validator("n")
        @classmethod
        def positive(cls, v: int) -> int:
            if v <= 0:
                raise ValueError("n must be positive, e.g. 3")
            return v

    class P(BaseTool[Positive, int]):
        name = "p"

        def execute_internal(self, request: Positive) -> int:
            return request.n

    assert "n must be positive, e.g. 3 (got -1)" in P()(n=-1)["error"]


def test_async_tool_from_sync_and_async_code() -> None:
    class Slow(BaseTool[WeatherRequest, Any]):
        name = "slow"

        async def execute_internal(self, request: WeatherRequest) -> Any:
            await asyncio.sleep(0.001)
            return request.city

    assert Slow()(city="A")["data"] == "A"

    async def inside_loop() -> tuple[Any, Any]:
        sync_from_async = Slow()(city="B")  # must not deadlock the running loop
        return sync_from_async["data"], (await Slow().aexecute(city="C")).data

    assert asyncio.run(inside_loop()) == ("B", "C")


def test_raw_arguments() -> None:
    tool = WeatherTool()
    assert tool.execute_raw('{"city": "Oslo", "days": null}').data["days"] == 1
    assert tool.execute_raw({"city": "Oslo"}).ok
    assert tool.execute_raw(b'{"city": "Oslo"}').ok
    not_json = tool.execute_raw("{city: Oslo}")
    assert not_json.error is not None and "not valid JSON" in not_json.error.message
    array = tool.execute_raw("[1, 2]")
    assert array.error is not None and "must be a JSON object" in array.error.message
    empty = tool.execute_raw("")
    assert empty.error is not None and "city: required argument is missing" in empty.error.message
    deep = tool.execute_raw("[" * 100_000 + "]" * 100_000)
    assert deep.error is not None and deep.error.type == "validation_error"
    unknown = tool.execute_raw('{"city": "Oslo", "country": "NO"}')
    assert unknown.error is not None and "country: unknown argument" in unknown.error.message
    assert asyncio.run(tool.aexecute_raw("nope")).error is not None


HANDWRITTEN: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "minLength": 1, "description": "What to search for."},
        "limit": {"type": "integer", "default": 5, "minimum": 1},
    },
    "required": ["query"],
}


class Search(BaseTool[dict[str, Any], Any]):
    name = "search"
    description = "Search."
    parameters = HANDWRITTEN

    def execute_internal(self, request: dict[str, Any]) -> Any:
        return request


def test_parameters_schema_validates_and_fills_defaults() -> None:
    assert Search()(query="cats")["data"] == {"query": "cats", "limit": 5}
    assert Search()(query="cats", limit=None)["data"] == {"query": "cats", "limit": 5}
    bad = Search()(query="", limit=0)
    assert bad["error_type"] == "validation_error"
    assert "query:" in bad["error"] and "limit:" in bad["error"]
    assert "query: required argument is missing" in Search()()["error"]


def test_open_parameters_pass_unknown_arguments_closed_ones_reject() -> None:
    assert Search()(query="cats", lang="en")["data"]["lang"] == "en"

    class Closed(Search):
        name = "closed"
        parameters = {**HANDWRITTEN, "additionalProperties": False}

    out = Closed()(query="cats", lang="en")
    assert out["error_type"] == "validation_error" and "lang" in out["error"]


def test_invalid_parameters_schema_fails_at_class_creation() -> None:
    with pytest.raises(ToolDefinitionError, match="not a valid JSON schema"):
        types.new_class(
            "Broken",
            (BaseTool[dict[str, Any], Any],),
            {},
            lambda ns: ns.update(name="broken", parameters={"type": "object", "properties": {"a": {"type": 5}}}),
        )
    with pytest.raises(ToolDefinitionError, match="must describe an object"):
        types.new_class(
            "Arr",
            (BaseTool[dict[str, Any], Any],),
            {},
            lambda ns: ns.update(name="arr", parameters={"type": "array"}),
        )


def test_input_and_output_schema_are_fresh_copies() -> None:
    tool = WeatherTool()
    schema = tool.input_schema()
    schema["properties"].clear()
    assert tool.input_schema()["properties"]
    assert "title" not in json.dumps(tool.input_schema())
    output = tool.output_schema()
    assert output is not None and output["properties"]["city"] == {"type": "string"}


def test_nothing_escapes_from_overrides_or_sys_exit() -> None:
    class BadValidate(BaseTool[WeatherRequest, Any]):
        name = "bad_validate"

        def validate_input(self, /, **kwargs: Any) -> WeatherRequest:
            raise KeyError("internal")

        def execute_internal(self, request: WeatherRequest) -> Any:
            return None

    class Exits(BaseTool[WeatherRequest, Any]):
        name = "exits"

        def execute_internal(self, request: WeatherRequest) -> Any:
            raise SystemExit(3)

    class BadFormat(WeatherTool):
        name = "bad_format"

        def format_output(self, response: WeatherReport) -> Any:
            raise ValueError("cannot format")

    for tool in (BadValidate(), Exits(), BadFormat()):
        assert tool(city="x")["error_type"] == "execution_error"
        assert asyncio.run(tool.aexecute(city="x")).error is not None


def test_execute_internal_may_return_a_tool_result_with_metadata() -> None:
    from tools import ToolResult

    class Remote(BaseTool[WeatherRequest, Any]):
        name = "remote"
        version = "3.0"

        def execute_internal(self, request: WeatherRequest) -> Any:
            if request.city == "down":
                return ToolResult.failure("upstream_error", "HTTP 503", retryable=True, metadata={"http_status": 503})
            return ToolResult.success({"city": request.city}, metadata={"markdown": "**ok**", "tool_name": "x"})

    ok = Remote()(city="Oslo")
    assert ok["data"] == {"city": "Oslo"}
    assert ok["_metadata"]["markdown"] == "**ok**" and ok["_metadata"]["tool_name"] == "remote"
    down = Remote()(city="down")
    assert (down["error_type"], down["retryable"], down["_metadata"]["http_status"]) == ("upstream_error", True, 503)


def test_hostile_argument_floods_stay_bounded() -> None:
    flood = {f"junk_{i}": "x" * 10_000 for i in range(5_000)}
    out = WeatherTool()(city="Oslo", **flood)
    assert out["error_type"] == "validation_error"
    assert len(out["error"]) < 3_000  # 12 lines shown, each value cut to 80 characters
    assert "... and 4988 more" in out["error"]
    assert len(out["details"]["errors"]) == 50
    huge = WeatherTool().execute_raw('{"city": "' + "y" * 5_000_000 + '", "days": "many"}')
    assert huge.error is not None and len(huge.error.message) < 2_000
