"""The envelope every tool call returns: :class:`ToolResult` and :class:`ErrorInfo`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic_core import to_jsonable_python

from tools.errors import BREAKER_FAILURE_TYPES, ErrorType

Status = Literal["success", "error"]


def _jsonable_fallback(value: Any) -> Any:
    """Last resort for values pydantic cannot serialise: their ``str``."""
    return str(value)


def to_jsonable(value: Any) -> Any:
    """Return ``value`` as JSON-compatible data (pydantic's JSON mode, ``str`` as fallback).

    datetime -> ISO string, Decimal -> string, set -> list, models and dataclasses -> dicts.
    """
    return to_jsonable_python(value, fallback=_jsonable_fallback)


@dataclass(frozen=True, slots=True)
class ErrorInfo:
    """What went wrong in a call, written for the model.

    Attributes:
        type: One of the :data:`~tools.errors.ErrorType` values.
        message: What was wrong and how to call correctly.
        retryable: Whether the same call may succeed if tried again.
        details: Optional JSON-compatible details (field errors, choices, ...).
        trips_breaker: Whether the failure counts against the tool's circuit breaker;
            None: decided by ``type`` (``execution_error``, ``upstream_error`` and
            ``timeout`` count). Not shown to the model.
    """

    type: ErrorType
    message: str
    retryable: bool = False
    details: dict[str, Any] | None = None
    trips_breaker: bool | None = None

    @property
    def counts_as_failure(self) -> bool:
        """Whether the circuit breaker counts this error as a failure of the tool."""
        trips = self.trips_breaker
        return self.type in BREAKER_FAILURE_TYPES if trips is None else trips

    @classmethod
    def _trusted(
        cls,
        type: ErrorType,
        message: str,
        retryable: bool,
        details: dict[str, Any] | None,
        trips_breaker: bool | None = None,
    ) -> ErrorInfo:
        """Build an error record without the frozen-dataclass ``__init__`` (the hot path)."""
        info = _new(cls)
        _set_type(info, type)
        _set_message(info, message)
        _set_retryable(info, retryable)
        _set_details(info, details)
        _set_trips(info, trips_breaker)
        return info


@dataclass(frozen=True, slots=True)
class ToolResult:
    """The result of one tool call: success with ``data`` or error with ``error``.

    ``data`` is for the model, ``metadata`` for the application (``duration_ms``,
    ``tool_name``, ``tool_version``, ``request_id``, ``started_at``, ``attempts`` and
    whatever a tool adds). Both are made JSON-compatible on construction, so
    :meth:`to_dict` is always JSON-serialisable.
    """

    status: Status
    data: Any = None
    error: ErrorInfo | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.data is not None:
            object.__setattr__(self, "data", to_jsonable(self.data))
        if self.error is not None and self.error.details is not None:
            details = to_jsonable(self.error.details)
            object.__setattr__(self, "error", _replace_details(self.error, details))
        object.__setattr__(self, "metadata", to_jsonable(self.metadata))

    @property
    def ok(self) -> bool:
        """True when the call succeeded."""
        return self.status == "success"

    @classmethod
    def _trusted(cls, status: Status, data: Any, error: ErrorInfo | None, metadata: dict[str, Any]) -> ToolResult:
        """Build a result from values already JSON-compatible (the framework's hot path)."""
        result = _new(cls)
        _set_status(result, status)
        _set_data(result, data)
        _set_error(result, error)
        _set_metadata(result, metadata)
        return result

    @classmethod
    def success(cls, data: Any = None, metadata: dict[str, Any] | None = None) -> ToolResult:
        """A successful result carrying ``data``."""
        return cls("success", data, None, metadata or {})

    @classmethod
    def failure(
        cls,
        error_type: ErrorType,
        message: str,
        *,
        retryable: bool = False,
        details: dict[str, Any] | None = None,
        data: Any = None,
        metadata: dict[str, Any] | None = None,
    ) -> ToolResult:
        """An error result; ``message`` must tell the model what to do instead."""
        info = ErrorInfo(error_type, message, retryable, details)
        return cls("error", data, info, metadata or {})

    def with_metadata(self, **extra: Any) -> ToolResult:
        """A copy of this result with ``extra`` merged into its metadata."""
        return ToolResult(self.status, self.data, self.error, {**self.metadata, **extra})

    def _with_trusted_metadata(self, **extra: Any) -> ToolResult:
        return ToolResult._trusted(self.status, self.data, self.error, {**self.metadata, **extra})

    def to_dict(self) -> dict[str, Any]:
        """The plain, JSON-serialisable dict the registry and the graph hand around.

        Success: ``{"status", "data", "_metadata"}``. Error: ``{"status", "error" (the
        message), "error_type", "retryable", "details"?, "data"?, "_metadata"}``.
        """
        error = self.error
        if error is None:
            return {"status": self.status, "data": self.data, "_metadata": dict(self.metadata)}
        out: dict[str, Any] = {
            "status": self.status,
            "error": error.message,
            "error_type": error.type,
            "retryable": error.retryable,
        }
        if error.details is not None:
            out["details"] = error.details
        if self.data is not None:
            out["data"] = self.data
        out["_metadata"] = dict(self.metadata)
        return out


def _replace_details(error: ErrorInfo, details: Any) -> ErrorInfo:
    return ErrorInfo(error.type, error.message, error.retryable, details, error.trips_breaker)


# Slot setters of the frozen dataclass, for ``ToolResult._trusted`` (half the cost of
# ``object.__setattr__`` by name on the hot path).
_new = object.__new__
_set_status = ToolResult.__dict__["status"].__set__
_set_data = ToolResult.__dict__["data"].__set__
_set_error = ToolResult.__dict__["error"].__set__
_set_metadata = ToolResult.__dict__["metadata"].__set__
_set_type = ErrorInfo.__dict__["type"].__set__
_set_message = ErrorInfo.__dict__["message"].__set__
_set_retryable = ErrorInfo.__dict__["retryable"].__set__
_set_details = ErrorInfo.__dict__["details"].__set__
_set_trips = ErrorInfo.__dict__["trips_breaker"].__set__
