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
the schema does not admit dropped and the arguments validated again.
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
        headline: First line of the error message (default: "Invalid arguments for tool ...").
    """

    __slots__ = ("_accepted", "_extra", "_headline", "_python", "_strip", "_tool_name", "_validate_json")

    def __init__(
        self,
        model: type[BaseModel],
        *,
        tool_name: str,
        accepted: AcceptedArguments,
        strip: Callable[[Any], Any],
        headline: str | None = None,
    ) -> None:
        core = model.__pydantic_validator__
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
        for error in errors:
            # Not JSON, or not an object: the general parser writes the model-facing message.
            if error["type"] == "json_invalid" or not error["loc"]:
                return self.from_mapping(parse_arguments(raw, self._tool_name))
        return self._after_nulls(None, raw, errors)

    def from_mapping(self, arguments: Mapping[str, Any]) -> Any:
        """Validate decoded arguments (JSON mode; see the module docstring).

        Raises:
            InvalidArgumentsError: the arguments are invalid.
        """
        try:
            text = to_json(arguments if type(arguments) is dict else dict(arguments))
        except (PydanticSerializationError, ValueError, TypeError, RecursionError):
            return self._from_python(arguments)
        try:
            return self._validate_json(text, extra=self._extra)
        except ValidationError as exc:
            errors = exc.errors(**_ERROR_OPTIONS)
        return self._after_nulls(arguments, text, errors)

    def _after_nulls(self, arguments: Mapping[str, Any] | None, text: str | bytes, errors: list[Any]) -> Any:
        """Second chance when a failing value was a null: drop the nulls that mean "default"."""
        if not any(error.get("input", 0) is None for error in errors):
            raise self._error(errors)
        if arguments is None:
            arguments = parse_arguments(text, self._tool_name)
        stripped = self._strip(arguments)
        if stripped is arguments or stripped == arguments:
            raise self._error(errors)
        try:
            return self._validate_json(to_json(stripped), extra=self._extra)
        except ValidationError as exc:
            raise self._error(exc.errors(**_ERROR_OPTIONS)) from None

    def _from_python(self, arguments: Mapping[str, Any]) -> Any:
        """Values with no JSON form (a Python caller's objects): Python-mode validation."""
        stripped = self._strip(arguments)
        try:
            return self._python(stripped, extra=self._extra)
        except ValidationError as exc:
            raise self._error(exc.errors(**_ERROR_OPTIONS)) from None

    def _error(self, errors: list[Any]) -> InvalidArgumentsError:
        return invalid_arguments(self._tool_name, from_pydantic_errors(errors), self._accepted, headline=self._headline)
