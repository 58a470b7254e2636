"""``BaseTool[TRequest, TResponse]``: validate -> execute -> format, inside one envelope."""

from __future__ import annotations

import copy
import functools
import inspect
import itertools
import json
import logging
import os
import time
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Mapping
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar, get_args, get_origin

from pydantic import BaseModel, ValidationError

from tools._aio import DeadlineExceeded, bounded, run_coroutine_sync, tool_loop
from tools._arguments import (
    AcceptedArguments,
    describe_arguments,
    from_pydantic_errors,
    invalid_arguments,
    parse_arguments,
    validate_with_schema,
)
from tools._foreign_errors import model_facing_text
from tools._names import check_tool_name
from tools._validation import RequestValidator
from tools.errors import ToolDefinitionError, ToolError, ToolTimeoutError
from tools.result import ErrorInfo, ToolResult, to_jsonable

if TYPE_CHECKING:
    from tools._executor import ToolExecutor
    from tools.manual import ToolManual
    from tools.resilience import RetryPolicy

logger = logging.getLogger(__name__)

TRequest = TypeVar("TRequest")
TResponse = TypeVar("TResponse")
_T = TypeVar("_T")
_CACHE_KEYS = (
    "_td_input_schema",
    "_td_accepted",
    "_td_stripper",
    "_td_validator",
    "_td_request_validator",
    "_td_manual",
    "_td_is_async",
    "_td_fast",
)
Arguments = str | bytes | Mapping[str, Any] | None

# Cheap, unique-enough request ids: a per-process random prefix and a counter, formatted
# by an iterator that runs in C (``next`` is all the hot path pays).
_ID_PREFIX = os.urandom(3).hex()
_ids = map(f"{_ID_PREFIX}-{{:x}}".format, itertools.count(1))
_UTC = timezone.utc
_perf_ns = time.perf_counter_ns
_now = time.time


def new_request_id() -> str:
    """A short id, unique within this process and unlikely to collide across processes."""
    return next(_ids)


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
            set False for thread-affine tools (they then run on the event loop).
        run_on_shared_loop: Where an async tool runs when called from async code. False
            (default): on the caller's own event loop, awaited in place (no thread hop; it
            sees the caller's context variables and may use the caller's loop resources).
            True: on the process's long-lived tool loop, for a tool holding loop-bound state
            (an ``httpx.AsyncClient``, an ``asyncio.Lock``) that must keep working whether
            sync or async code calls it. Sync callers always run async tools on the tool loop
            (one hop).
        expose_exceptions: Show unexpected exception text to the model (debugging only).
        expose_errors: Exception classes (or dotted class names) whose text is written for
            the model, beyond tooldeck's ``ToolError`` and the frameworks' tool errors that
            are recognised by default (see :mod:`tools._foreign_errors`).
        manual: Routing metadata (a ``ToolManual``), optional.
        stateful: Whether the instance holds state (a client, a cache) that must live in
            one place when calls run in other processes: True runs them on one Ray actor
            per instance, False as independent tasks; None: decided from the instance
            (:func:`tools.executors.is_stateful`).
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
    run_on_shared_loop: bool = False
    expose_exceptions: bool = False
    expose_errors: tuple[type[BaseException] | str, ...] = ()
    manual: ToolManual | None = None
    stateful: bool | None = None

    _default_validation: ClassVar[bool] = True
    _custom_format: ClassVar[bool] = False

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
        # The bound-validator path is only valid when validation is the default one, and a
        # default format_output already returns JSON-compatible data.
        cls._default_validation = cls.validate_input is BaseTool.validate_input
        cls._custom_format = cls.format_output is not BaseTool.format_output

    # ----------------------------------------------------------------- lifecycle

    def validate_input(self, /, **kwargs: Any) -> TRequest:
        """Turn the model's arguments into the request ``execute_internal`` receives.

        Default: validation against ``RequestModel`` in pydantic's JSON mode (closed:
        unknown arguments are an error unless the model says ``extra="allow"``), else
        against ``parameters``.

        Raises:
            InvalidArgumentsError: with field-level messages for the model.
        """
        if self.RequestModel is not None:
            return self._request_validator().from_mapping(kwargs)  # type: ignore[no-any-return]
        if self.parameters is None:
            return kwargs  # type: ignore[return-value]
        return validate_with_schema(  # type: ignore[return-value]
            self._validator(), kwargs, schema=self.parameters, tool_name=self.name, strip=self._stripper()
        )

    @abstractmethod
    def execute_internal(self, request: TRequest) -> TResponse | ToolResult | Awaitable[TResponse | ToolResult]:
        """Do the work (may be ``async def``); raise ``ToolError`` for failures the model sees.

        Returning a :class:`~tools.result.ToolResult` instead of a response (what adapters of
        remote tools do) skips ``format_output``: its status, data, error and extra metadata
        are kept, and the envelope's own metadata keys are filled in as usual.
        """

    def format_output(self, response: TResponse) -> Any:
        """Turn the response into the ``data`` the model sees (default: JSON-mode dump).

        An override may return anything pydantic can serialise (datetimes, decimals, sets,
        models...): the envelope converts it to JSON-compatible data.
        """
        if type(response) in _JSON_SCALARS:
            return response
        if isinstance(response, BaseModel):
            return response.model_dump(mode="json")
        return to_jsonable(response)

    # ----------------------------------------------------------------- entry points

    def execute(self, /, **kwargs: Any) -> ToolResult:
        """Run the whole lifecycle synchronously; never raises for bad input or tool failures."""
        return self._run(kwargs)

    def execute_raw(self, arguments: Arguments) -> ToolResult:
        """Like :meth:`execute`, with the arguments as an LLM sends them (JSON text or a dict).

        Empty or ``None`` means no arguments; text that is not a JSON object is a
        ``validation_error`` telling the model to send one.
        """
        return self._run(arguments)

    async def aexecute(self, /, **kwargs: Any) -> ToolResult:
        """Async twin of :meth:`execute`: sync tools run in a worker thread (unless opted out)."""
        return await self._arun(kwargs)

    async def aexecute_raw(self, arguments: Arguments) -> ToolResult:
        """Async twin of :meth:`execute_raw`."""
        return await self._arun(arguments)

    def __call__(self, /, **kwargs: Any) -> dict[str, Any]:
        """``execute(**kwargs).to_dict()``: a tool is a plain callable returning a dict."""
        return self._run(kwargs).to_dict()

    def get_manual(self) -> ToolManual:
        """The tool's manual: ``manual`` when set, else one that fails closed (``moderate``,
        ``mutating``, ``unclassified``; see :func:`tools.manual.derive_manual`)."""
        from tools._fail_closed import derive_manual
        from tools.manual import ToolManual

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
        """A per-instance memo of derived state (dropped by :meth:`reset_schema_cache`)."""
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
        from tools.schema import NullStripper

        return self._cached("_td_stripper", lambda: NullStripper(self._input_schema()))

    def _validator(self) -> Any:
        def build() -> Any:
            from jsonschema import validators

            schema = self.parameters or {}
            return validators.validator_for(schema)(schema)

        return self._cached("_td_validator", build)

    def _request_validator(self) -> RequestValidator:
        def build() -> RequestValidator:
            model = self.RequestModel
            if model is None:
                raise ToolDefinitionError(f"tool {self.name!r} has no RequestModel to validate with.")
            return RequestValidator(model, tool_name=self.name, accepted=self._accepted, strip=self._stripper)

        return self._cached("_td_request_validator", build)

    def _async_work(self) -> bool:
        return self._cached("_td_is_async", lambda: self.is_async)

    def reset_schema_cache(self) -> None:
        """Forget cached schemas and validators after changing ``parameters`` or models."""
        for key in _CACHE_KEYS:
            self.__dict__.pop(key, None)

    # ----------------------------------------------------------------- internals

    def _request(self, arguments: Arguments) -> Any:
        """The validated request from arguments in any form; raises ``ToolError``."""
        if self._default_validation and self.RequestModel is not None:
            validator = self._request_validator()
            self.__dict__["_td_fast"] = validator  # the bound validator of the hot path
            if isinstance(arguments, (str, bytes)):
                return validator.from_json(arguments)
            return validator.from_mapping(arguments or {})
        kwargs = arguments if type(arguments) is dict else parse_arguments(arguments, self.name)
        try:
            return self.validate_input(**kwargs)
        except ValidationError as exc:  # raised by an overriding validate_input
            records = from_pydantic_errors(exc.errors(include_url=False, include_context=False))
            raise invalid_arguments(self.name, records, self._accepted()) from None

    def _validated(self, arguments: Arguments) -> Any:
        """The request: through the tool's bound validator when it has one (the hot path)."""
        fast = self.__dict__.get("_td_fast")
        if fast is not None:
            kind = type(arguments)
            if kind is str:
                return fast.from_json(arguments)
            if kind is dict:
                return fast.from_mapping(arguments)
        return self._request(arguments)

    def _run(
        self, arguments: Arguments, timeout: float | None = None, executor: ToolExecutor | None = None
    ) -> ToolResult:
        """The sync lifecycle. ``timeout`` (through a registry) bounds the work: an async
        tool is cancelled, a sync one runs in an ``executor`` worker that is abandoned."""
        t0 = _perf_ns()
        started = _now()
        try:
            fast = self.__dict__.get("_td_fast")  # _validated, inlined: this is the hot path
            if fast is not None and type(arguments) is str:
                request = fast.from_json(arguments)
            else:
                request = self._validated(arguments)
            if timeout is None:
                response: Any = self.execute_internal(request)
                if getattr(type(response), "__await__", None) is not None:
                    response = run_coroutine_sync(_awaited(response))
            elif self._async_work():
                response = self.execute_internal(request)
                if getattr(type(response), "__await__", None) is not None:
                    response = run_coroutine_sync(_awaited(response), timeout=timeout)
            elif executor is not None:
                work = functools.partial(self.execute_internal, request)
                response = executor.run(work, timeout=timeout, label=self.name)
            else:  # pragma: no cover - the registry always passes its executor with a timeout
                response = self.execute_internal(request)
            if type(response) in _JSON_SCALARS and not self._custom_format:
                return ToolResult._trusted("success", response, None, self._metadata(t0, started))
            return self._success(response, t0, started)
        except ToolError as exc:
            return self._error_result(exc, t0, started)
        except DeadlineExceeded:
            return self._error_result(_timed_out(self.name, timeout), t0, started)
        except (Exception, SystemExit) as exc:  # every failure becomes an envelope
            return self._unexpected(exc, t0, started)

    async def _arun(
        self, arguments: Arguments, timeout: float | None = None, executor: ToolExecutor | None = None
    ) -> ToolResult:
        """The async lifecycle: async tools on the tool loop, sync ones in a worker thread."""
        t0 = _perf_ns()
        started = _now()
        try:
            fast = self.__dict__.get("_td_fast")  # _validated, inlined: this is the hot path
            if fast is not None and type(arguments) is str:
                request = fast.from_json(arguments)
            else:
                request = self._validated(arguments)
            if timeout is None and self.__dict__.get("_td_is_async") and not self.run_on_shared_loop:
                response = await self.execute_internal(request)  # type: ignore[misc]  # in place
            else:
                response = await self._awork(request, timeout, executor)
            if getattr(type(response), "__await__", None) is not None:
                response = await response
            if type(response) in _JSON_SCALARS and not self._custom_format:
                return ToolResult._trusted("success", response, None, self._metadata(t0, started))
            return self._success(response, t0, started)
        except ToolError as exc:
            return self._error_result(exc, t0, started)
        except DeadlineExceeded:
            return self._error_result(_timed_out(self.name, timeout), t0, started)
        except (Exception, SystemExit) as exc:  # every failure becomes an envelope
            return self._unexpected(exc, t0, started)

    async def _awork(self, request: Any, timeout: float | None, executor: ToolExecutor | None) -> Any:
        """Run the work from async code: an async tool on the tool loop (or the caller's),
        a sync one in a worker thread (or inline when thread-affine)."""
        is_async = self.__dict__.get("_td_is_async")
        if is_async is None:
            is_async = self._async_work()
        if is_async:
            work: Any = self.execute_internal(request)
            if self.run_on_shared_loop:
                work = tool_loop().arun(work)
            return await bounded(work, timeout)
        if not self.run_in_thread:
            return self.execute_internal(request)  # thread-affine: on the loop, unbounded
        if executor is not None:
            fn = functools.partial(self.execute_internal, request)
            return await executor.arun(fn, timeout=timeout, label=self.name)
        import asyncio

        return await bounded(asyncio.to_thread(self.execute_internal, request), timeout)

    def _success(self, response: Any, t0: int, started: float) -> ToolResult:
        if isinstance(response, ToolResult):
            return self._adopt(response, t0, started)
        data = self.format_output(response)
        if self._custom_format and type(data) not in _JSON_SCALARS:
            data = to_jsonable(data)
        return ToolResult._trusted("success", data, None, self._metadata(t0, started))

    def _metadata(self, t0: int, started: float) -> dict[str, Any]:
        """The envelope's metadata: a fresh request id, the start time, the duration so far."""
        return {
            "tool_name": self.name,
            "tool_version": self.version,
            "request_id": next(_ids),
            "started_at": _iso_utc(started),
            "duration_ms": (_perf_ns() - t0) / 1e6,
            "attempts": 1,
        }

    def _adopt(self, result: ToolResult, t0: int, started: float) -> ToolResult:
        """A ``ToolResult`` returned by ``execute_internal`` (e.g. an adapter's) keeps its
        status, data, error and extra metadata; the envelope's own keys are ours."""
        metadata = {**result.metadata, **self._metadata(t0, started)}
        return ToolResult._trusted(result.status, result.data, result.error, metadata)

    def _error_result(self, exc: ToolError, t0: int, started: float) -> ToolResult:
        details = exc.details if exc.details_jsonable else to_jsonable(exc.details)
        info = ErrorInfo._trusted(exc.error_type, exc.message, exc.retryable, details, exc.trips_breaker)
        return ToolResult._trusted("error", None, info, self._metadata(t0, started))

    def _unexpected(self, exc: BaseException, t0: int, started: float) -> ToolResult:
        metadata = self._metadata(t0, started)
        request_id = metadata["request_id"]
        foreign = model_facing_text(exc, self.expose_errors)
        if foreign is not None:  # another framework's tool error: its text is for the model
            logger.debug("tool %r raised %s (request_id=%s)", self.name, type(exc).__name__, request_id, exc_info=exc)
            info = ErrorInfo("execution_error", foreign, False, None, trips_breaker=False)  # as a ToolError
            return ToolResult._trusted("error", None, info, metadata)
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
        return ToolResult._trusted("error", None, info, metadata)


def _timed_out(name: str, timeout: float | None) -> ToolTimeoutError:
    return ToolTimeoutError(
        f"The tool '{name}' did not finish within {timeout or 0:g} s and was stopped waiting for. "
        "Try a smaller request, or try again later.",
        details={"timeout_s": timeout},
    )


def _millisecond_formatter() -> Callable[[float], str]:
    """Formats UTC start times to the millisecond, reusing the last string: calls that start
    in the same millisecond share it, so the hot path rarely formats anything."""
    # (millisecond, formatted) replaced as one tuple, so threads never see a mix.
    cache = [(-1, "")]

    def iso(timestamp: float) -> str:
        millis = int(timestamp * 1000)
        last = cache[0]
        if last[0] == millis:
            return last[1]
        second, fraction = divmod(millis, 1000)
        text = f"{datetime.fromtimestamp(second, _UTC).strftime('%Y-%m-%dT%H:%M:%S')}.{fraction:03d}000+00:00"
        cache[0] = (millis, text)
        return text

    return iso


# A pure formatting memo (no behaviour to inject): ISO-8601 UTC, millisecond precision
# (``duration_ms`` carries the precise timing).
_iso_utc = _millisecond_formatter()

_JSON_SCALARS = frozenset({str, int, float, bool, type(None)})


async def _awaited(awaitable: Any) -> Any:
    return await awaitable


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
    try:
        canonical = json.dumps(schema, sort_keys=True)
    except (TypeError, ValueError, RecursionError):  # not JSON (e.g. a date default): check it as is
        problem = _meta_schema_problem_of(schema)
    else:
        problem = _meta_schema_problem(canonical)
    if problem is not None:
        raise ToolDefinitionError(f"{owner}: parameters is not a valid JSON schema at {problem}")


@functools.lru_cache(maxsize=4096)
def _meta_schema_problem(canonical: str) -> str | None:
    """The meta-schema verdict on one schema, memoised by its canonical JSON: registering
    hundreds of tools that share schemas checks each distinct schema once."""
    return _meta_schema_problem_of(json.loads(canonical))


def _meta_schema_problem_of(schema: Mapping[str, Any]) -> str | None:
    """None when ``schema`` is valid under its draft's meta-schema, else "where: problem".

    ``jsonschema-rs`` (Rust, about 250 times faster) accepts the valid ones; a schema it
    rejects, or any schema when it is not installed, is judged by ``jsonschema``, whose
    messages name the place and the problem.
    """
    try:
        import jsonschema_rs
    except ImportError:  # pragma: no cover - a core dependency; the pure-Python check remains
        pass
    else:
        try:
            if jsonschema_rs.meta.is_valid(dict(schema)):
                return None
        except Exception:  # noqa: S110 - an odd value it cannot read: let jsonschema decide
            pass
    from jsonschema import exceptions, validators

    try:
        validators.validator_for(schema).check_schema(schema)
    except exceptions.SchemaError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "(root)"
        return f"{where}: {exc.message}"
    return None
