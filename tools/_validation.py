"""``RequestValidator``: a request model's validation, bound once per tool, in one mode.

Every call path validates the same way, so the same arguments give the same outcome
whether they arrive as the JSON text a model sent (``call_tool_raw``), as a dict, or as
keyword arguments (``registry(name, **kwargs)``): pydantic's JSON mode. Arguments are JSON
data, so a ``strict=True`` model with a ``date`` field accepts ``"2026-11-25"`` on every
path. A mapping is serialised with pydantic's Rust serialiser and validated as JSON
(Python values such as ``date`` or ``Decimal`` become their JSON form first); values that
have no JSON form fall back to Python-mode validation.

Every call is one validation pass, strict-mode nulls included. A ``null`` for a field whose
type does not admit null means "use the default" (at any depth); OpenAI's strict mode sends
one for every argument the model leaves out. Arguments that hold a null (a substring test
on the text) are decoded, the nulls that mean "default" dropped (a ``NullStripper`` built
from the tool's schema on the first such call), and the result validated once. Nothing of
the JSON schema is needed for calls without nulls, and the "Accepted arguments" line of an
error message is worked out on the first invalid call.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticSerializationError, from_json, to_json

from tools._arguments import AcceptedArguments, from_pydantic_errors, invalid_arguments, parse_arguments
from tools.errors import InvalidArgumentsError
from tools.schema._nulls import has_null

_ERROR_OPTIONS = {"include_url": False, "include_context": False}
Stripper = Callable[[Any], Any]
#: "The schema is not a plain object: strip with the full ``NullStripper``".
_NO_PLAN: frozenset[str] = frozenset({"\x00 no plan"})


def extra_mode(model: type[BaseModel]) -> Literal["forbid"] | None:
    """Request models are closed unless they say ``extra="allow"``."""
    return None if model.model_config.get("extra") == "allow" else "forbid"


class RequestValidator:
    """Validates arguments into one request model, with model-facing errors.

    Args:
        model: The pydantic model.
        tool_name: For error messages.
        accepted: The tool's "Accepted arguments" line, or a function that works it out
            (called on the first invalid call only).
        strip: Builds the function that drops the nulls the schema does not admit (a
            ``NullStripper``); called on the first call that holds a null.
        headline: First line of the error message (default: "Invalid arguments for tool ...").
    """

    __slots__ = (
        "_accepted",
        "_extra",
        "_headline",
        "_make_strip",
        "_python",
        "_strip",
        "_tool_name",
        "_top",
        "_validate_json",
    )

    def __init__(
        self,
        model: type[BaseModel],
        *,
        tool_name: str,
        accepted: AcceptedArguments | Callable[[], AcceptedArguments],
        strip: Callable[[], Stripper],
        headline: str | None = None,
    ) -> None:
        core = model.__pydantic_validator__
        self._validate_json = core.validate_json
        self._python = core.validate_python
        self._extra = extra_mode(model)
        self._accepted = accepted
        self._make_strip = strip
        self._strip: Stripper | None = None
        self._top: frozenset[str] | None = None
        self._tool_name = tool_name
        self._headline = headline

    def from_json(self, raw: str | bytes) -> Any:
        """Validate the JSON text of a tool call.

        Raises:
            InvalidArgumentsError: the text is not a JSON object, or the arguments are invalid.
        """
        if (b"null" if type(raw) is bytes else "null") in raw:  # type: ignore[operator]
            stripped = self._without_nulls(raw)
            if stripped is not None:
                raw = stripped
        try:
            return self._validate_json(raw, extra=self._extra)
        except ValidationError as exc:
            errors = exc.errors(**_ERROR_OPTIONS)
        for error in errors:
            # Not JSON, or not an object: the general parser writes the model-facing message.
            if error["type"] == "json_invalid" or not error["loc"]:
                return self.from_mapping(parse_arguments(raw, self._tool_name))
        raise self._error(errors)

    def from_mapping(self, arguments: Mapping[str, Any]) -> Any:
        """Validate decoded arguments (JSON mode; see the module docstring).

        Raises:
            InvalidArgumentsError: the arguments are invalid.
        """
        if type(arguments) is not dict:
            arguments = dict(arguments)
        try:
            text = to_json(arguments)
        except (PydanticSerializationError, ValueError, TypeError, RecursionError):
            return self._from_python(self._stripper()(arguments) if has_null(arguments) else arguments)
        if b"null" in text:  # a C-level scan of the JSON: most calls hold no null at all
            stripped = self._stripper()(arguments)
            if stripped is not arguments:
                text = to_json(stripped)
        try:
            return self._validate_json(text, extra=self._extra)
        except ValidationError as exc:
            raise self._error(exc.errors(**_ERROR_OPTIONS)) from None

    def _without_nulls(self, raw: str | bytes) -> bytes | None:
        """The text without the nulls that mean "default", or None when nothing was dropped
        (or it is not a JSON object: validation reports that)."""
        try:
            decoded = from_json(raw)
        except ValueError:
            return None
        if type(decoded) is not dict:
            return None
        strip = self._stripper()
        top = self._top
        if top is None:
            plan = getattr(strip, "top_level", None)  # a NullStripper's; other strippers have none
            found = plan() if plan is not None else None
            top = self._top = _NO_PLAN if found is None else found
        nulls = [key for key, value in decoded.items() if value is None]
        # Every "null" in the text is a top-level one (a null deeper down, or the word
        # inside a string, adds one more): the top-level verdicts are all that is needed.
        if top is not _NO_PLAN and len(nulls) == raw.count(b"null" if type(raw) is bytes else "null"):  # type: ignore[arg-type]
            dropped = [key for key in nulls if key in top]
            if not dropped:
                return None
            for key in dropped:
                del decoded[key]
            stripped = decoded
        else:
            stripped = strip(decoded)
            if stripped is decoded:
                return None
        try:
            return to_json(stripped)
        except (PydanticSerializationError, ValueError):  # pragma: no cover - it came from JSON
            return None

    def _stripper(self) -> Stripper:
        strip = self._strip
        if strip is None:
            strip = self._strip = self._make_strip()
        return strip

    def _from_python(self, arguments: Mapping[str, Any]) -> Any:
        """Values with no JSON form (a Python caller's objects): Python-mode validation."""
        try:
            return self._python(arguments, extra=self._extra)
        except ValidationError as exc:
            raise self._error(exc.errors(**_ERROR_OPTIONS)) from None

    def _error(self, errors: list[Any]) -> InvalidArgumentsError:
        accepted = self._accepted
        if not isinstance(accepted, AcceptedArguments):
            accepted = self._accepted = accepted()
        return invalid_arguments(self._tool_name, from_pydantic_errors(errors), accepted, headline=self._headline)
