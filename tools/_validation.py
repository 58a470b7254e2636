"""``RequestValidator``: a request model's validation, bound once per tool, in one mode.

Every call path validates the same way, so the same arguments give the same outcome
whether they arrive as the JSON text a model sent (``call_tool_raw``), as a dict, or as
keyword arguments (``registry(name, **kwargs)``): pydantic's JSON mode. Arguments are JSON
data, so a ``strict=True`` model with a ``date`` field accepts ``"2026-11-25"`` on every
path. A mapping is serialised with pydantic's Rust serialiser and validated as JSON
(Python values such as ``date`` or ``Decimal`` become their JSON form first); values that
have no JSON form fall back to Python-mode validation.

The happy path is one call into pydantic's core. A ``null`` for a field whose type does not
admit null means "use the default": only when validation fails on such a null are the nulls
dropped and the arguments validated again. Strict-mode models send a null for every
argument they leave out, so the top level is handled cheaply (the optional arguments that
do not admit null are known per tool); nested nulls go through the full ``NullStripper``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticSerializationError, to_json

from tools._arguments import AcceptedArguments, from_pydantic_errors, invalid_arguments, parse_arguments
from tools.errors import InvalidArgumentsError

_ERROR_OPTIONS = {"include_url": False, "include_context": False}


def extra_mode(model: type[BaseModel]) -> Literal["forbid"] | None:
    """Request models are closed unless they say ``extra="allow"``."""
    return None if model.model_config.get("extra") == "allow" else "forbid"


class RequestValidator:
    """Validates arguments into one request model, with model-facing errors.

    Args:
        model: The pydantic model.
        tool_name: For error messages.
        accepted: The tool's "Accepted arguments" line.
        strip: Drops the nulls the schema does not admit (a ``NullStripper``).
        schema: The model's JSON schema (to find the optional arguments that do not admit null).
        headline: First line of the error message (default: "Invalid arguments for tool ...").
    """

    __slots__ = (
        "_accepted",
        "_drop_top",
        "_extra",
        "_headline",
        "_python",
        "_strip",
        "_tool_name",
        "_validate_json",
    )

    def __init__(
        self,
        model: type[BaseModel],
        *,
        tool_name: str,
        accepted: AcceptedArguments,
        strip: Callable[[Any], Any],
        schema: Mapping[str, Any] | None = None,
        headline: str | None = None,
    ) -> None:
        core = model.__pydantic_validator__
        self._drop_top = optional_not_nullable(schema) if schema is not None else frozenset()
        self._validate_json = core.validate_json
        self._python = core.validate_python
        self._extra = extra_mode(model)
        self._strip = strip
        self._accepted = accepted
        self._tool_name = tool_name
        self._headline = headline

    def from_json(self, raw: str | bytes) -> Any:
        """Validate the JSON text of a tool call.

        Raises:
            InvalidArgumentsError: the text is not a JSON object, or the arguments are invalid.
        """
        try:
            return self._validate_json(raw, extra=self._extra)
        except ValidationError as exc:
            errors = exc.errors(**_ERROR_OPTIONS)
        null = False
        for error in errors:
            # Not JSON, or not an object: the general parser writes the model-facing message.
            if error["type"] == "json_invalid" or not error["loc"]:
                return self.from_mapping(parse_arguments(raw, self._tool_name))
            null = null or error.get("input", 0) is None
        if not null:  # the common invalid call: no null to reconsider
            raise self._error(errors)
        return self._after_nulls(None, raw, errors)

    def from_mapping(self, arguments: Mapping[str, Any]) -> Any:
        """Validate decoded arguments (JSON mode; see the module docstring).

        Raises:
            InvalidArgumentsError: the arguments are invalid.
        """
        if self._drop_top and any(value is None for value in arguments.values()):
            arguments = self._without_top_nulls(arguments)
        elif type(arguments) is not dict:
            arguments = dict(arguments)
        try:
            text = to_json(arguments)
        except (PydanticSerializationError, ValueError, TypeError, RecursionError):
            return self._from_python(arguments)
        try:
            return self._validate_json(text, extra=self._extra)
        except ValidationError as exc:
            errors = exc.errors(**_ERROR_OPTIONS)
        return self._after_nulls(arguments, "", errors)

    def _after_nulls(self, arguments: Mapping[str, Any] | None, text: str | bytes, errors: list[Any]) -> Any:
        """Second chance when a failing value was a null: drop the nulls that mean "default"
        (the top level first, cheaply; then at any depth) and validate again. The errors
        reported are those of the last arguments tried."""
        if not _null_failed(errors):
            raise self._error(errors)
        if arguments is None:
            arguments = parse_arguments(text, self._tool_name)
            if self._drop_top:  # a strict-mode model's nulls for the arguments it left out
                top = self._without_top_nulls(arguments)
                if len(top) != len(arguments):
                    value, top_errors = self._attempt(top)
                    if top_errors is None or not _null_failed(top_errors):
                        return self._result(value, top_errors)
                    arguments, errors = top, top_errors
        stripped = self._strip(arguments)
        if stripped is arguments or stripped == arguments:
            raise self._error(errors)
        return self._result(*self._attempt(stripped))

    def _attempt(self, arguments: Mapping[str, Any]) -> tuple[Any, list[Any] | None]:
        try:
            text = to_json(arguments)
        except (PydanticSerializationError, ValueError, TypeError, RecursionError):
            return self._from_python(arguments), None
        try:
            return self._validate_json(text, extra=self._extra), None
        except ValidationError as exc:
            return None, exc.errors(**_ERROR_OPTIONS)

    def _result(self, value: Any, errors: list[Any] | None) -> Any:
        if errors is not None:
            raise self._error(errors)
        return value

    def _without_top_nulls(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        drop = self._drop_top
        return {key: value for key, value in arguments.items() if value is not None or key not in drop}

    def _from_python(self, arguments: Mapping[str, Any]) -> Any:
        """Values with no JSON form (a Python caller's objects): Python-mode validation."""
        stripped = self._strip(arguments)
        try:
            return self._python(stripped, extra=self._extra)
        except ValidationError as exc:
            raise self._error(exc.errors(**_ERROR_OPTIONS)) from None

    def _error(self, errors: list[Any]) -> InvalidArgumentsError:
        return invalid_arguments(self._tool_name, from_pydantic_errors(errors), self._accepted, headline=self._headline)


def _null_failed(errors: list[Any]) -> bool:
    """Whether any failing value was a null (pydantic reports the input of each error)."""
    return any(error.get("input", 0) is None for error in errors)


def optional_not_nullable(schema: Mapping[str, Any]) -> frozenset[str]:
    """Top-level arguments that may be left out but do not admit null: a null sent for one
    of them means "use the default"."""
    from tools.schema._rules import RefResolver, admits_null

    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return frozenset()
    required = set(schema.get("required") or ())
    refs = RefResolver(schema, None)
    return frozenset(name for name, node in properties.items() if name not in required and not admits_null(node, refs))
