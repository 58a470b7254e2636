"""Model-facing argument errors: field path, what was expected, what was sent."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from pydantic import BaseModel

from tools.errors import InvalidArgumentsError

_MAX_GOT = 80
_MAX_ERRORS = 12
_MAX_DETAILS = 50
# One configured encoder: json.dumps() with keyword options builds a new encoder per call.
_ENCODE = json.JSONEncoder(default=str, ensure_ascii=False).encode


class AcceptedArguments(NamedTuple):
    """What a schema accepts, pre-rendered once per tool: the line and the names."""

    text: str
    names: list[str]


_AGAIN = "Call the tool again with corrected arguments."
_PROBLEMS = {
    "missing": "required argument is missing",
    "extra_forbidden": "unknown argument, not accepted by this tool",
}


def _path(loc: Sequence[Any] | Iterable[Any]) -> str:
    if type(loc) is tuple and len(loc) == 1 and type(loc[0]) is str:
        return loc[0]  # the common case: a top-level argument
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "(arguments)"


def _short(value: Any) -> str:
    try:
        text = _ENCODE(value)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return text if len(text) <= _MAX_GOT else text[: _MAX_GOT - 3] + "..."


def _type_label(node: Mapping[str, Any]) -> str:  # noqa: PLR0911 - one return per JSON-schema form
    if "enum" in node:
        return "|".join(_short(v) for v in node["enum"][:8]) + ("|..." if len(node["enum"]) > 8 else "")
    if "const" in node:
        return _short(node["const"])
    kind = node.get("type")
    if isinstance(kind, list):
        return "|".join(str(k) for k in kind)
    if isinstance(kind, str):
        if kind == "array" and isinstance(node.get("items"), Mapping):
            return f"array of {_type_label(node['items'])}"
        return kind
    for key in ("anyOf", "oneOf"):
        if isinstance(node.get(key), list):
            return "|".join(_type_label(b) for b in node[key] if isinstance(b, Mapping))
    if "$ref" in node:
        return str(node["$ref"]).rsplit("/", 1)[-1]
    return "any"


def describe_arguments(schema: Mapping[str, Any] | None) -> AcceptedArguments:
    """The "Accepted arguments: ..." line for ``schema`` (empty when it has no properties)."""
    lines = accepted_arguments(schema) if schema else []
    if not lines or schema is None:
        return AcceptedArguments("", [])
    return AcceptedArguments("Accepted arguments: " + "; ".join(lines) + ".", list(schema.get("properties", {})))


def accepted_arguments(schema: Mapping[str, Any]) -> list[str]:
    """One short line per top-level argument: name, type, required or default."""
    props = schema.get("properties")
    if not isinstance(props, Mapping):
        return []
    required = set(schema.get("required") or ())
    lines = []
    for name, raw in props.items():
        node = raw if isinstance(raw, Mapping) else {}
        if name in required:
            state = "required"
        elif "default" in node:
            state = f"default {_short(node['default'])}"
        else:
            state = "optional"
        lines.append(f"{name} ({_type_label(node)}, {state})")
    return lines


def field_error(path: Sequence[Any], problem: str, got: Any = ..., *, sent: bool = True) -> dict[str, Any]:
    """A field-level error record as shown to the model."""
    record: dict[str, Any] = {"field": _path(path), "problem": problem}
    if sent and got is not ...:
        record["got"] = _short(got)
    return record


def from_pydantic_errors(errors: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Turn pydantic's ``ValidationError.errors()`` into field records without URL noise."""
    records: list[dict[str, Any]] = []
    append = records.append
    for err in errors:
        loc = err.get("loc", ())
        field = loc[0] if type(loc) is tuple and len(loc) == 1 and type(loc[0]) is str else _path(loc)
        problem = _PROBLEMS.get(err.get("type"))  # type: ignore[arg-type]
        if problem is not None:
            append({"field": field, "problem": problem})
        else:
            append({"field": field, "problem": str(err.get("msg", "invalid value")), "got": _short(err.get("input"))})
    return records


def invalid_arguments(
    tool_name: str,
    records: Sequence[Mapping[str, Any]],
    accepted: AcceptedArguments | Mapping[str, Any] | None,
    *,
    headline: str | None = None,
) -> InvalidArgumentsError:
    """Build the ``validation_error`` the model sees for ``records``.

    ``accepted`` is the tool's :func:`describe_arguments` (or a schema to describe).
    """
    if not isinstance(accepted, AcceptedArguments):
        accepted = describe_arguments(accepted)
    lines = [headline or f"Invalid arguments for tool '{tool_name}':"]
    lines += [
        f"- {r['field']}: {r['problem']} (got {r['got']})" if "got" in r else f"- {r['field']}: {r['problem']}"
        for r in records[:_MAX_ERRORS]
    ]
    if len(records) > _MAX_ERRORS:
        lines.append(f"- ... and {len(records) - _MAX_ERRORS} more")
    details: dict[str, Any] = {"errors": records[:_MAX_DETAILS]}
    if accepted.text:
        lines.append(accepted.text)
        details["accepted"] = accepted.names[:]
    lines.append(_AGAIN)
    error = InvalidArgumentsError("\n".join(lines), details=details)
    error.details_jsonable = True
    return error


def validate_with_model(
    model: type[BaseModel],
    arguments: Mapping[str, Any],
    *,
    schema: Mapping[str, Any],
    tool_name: str,
    headline: str | None = None,
    accepted: AcceptedArguments | None = None,
    strip: Callable[[Any], Any] | None = None,
) -> Any:
    """Validate ``arguments`` into ``model`` as every call path does (see ``RequestValidator``).

    Tools validate through a validator bound once; this builds one per call, for code that
    validates a model only now and then.

    Raises:
        InvalidArgumentsError: field-level errors written for the model.
    """
    from tools._validation import RequestValidator

    validator = RequestValidator(
        model,
        tool_name=tool_name,
        accepted=accepted or (lambda: describe_arguments(schema)),
        strip=(lambda: strip) if strip is not None else (lambda: _stripper_for(schema)),
        headline=headline,
    )
    return validator.from_mapping(arguments)


def validate_with_schema(
    validator: Any,
    arguments: Mapping[str, Any],
    *,
    schema: Mapping[str, Any],
    tool_name: str,
    headline: str | None = None,
    strip: Callable[[Any], Any] | None = None,
) -> dict[str, Any]:
    """Validate ``arguments`` against a hand-written JSON schema (a ``jsonschema`` validator).

    Nulls the schema does not admit are dropped first, then top-level ``default`` values
    are filled in for absent properties. Returns the validated dict.

    Raises:
        InvalidArgumentsError: field-level errors written for the model.
    """
    cleaned = (strip or _stripper_for(schema))(arguments)
    errors = list(validator.iter_errors(cleaned))
    if errors:
        records = [_jsonschema_record(err) for err in errors]
        raise invalid_arguments(tool_name, records, schema, headline=headline)
    result = dict(cleaned)
    props = schema.get("properties")
    if isinstance(props, Mapping):
        for key, node in props.items():
            if key not in result and isinstance(node, Mapping) and "default" in node:
                result[key] = copy.deepcopy(node["default"])
    return result


def _stripper_for(schema: Mapping[str, Any]) -> Callable[[Any], Any]:
    from tools.schema._nulls import NullStripper

    return NullStripper(schema)


def _jsonschema_record(err: Any) -> dict[str, Any]:
    path = list(err.absolute_path)
    if err.validator == "required":
        missing = err.message.split("'")[1] if "'" in err.message else err.message
        return field_error([*path, missing], "required argument is missing", sent=False)
    if err.validator == "additionalProperties":
        return field_error(path, f"unknown argument(s): {err.message}", sent=False)
    return field_error(path, err.message, err.instance)


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
