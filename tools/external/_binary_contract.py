"""The subprocess tool binary contract: the ``--schema`` document, probing and calling.

A tool binary is an executable file that:

* on ``<binary> --schema`` prints one JSON object and exits 0::

      {"name": "word_count",                       # optional; default: the file name
       "description": "Count words in a text.",    # prompt text for the model
       "version": "1.0.0",                         # optional
       "input_schema": {"type": "object", ...},    # JSON schema of the arguments
       "output_schema": {...} | null,              # optional JSON schema of the output
       "tags": ["text", "stats"]}                  # optional: up to 32 short labels

* otherwise reads one JSON object (the arguments) on stdin, writes its JSON output on stdout
  and exits 0. A non-zero exit is an error whose message is stderr. Output shaped like a
  tooldeck envelope (``{"status": ..., "_metadata": ...}``, as written by
  :func:`tools.external.binary.serve`) is unwrapped: its ``data`` or its error is used.
  When the binary declared an ``output_schema``, its output must match it
  (:func:`check_output`): anything else is an ``upstream_error`` naming the binary and the
  field.

The executor runs binaries with ``TOOLDECK_TOOL_MODE=subprocess`` in their environment.
"""

from __future__ import annotations

import errno
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal, cast, get_args

from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import SchemaError
from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from tools._arguments import field_error
from tools._names import TOOL_NAME_RULE, sanitize_tool_name
from tools.errors import ErrorType
from tools.external._process import ProcessOutcome, ProcessRunner, RunnerClosedError
from tools.external._redact import clip
from tools.result import ToolResult

MODE_VARIABLE = "TOOLDECK_TOOL_MODE"
MODE_VALUE = "subprocess"
MAX_SCHEMA_BYTES = 1_000_000
MAX_MESSAGE_CHARS = 2_000
MAX_TAGS = 32
MAX_OUTPUT_ERRORS = 5
BinaryState = Literal["ready", "schema-unknown", "missing-binary", "broken"]
_ERROR_TYPES = frozenset(get_args(ErrorType))


class BinarySchema(BaseModel):
    """The document a binary prints on ``--schema``."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    name: str | None = Field(default=None, pattern=TOOL_NAME_RULE)
    description: str = ""
    version: str = "0.0.0"
    input_schema: dict[str, Any] = Field(default_factory=lambda: {"type": "object"})
    output_schema: dict[str, Any] | None = None
    tags: list[Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=64)]] = Field(
        default_factory=list, max_length=MAX_TAGS
    )

    def digest(self) -> str:
        """A short hash of the document, to notice schema changes."""
        blob = json.dumps(self.model_dump(mode="json"), sort_keys=True).encode()
        return hashlib.sha256(blob).hexdigest()[:16]


@dataclass(frozen=True)
class Probe:
    """What ``--schema`` told us about one binary."""

    state: BinaryState
    schema: BinarySchema | None = None
    message: str | None = None

    def to_json(self) -> dict[str, Any]:
        """A JSON-compatible form for the schema cache."""
        schema = self.schema.model_dump(mode="json") if self.schema else None
        return {"state": self.state, "schema": schema, "message": self.message}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Probe:
        """The inverse of :meth:`to_json`; raises ``ValueError`` on malformed data."""
        state = data.get("state")
        if state not in ("ready", "schema-unknown", "broken"):
            raise ValueError(f"bad cached state {state!r}")
        raw = data.get("schema")
        try:
            schema = BinarySchema.model_validate(raw) if raw is not None else None
        except ValidationError as exc:
            raise ValueError(str(exc)) from None
        message = data.get("message")
        return cls(state, schema, message if isinstance(message, str) else None)


def derive_name(filename: str) -> str:
    """A valid tool name from a file name: extension dropped, odd characters -> ``_``."""
    stem = filename.rsplit(".", 1)[0] if "." in filename[1:] else filename
    return sanitize_tool_name(stem)


def parse_schema_document(stdout: bytes) -> Probe:
    """Judge a ``--schema`` answer of a binary that exited 0.

    Empty or non-JSON output means the binary does not implement ``--schema``
    (``schema-unknown``); a JSON answer that breaks the contract (not an object, invalid
    ``input_schema``) is ``broken``.
    """
    text = stdout.decode("utf-8", "replace").strip()
    if not text:
        return Probe("schema-unknown", message="printed nothing for --schema")
    try:
        raw = json.loads(text)
    except ValueError:
        return Probe("schema-unknown", message="--schema output is not JSON")
    problem = _contract_problem(raw)
    if problem is not None:
        return Probe("broken", message=clip(problem, 500))
    return Probe("ready", BinarySchema.model_validate(raw))


def _contract_problem(raw: Any) -> str | None:
    if not isinstance(raw, dict):
        return "--schema printed JSON that is not an object"
    try:
        schema = BinarySchema.model_validate(raw)
        Draft202012Validator.check_schema(schema.input_schema)
        if schema.output_schema is not None:
            Draft202012Validator.check_schema(schema.output_schema)
    except ValidationError as exc:
        return f"invalid --schema document: {exc}"
    except SchemaError as exc:
        return f"invalid JSON schema: {exc.message}"
    if schema.input_schema.get("type", "object") != "object":
        return "input_schema must describe an object"
    return None


def probe_binary(path: str, runner: ProcessRunner, env: Mapping[str, str], timeout: float) -> Probe:
    """Run ``path --schema`` (empty stdin) and judge the answer; never raises for the binary.

    Raises:
        FileNotFoundError: the file vanished.
        RunnerClosedError: the runner is shut down.
    """
    try:
        outcome = runner.run([path, "--schema"], env=env, timeout=timeout, max_output_bytes=MAX_SCHEMA_BYTES)
    except FileNotFoundError:
        raise
    except RunnerClosedError:
        raise
    except OSError as exc:
        if exc.errno == errno.ETXTBSY:
            raise  # being written right now: try again on the next scan
        return Probe("broken", message=f"cannot execute: {exc.strerror or exc}")
    if outcome.timed_out:
        return Probe("schema-unknown", message=f"no answer to --schema within {timeout:g} s")
    if outcome.output_overflow:
        return Probe("broken", message="--schema output is larger than 1 MB")
    if outcome.returncode != 0:
        return Probe("schema-unknown", message=f"--schema not supported (exit status {outcome.returncode})")
    return parse_schema_document(outcome.stdout)


def _envelope(value: Any) -> dict[str, Any] | None:
    if isinstance(value, dict) and value.get("status") in ("success", "error") and "_metadata" in value:
        return value
    return None


def _from_envelope(env: dict[str, Any], meta: dict[str, Any]) -> ToolResult:
    if env["status"] == "success":
        return ToolResult.success(env.get("data"), metadata=meta)
    etype = env.get("error_type")
    details = env.get("details")
    error_type = cast(ErrorType, etype if etype in _ERROR_TYPES else "execution_error")
    return ToolResult.failure(
        error_type,
        clip(str(env.get("error") or "the tool failed"), MAX_MESSAGE_CHARS),
        retryable=env.get("retryable") is True,
        details=details if isinstance(details, dict) else None,
        metadata=meta,
    )


def call_binary(
    path: str,
    params: Mapping[str, Any],
    *,
    runner: ProcessRunner,
    env: Mapping[str, str],
    timeout: float,
    max_output_bytes: int,
    label: str,
) -> ToolResult:
    """Run one call of a binary and turn what happened into a :class:`ToolResult`.

    Garbage, empty or oversized output, a non-zero exit, a timeout, a missing file and a
    shutdown all become error results; ``details["reason"]`` says which (``missing-binary``
    for a file that vanished before the call started).
    """
    payload = json.dumps(dict(params), ensure_ascii=False).encode()
    meta: dict[str, Any] = {"binary": label}
    try:
        outcome = runner.run([path], input=payload, env=env, timeout=timeout, max_output_bytes=max_output_bytes)
    except (OSError, RunnerClosedError) as exc:
        return _spawn_failure(exc, label, meta)
    meta["exit_code"] = outcome.returncode
    if outcome.killed:
        return ToolResult.failure("cancelled", f"Tool '{label}' was stopped.", metadata=meta)
    if outcome.timed_out:
        return ToolResult.failure(
            "timeout",
            f"Tool '{label}' did not finish within {timeout:g} s.",
            retryable=True,
            metadata=meta,
        )
    if outcome.output_overflow:
        return _fail(
            f"Tool '{label}' printed more than {max_output_bytes} bytes; ask for less output.",
            "output_too_large",
            meta,
        )
    return _interpret(outcome, label, meta)


def _fail(message: str, reason: str, meta: dict[str, Any], **details: Any) -> ToolResult:
    return ToolResult.failure(
        "execution_error",
        clip(message, MAX_MESSAGE_CHARS),
        details={"reason": reason, **details},
        metadata=meta,
    )


def _spawn_failure(exc: Exception, label: str, meta: dict[str, Any]) -> ToolResult:
    if isinstance(exc, FileNotFoundError):
        return _fail(f"Tool '{label}' is no longer installed; do not call it again.", "missing-binary", meta)
    if isinstance(exc, RunnerClosedError):
        return ToolResult.failure("cancelled", f"Tool '{label}' is shutting down.", metadata=meta)
    busy = isinstance(exc, OSError) and exc.errno == errno.ETXTBSY
    reason = getattr(exc, "strerror", None) or "OS error"
    return ToolResult.failure(
        "execution_error",
        f"Tool '{label}' could not start ({reason}).",
        retryable=busy,
        details={"reason": "broken"},
        metadata=meta,
    )


def _interpret(outcome: ProcessOutcome, label: str, meta: dict[str, Any]) -> ToolResult:
    text = outcome.stdout.decode("utf-8", "replace").strip()
    try:
        parsed: Any = json.loads(text) if text else None
    except ValueError:
        if outcome.returncode == 0:
            return _fail(
                f"Tool '{label}' printed output that is not JSON.",
                "invalid_output",
                meta,
                output_start=text[:200],
            )
        parsed = None
    envelope = _envelope(parsed)
    if envelope is not None:
        return _from_envelope(envelope, meta)
    if outcome.returncode != 0:
        stderr = outcome.stderr.decode("utf-8", "replace").strip()
        message = stderr or f"exited with status {outcome.returncode} and no error output"
        return _fail(f"Tool '{label}' failed: {message}", "exit_status", meta, exit_code=outcome.returncode)
    if not text:
        return _fail(f"Tool '{label}' printed nothing.", "empty_output", meta)
    return ToolResult.success(parsed, metadata=meta)


class OutputChecker:
    """Checks a binary's successful output against the ``output_schema`` it declared.

    Args:
        schema: The binary's ``output_schema`` (already checked against the meta-schema).
    """

    def __init__(self, schema: Mapping[str, Any]) -> None:
        self._validator = validators.validator_for(schema)(schema)

    def check(self, result: ToolResult, label: str) -> ToolResult:
        """``result`` itself when it is an error or its data matches; else an ``upstream_error``.

        The message names the binary and each field that does not match (what the model can
        tell the user: the tool, not its arguments, is at fault).
        """
        if result.error is not None:
            return result
        errors = sorted(self._validator.iter_errors(result.data), key=lambda e: list(e.absolute_path))
        if not errors:
            return result
        records = [_output_record(err) for err in errors[:MAX_OUTPUT_ERRORS]]
        fields = "; ".join(f"{r['field']}: {r['problem']}" for r in records)
        more = f" (and {len(errors) - MAX_OUTPUT_ERRORS} more)" if len(errors) > MAX_OUTPUT_ERRORS else ""
        return ToolResult.failure(
            "upstream_error",
            f"Tool '{label}' returned output that does not match its declared output_schema: "
            f"{fields}{more}. This is a fault of the tool, not of your arguments.",
            retryable=False,
            details={"reason": "invalid_output", "binary": label, "errors": records},
            metadata=dict(result.metadata),
        )


def _output_record(err: Any) -> dict[str, Any]:
    path = list(err.absolute_path)
    if err.validator == "required" and err.message.count("'") >= 2:
        return field_error([*path, err.message.split("'")[1]], "missing", sent=False)
    return field_error(path or ["(output)"], clip(err.message, 200), sent=False)
