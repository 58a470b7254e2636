"""``BaseTool[TRequest, TResponse]``: validate -> execute -> format, inside one envelope."""

from __future__ import annotations

import copy
import inspect
import itertools
import json
import logging
import os
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Literal, TypeVar, get_args, get_origin

from pydantic import BaseModel, ValidationError

from tools._aio import run_coroutine_sync
from tools._arguments import (
    AcceptedArguments,
    describe_arguments,
    field_error,
    from_pydantic_errors,
    invalid_arguments,
    validate_with_model,
    validate_with_schema,
)
from tools._names import check_tool_name
from tools.errors import InvalidArgumentsError, ToolDefinitionError, ToolError
from tools.result import ErrorInfo, ToolResult, to_jsonable

if TYPE_CHECKING:
    from tools.resilience import RetryPolicy
    from tools.routing import ToolManual

logger = logging.getLogger(__name__)

TRequest = TypeVar("TRequest")
TResponse = TypeVar("TResponse")
_T = TypeVar("_T")
_CACHE_KEYS = ("_td_input_schema", "_td_accepted", "_td_stripper", "_td_validator", "_td_extra", "_td_manual")

# Cheap, unique-enough request ids: a per-process random prefix and a counter.
_ID_PREFIX = os.urandom(3).hex()
_ids = itertools.count(1)
_UTC = timezone.utc


def new_request_id() -> str:
    """A short id, unique within this process and unlikely to collide across processes."""
    return f"{_ID_PREFIX}-{next(_ids):x}"


class BaseTool(ABC, Generic[TRequest, TResponse]):
    """A tool the model can call: typed request in, JSON-compatible data out.

    Subclass with pydantic models as the generic arguments, set ``name``,
    ``description`` and ``version``, and implement :meth:`execute_internal` (plain or
    ``async def``). Everything else — validation with model-facing errors, output
    formatting, timing, request ids and the :class:`~tools.result.ToolResult` envelope —
    comes from this class. :meth:`execute` never raises for bad input or a failing tool.

    Class attributes (instances may override them in ``__init__``):
        name: ``^[a-zA-Z0-9_-]{1,64}$``, checked at class creation.
        description: What the tool does, written for the model.
        version: The tool's version, reported in every result's metadata.
        RequestModel / ResponseModel: default to the generic arguments when those are models.
        parameters: A hand-written JSON schema for the model. Without a ``RequestModel``
            input is validated against it and the tool receives the validated ``dict``.
        timeout: Seconds a call may take through the registry (None: no limit).
        retry: A :class:`~tools.resilience.RetryPolicy` for retryable errors (None: no retry).
        sequential: Run alone rather than beside other calls in the graph.
        run_in_thread: Run a sync tool in a worker thread when called from async code;
            set False for thread-affine tools.
        expose_exceptions: Show unexpected exception text to the model (debugging only).
        manual: Routing metadata (a ``ToolManual``), optional.
    """

    name: str = ""
    description: str = ""
    version: str = "0.1.0"
    RequestModel: type[BaseModel] | None = None
    ResponseModel: type[BaseModel] | None = None
    parameters: dict[str, Any] | None = None
    timeout: float | None = None
    retry: RetryPolicy | None = None
    sequential: bool = False
    run_in_thread: bool = True
    expose_exceptions: bool = False
    manual: ToolManual | None = None

    _fast_json: ClassVar[bool] = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for base in cls.__dict__.get("__orig_bases__", ()):
            origin = get_origin(base)
            if not (inspect.isclass(origin) and issubclass(origin, BaseTool)):
                continue
            args = get_args(base)
            for attr, arg in zip(("RequestModel", "ResponseModel"), args, strict=False):
                if attr not in cls.__dict__ and inspect.isclass(arg) and issubclass(arg, BaseModel):
                    setattr(cls, attr, arg)
        if cls.__dict__.get("name"):
            check_tool_name(cls.__dict__["name"], owner=f"class {cls.__qualname__}")
        if cls.__dict__.get("parameters") is not None:
            cls.parameters = prepare_parameters(cls.__dict__["parameters"], owner=f"class {cls.__qualname__}")
        # The JSON fast path is only valid when validation is the default one.
        cls._fast_json = cls.validate_input is BaseTool.validate_input

    # ----------------------------------------------------------------- lifecycle

    def validate_input(self, /, **kwargs: Any) -> TRequest:
        """Turn the model's arguments into the request ``execute_internal`` receives.

        Default: validation against ``RequestModel`` (closed: unknown arguments are an
        error unless the model says ``extra="allow"``), else against ``parameters``.

        Raises:
            InvalidArgumentsError: with field-level messages for the model.
        """
        model = self.RequestModel
        if model is not None:
            return validate_with_model(  # type: ignore[no-any-return]
                model,
                kwargs,
                schema=self._input_schema(),
                accepted=self._accepted(),
                strip=self._stripper(),
                tool_name=self.name,
                extra=_extra_mode(model),
            )
        if self.parameters is None:
            return kwargs  # type: ignore[return-value]
        return validate_with_schema(  # type: ignore[return-value]
            self._validator(), kwargs, schema=self.parameters, tool_name=self.name, strip=self._stripper()
        )

    @abstractmethod
    def execute_internal(self, request: TRequest) -> TResponse | ToolResult:
        """Do the work (may be ``async def``); raise ``ToolError`` for failures the model sees.

        Returning a :class:`~tools.result.ToolResult` instead of a response (what adapters of
        remote tools do) skips ``format_output``: its status, data, error and extra metadata
        are kept, and the envelope's own metadata keys are filled in as usual.
        """

    def format_output(self, response: TResponse) -> Any:
        """Turn the response into the ``data`` the model sees (default: JSON-mode dump)."""
        if type(response) in _JSON_SCALARS:
            return response
        if isinstance(response, BaseModel):
            return response.model_dump(mode="json")
        return to_jsonable(response)

    # ----------------------------------------------------------------- entry points

    def execute(self, /, **kwargs: Any) -> ToolResult:
        """Run the whole lifecycle synchronously; never raises for bad input or tool failures."""
        return self._execute(kwargs, None)

    def execute_raw(self, arguments: str | bytes | Mapping[str, Any] | None) -> ToolResult:
        """Like :meth:`execute`, with the arguments as an LLM sends them (JSON text or a dict).

        Empty or ``None`` means no arguments; text that is not a JSON object is a
        ``validation_error`` telling the model to send one.
        """
        if isinstance(arguments, (str, bytes)) and self._fast_json and self.RequestModel is not None:
            return self._execute(None, arguments)
        return self._execute_parsed(arguments)

    async def aexecute(self, /, **kwargs: Any) -> ToolResult:
        """Async twin of :meth:`execute`: sync tools run in a worker thread (unless opted out)."""
        return await self._aexecute(kwargs)

    async def aexecute_raw(self, arguments: str | bytes | Mapping[str, Any] | None) -> ToolResult:
        """Async twin of :meth:`execute_raw`."""
        try:
            kwargs = parse_arguments(arguments, self.name)
        except InvalidArgumentsError as exc:
            return self._error_result(exc, time.perf_counter_ns(), time.time(), new_request_id())
        return await self._aexecute(kwargs)

    def __call__(self, /, **kwargs: Any) -> dict[str, Any]:
        """``execute(**kwargs).to_dict()``: a tool is a plain callable returning a dict."""
        return self._execute(kwargs, None).to_dict()

    def get_manual(self) -> ToolManual:
        """The tool's routing manual: ``manual`` when set, else one derived from its name,
        source and schema size (see :func:`tools.routing.derive_manual`)."""
        from tools.routing import ToolManual, derive_manual

        manual = self.manual
        if isinstance(manual, ToolManual):
            return manual.renamed(self.name)
        return self._cached("_td_manual", lambda: derive_manual(self))

    @property
    def is_async(self) -> bool:
        """True when the work is a coroutine (runs on the event loop, not in a worker thread)."""
        return inspect.iscoroutinefunction(self.execute_internal)

    # ----------------------------------------------------------------- schema

    def input_schema(self) -> dict[str, Any]:
        """The JSON schema of the arguments (a fresh copy)."""
        return copy.deepcopy(self._input_schema())

    def output_schema(self) -> dict[str, Any] | None:
        """The JSON schema of ``data`` when a ``ResponseModel`` is known, else None."""
        if self.ResponseModel is None:
            return None
        from tools.schema import model_schema

        return model_schema(self.ResponseModel, closed=False, mode="serialization")

    def _cached(self, key: str, build: Callable[[], _T]) -> _T:
        """A per-instance memo of derived schema state (dropped by :meth:`reset_schema_cache`)."""
        value = self.__dict__.get(key)
        if value is None:
            value = self.__dict__[key] = build()
        return value

    def _input_schema(self) -> dict[str, Any]:
        from tools.schema import tool_input_schema

        return self._cached("_td_input_schema", lambda: tool_input_schema(self))

    def _accepted(self) -> AcceptedArguments:
        return self._cached("_td_accepted", lambda: describe_arguments(self._input_schema()))

    def _stripper(self) -> Callable[[Any], Any]:
        from tools.schema._nulls import NullStripper

        return self._cached("_td_stripper", lambda: NullStripper(self._input_schema()))

    def _validator(self) -> Any:
        def build() -> Any:
            from jsonschema import validators

            schema = self.parameters or {}
            return validators.validator_for(schema)(schema)

        return self._cached("_td_validator", build)

    def reset_schema_cache(self) -> None:
        """Forget cached schemas and validators after changing ``parameters`` or models."""
        for key in _CACHE_KEYS:
            self.__dict__.pop(key, None)

    # ----------------------------------------------------------------- internals

    def _execute_parsed(self, arguments: str | bytes | Mapping[str, Any] | None) -> ToolResult:
        try:
            kwargs = parse_arguments(arguments, self.name)
        except InvalidArgumentsError as exc:
            return self._error_result(exc, time.perf_counter_ns(), time.time(), new_request_id())
        return self._execute(kwargs, None)

    def _execute(self, kwargs: dict[str, Any] | None, raw: str | bytes | None) -> ToolResult:
        t0 = time.perf_counter_ns()
        started = time.time()
        request_id = new_request_id()
        try:
            if raw is not None:
                # Nulls (strict-mode models send them for every omitted argument) need the
                # general path, which drops them before validating.
                request = None if _mentions_null(raw) else self._validate_json(raw)
                if request is None:  # not the happy path: take the general one
                    return self._execute_parsed(raw)
                if type(request) is InvalidArgumentsError:  # returned, not raised: cheaper
                    return self._error_result(request, t0, started, request_id)
            else:
                request = self._validate(kwargs or {})
            response: Any = self.execute_internal(request)
            if _is_awaitable(response):
                response = run_coroutine_sync(_awaited(response))
            if isinstance(response, ToolResult):
                return self._adopt(response, t0, started, request_id)
            data = self.format_output(response)
        except ToolError as exc:
            return self._error_result(exc, t0, started, request_id)
        except (Exception, SystemExit) as exc:  # every failure becomes an envelope
            return self._unexpected(exc, t0, started, request_id)
        return ToolResult._trusted("success", data, None, self._metadata(t0, started, request_id))

    async def _aexecute(self, kwargs: dict[str, Any]) -> ToolResult:
        t0 = time.perf_counter_ns()
        started = time.time()
        request_id = new_request_id()
        try:
            request = self._validate(kwargs)
            if self.run_in_thread and not self.is_async:
                import asyncio

                response: Any = await asyncio.to_thread(self.execute_internal, request)
            else:
                response = self.execute_internal(request)
            if _is_awaitable(response):
                response = await response
            if isinstance(response, ToolResult):
                return self._adopt(response, t0, started, request_id)
            data = self.format_output(response)
        except ToolError as exc:
            return self._error_result(exc, t0, started, request_id)
        except (Exception, SystemExit) as exc:  # every failure becomes an envelope
            return self._unexpected(exc, t0, started, request_id)
        return ToolResult._trusted("success", data, None, self._metadata(t0, started, request_id))

    def _validate(self, kwargs: dict[str, Any]) -> Any:
        try:
            return self.validate_input(**kwargs)
        except ValidationError as exc:  # raised by an overriding validate_input
            records = from_pydantic_errors(exc.errors(include_url=False, include_context=False))
            raise invalid_arguments(self.name, records, self._accepted()) from None

    def _validate_json(self, raw: str | bytes) -> Any:
        """The happy path for JSON text: validation in pydantic's Rust core, no dict built.

        Returns the request; None when the general path must decide (bad JSON, nulls to
        drop, a root that is not an object); or the model-facing error (returned, not raised).
        """
        model = self.RequestModel
        if model is None:
            return None
        extra = self.__dict__.get("_td_extra", _UNKNOWN)
        if extra is _UNKNOWN:
            extra = self.__dict__["_td_extra"] = _extra_mode(model)
        try:
            return model.model_validate_json(raw, extra=extra)
        except ValidationError as exc:
            errors = exc.errors(include_url=False, include_context=False)
        for err in errors:
            if err["type"] == "json_invalid" or not err["loc"] or err.get("input", 0) is None:
                return None
        return invalid_arguments(self.name, from_pydantic_errors(errors), self._accepted())

    def _metadata(self, t0: int, started: float, request_id: str) -> dict[str, Any]:
        return {
            "tool_name": self.name,
            "tool_version": self.version,
            "request_id": request_id,
            "started_at": _iso_utc(started),
            "duration_ms": (time.perf_counter_ns() - t0) / 1e6,
            "attempts": 1,
        }

    def _adopt(self, result: ToolResult, t0: int, started: float, request_id: str) -> ToolResult:
        """A ``ToolResult`` returned by ``execute_internal`` (e.g. an adapter's) keeps its
        status, data, error and extra metadata; the envelope's own keys are ours."""
        metadata = {**result.metadata, **self._metadata(t0, started, request_id)}
        return ToolResult._trusted(result.status, result.data, result.error, metadata)

    def _error_result(self, exc: ToolError, t0: int, started: float, request_id: str) -> ToolResult:
        details = exc.details if exc.details_jsonable else to_jsonable(exc.details)
        info = ErrorInfo._trusted(exc.error_type, exc.message, exc.retryable, details, exc.trips_breaker)
        return ToolResult._trusted("error", None, info, self._metadata(t0, started, request_id))

    def _unexpected(self, exc: BaseException, t0: int, started: float, request_id: str) -> ToolResult:
        logger.error(
            "tool %r raised %s (request_id=%s)",
            self.name,
            type(exc).__name__,
            request_id,
            exc_info=exc,
        )
        message = (
            f"The tool '{self.name}' failed with an internal error (request id {request_id}). "
            "This was not caused by your arguments; try again later or take another approach."
        )
        if self.expose_exceptions:
            message += f" Exception: {type(exc).__name__}: {exc}"
        info = ErrorInfo("execution_error", message, False, None)
        return ToolResult._trusted("error", None, info, self._metadata(t0, started, request_id))


class _SecondCache:
    """Formats UTC timestamps, reusing the formatted second (the hot path calls it per result)."""

    __slots__ = ("last",)

    def __init__(self) -> None:
        # (second, formatted second) replaced as one tuple, so threads never see a mix.
        self.last = (-1, "")

    def __call__(self, timestamp: float) -> str:
        second = int(timestamp)
        last = self.last
        if last[0] != second:
            last = self.last = (second, datetime.fromtimestamp(second, _UTC).strftime("%Y-%m-%dT%H:%M:%S"))
        return f"{last[1]}.{int((timestamp - second) * 1e6):06d}+00:00"


# A pure formatting memo (no behaviour to inject): ISO-8601 UTC with microseconds.
_iso_utc = _SecondCache()


def _extra_mode(model: type[BaseModel]) -> Literal["forbid"] | None:
    """Request models are closed unless they say ``extra="allow"``."""
    return None if model.model_config.get("extra") == "allow" else "forbid"


_UNKNOWN: Any = object()
_JSON_SCALARS = frozenset({str, int, float, bool, type(None)})


def _mentions_null(raw: str | bytes) -> bool:
    return b"null" in raw if isinstance(raw, bytes) else "null" in raw


def _is_awaitable(value: Any) -> bool:
    """``inspect.isawaitable`` without its slow ABC check (coroutines and awaitables)."""
    return getattr(type(value), "__await__", None) is not None


async def _awaited(awaitable: Any) -> Any:
    return await awaitable


def parse_arguments(arguments: str | bytes | Mapping[str, Any] | None, tool_name: str) -> dict[str, Any]:
    """Decode the arguments of a tool call as a model sends them.

    Accepts JSON text, bytes, an already-decoded mapping, or None/empty for "no arguments".

    Raises:
        InvalidArgumentsError: the text is not JSON, or not a JSON object.
    """
    if arguments is None:
        return {}
    if isinstance(arguments, Mapping):
        return dict(arguments)
    if isinstance(arguments, (str, bytes)):
        if not arguments.strip():
            return {}
        try:
            value = json.loads(arguments)
        except (ValueError, RecursionError) as exc:
            raise InvalidArgumentsError(
                f"The arguments for tool '{tool_name}' are not valid JSON ({_json_problem(exc)}). "
                'Send one JSON object, e.g. {"argument": "value"}.'
            ) from None
        if value is None:
            return {}
        if isinstance(value, dict):
            return value
        raise invalid_arguments(
            tool_name,
            [field_error((), "arguments must be a JSON object", value)],
            None,
            headline=f"The arguments for tool '{tool_name}' must be a JSON object, not {type(value).__name__}:",
        )
    raise InvalidArgumentsError(
        f"The arguments for tool '{tool_name}' must be a JSON object, not {type(arguments).__name__}."
    )


def _json_problem(exc: BaseException) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} at line {exc.lineno} column {exc.colno}"
    return "nested too deeply" if isinstance(exc, RecursionError) else str(exc)


def prepare_parameters(schema: Any, *, owner: str) -> dict[str, Any]:
    """A hand-written ``parameters`` schema, checked, in standard JSON Schema.

    Schemas in the dialects of public function-calling corpora (BFCL's ``"type": "dict"``
    / ``"float"``, APIGen's bare parameter maps with Python type names) are converted, with
    a WARNING listing each change; then the result is checked against the meta-schema.

    Raises:
        ToolDefinitionError: naming ``owner``, the problem and the fix.
    """
    if not isinstance(schema, Mapping):
        raise ToolDefinitionError(f"{owner}: parameters must be a JSON schema object (a dict).")
    from tools.schema._dialects import normalize_parameters

    normalized, changes = normalize_parameters(schema)
    if changes:
        logger.warning("%s: parameters converted to JSON Schema: %s", owner, "; ".join(changes))
    check_parameters_schema(normalized, owner=owner)
    return normalized


def check_parameters_schema(schema: Any, *, owner: str) -> None:
    """Check a hand-written ``parameters`` schema against the JSON-schema meta-schema.

    Raises:
        ToolDefinitionError: naming ``owner``, the problem and the fix.
    """
    if not isinstance(schema, Mapping):
        raise ToolDefinitionError(f"{owner}: parameters must be a JSON schema object (a dict).")
    kind = schema.get("type", "object")
    if kind != "object":
        raise ToolDefinitionError(
            f"{owner}: parameters must describe an object (type 'object'), got type {kind!r}; "
            'wrap the arguments: {"type": "object", "properties": {...}}.'
        )
    from jsonschema import exceptions, validators

    try:
        validators.validator_for(schema).check_schema(schema)
    except exceptions.SchemaError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "(root)"
        raise ToolDefinitionError(f"{owner}: parameters is not a valid JSON schema at {where}: {exc.message}") from None
