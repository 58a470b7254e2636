"""The exception tree of tooldeck, split by who can fix the problem.

::

    TooldeckError
    ├── ToolError                  raised inside a tool; its message is shown to the model
    │   ├── InvalidArgumentsError  the model sent bad arguments   -> validation_error
    │   │   ├── UnknownToolError   no tool by that name           -> unknown_tool
    │   │   └── UnknownActionError no action by that name         -> unknown_action
    │   ├── UpstreamError          a service the tool needs failed -> upstream_error (retryable)
    │   ├── ToolTimeoutError       the call ran out of time       -> timeout (retryable)
    │   ├── PermissionDeniedError  the call is not allowed        -> permission_denied
    │   ├── CircuitOpenError       the tool is failing, resting   -> circuit_open (retryable)
    │   ├── ToolSaturatedError     no worker thread is free       -> execution_error (retryable)
    │   └── ToolCancelledError     the run was cancelled          -> cancelled
    ├── DataFileError              a registry / approvals file is unusable (left untouched)
    └── ToolDefinitionError        the developer misused the API; raised, never enveloped
        ├── InvalidToolNameError   a name OpenAI would reject
        ├── DuplicateToolError     a name registered twice without ``replace=True``
        └── UnsupportedSchemaError a schema strict mode cannot express (``on_unsupported="raise"``)

Everything under ``ToolError`` becomes an error :class:`~tools.result.ToolResult` whose
``error.type`` is the class's ``error_type``. Whether the failure counts against the tool's
circuit breaker is the exception's ``trips_breaker``: a failure caused by the input (a page
that answers 404, a problem too hard to solve in time) must not take the tool down for
everyone, so ``ToolError`` does not trip by default; ``UpstreamError`` and
``ToolTimeoutError`` (the tool's backend failing) do. Any other exception escaping a tool becomes an
``execution_error`` with a redacted message; the traceback goes to the log.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Literal

if TYPE_CHECKING:
    from pathlib import Path

ErrorType = Literal[
    "validation_error",
    "unknown_tool",
    "unknown_action",
    "timeout",
    "circuit_open",
    "permission_denied",
    "upstream_error",
    "execution_error",
    "cancelled",
]

#: Error types that count as a failure of the tool for the circuit breaker when the error
#: does not say otherwise (``ErrorInfo.trips_breaker``).
BREAKER_FAILURE_TYPES: frozenset[str] = frozenset({"execution_error", "upstream_error", "timeout"})


class TooldeckError(Exception):
    """Root of every exception tooldeck raises or understands."""


class ToolError(TooldeckError):
    """A failure a tool author raises on purpose; the message is shown to the model.

    Args:
        message: What went wrong and what a correct call looks like, written for the model.
        retryable: Whether calling again with the same arguments may succeed.
        details: Optional JSON-serialisable details for the model and the application.
        trips_breaker: Whether this failure counts against the tool's circuit breaker
            (default: the class's ``default_trips_breaker``; False for failures caused by
            this call's input, True for the tool's own backend failing).
    """

    error_type: ClassVar[ErrorType] = "execution_error"
    default_retryable: ClassVar[bool] = False
    default_trips_breaker: ClassVar[bool] = False

    def __init__(
        self,
        message: str,
        *,
        retryable: bool | None = None,
        details: dict[str, Any] | None = None,
        trips_breaker: bool | None = None,
    ) -> None:
        Exception.__init__(self, message)  # one call up the tree: errors are built on hot paths
        self.message = message
        self.retryable = self.default_retryable if retryable is None else retryable
        self.details = details
        self.trips_breaker = self.default_trips_breaker if trips_breaker is None else trips_breaker
        #: Set by the framework when ``details`` is known to be JSON-compatible already.
        self.details_jsonable = details is None


class InvalidArgumentsError(ToolError):
    """The arguments do not fit the tool's schema; the model can fix its call."""

    error_type: ClassVar[ErrorType] = "validation_error"


class UnknownToolError(InvalidArgumentsError):
    """No tool is registered under the requested name."""

    error_type: ClassVar[ErrorType] = "unknown_tool"


class UnknownActionError(InvalidArgumentsError):
    """A composite tool was called with a missing or unknown ``action``."""

    error_type: ClassVar[ErrorType] = "unknown_action"


class UpstreamError(ToolError):
    """A service the tool depends on failed (HTTP 5xx, connection refused, ...)."""

    error_type: ClassVar[ErrorType] = "upstream_error"
    default_retryable = True
    default_trips_breaker = True


class ToolTimeoutError(ToolError):
    """The call did not finish within its time limit."""

    error_type: ClassVar[ErrorType] = "timeout"
    default_retryable = True
    default_trips_breaker = True


class PermissionDeniedError(ToolError):
    """The call is not allowed (approval refused, path outside a sandbox, ...)."""

    error_type: ClassVar[ErrorType] = "permission_denied"


class CircuitOpenError(ToolError):
    """The tool failed repeatedly and its circuit breaker is open."""

    error_type: ClassVar[ErrorType] = "circuit_open"
    default_retryable = True


class ToolSaturatedError(ToolError):
    """Every worker thread of the registry is busy (or held by a call that timed out):
    the call was refused at once, never queued. Retryable; not the tool's fault."""

    default_retryable = True


class ToolCancelledError(ToolError):
    """The run was cancelled before the call finished."""

    error_type: ClassVar[ErrorType] = "cancelled"


class DataFileError(TooldeckError):
    """A file tooldeck keeps (a registry, the approvals) cannot be used; it is left untouched.

    Attributes:
        path: The file.
        line: The 1-based line of the problem, when known.
        problem: What is wrong.
    """

    #: What the file is, in messages ("registry file", "approvals file").
    kind: ClassVar[str] = "data file"

    def __init__(self, path: Path, problem: str, *, line: int | None = None) -> None:
        where = f"{path}:{line}" if line is not None else str(path)
        super().__init__(
            f"{self.kind} {where}: {problem}; fix or remove the file (tooldeck never overwrites a file it cannot read)"
        )
        self.path = path
        self.line = line
        self.problem = problem


class ToolDefinitionError(TooldeckError):
    """The developer misused the API: the message names the tool, the field and the fix."""


class InvalidToolNameError(ToolDefinitionError, ValueError):
    """A tool name does not match ``^[a-zA-Z0-9_-]{1,64}$``."""


class DuplicateToolError(ToolDefinitionError, ValueError):
    """A tool name is already registered and ``replace=True`` was not given."""


class UnsupportedSchemaError(ToolDefinitionError, ValueError):
    """A schema uses a construct OpenAI strict mode cannot express."""
