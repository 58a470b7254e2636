"""Build a CLI argv from a :class:`~tools.external.config.CLIAction` template, safely.

No shell is involved, so shell metacharacters in values are inert; the remaining risk is option
injection (a value such as ``--output=/etc/passwd`` read as an option). A value that would start
an argv element with ``-`` is refused unless a literal ``--`` came earlier in the template.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping
from typing import Any

from tools.errors import InvalidArgumentsError
from tools.external.config import CLIAction

_PLACEHOLDER = re.compile(r"^\{(\*)?([A-Za-z_][A-Za-z0-9_]*)(?::(.+))?\}$")
MAX_VALUE_CHARS = 100_000
_SCALARS = (str, int, float)


class _Absent(Exception):
    """An optional placeholder has no value: drop its group."""


def _scalar(name: str, value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, _SCALARS):
        raise InvalidArgumentsError(
            f"Argument '{name}' must be a string or a number, got {type(value).__name__}.",
            details={"field": name},
        )
    text = str(value)
    if "\x00" in text:
        raise InvalidArgumentsError(
            f"Argument '{name}' contains a NUL character; send plain text.",
            details={"field": name},
        )
    if len(text) > MAX_VALUE_CHARS:
        raise InvalidArgumentsError(
            f"Argument '{name}' is {len(text)} characters long; the limit is {MAX_VALUE_CHARS}.",
            details={"field": name},
        )
    return text


def _positional(name: str, text: str, after_dashes: bool) -> str:
    if text.startswith("-") and not after_dashes:
        raise InvalidArgumentsError(
            f"Argument '{name}' must not start with '-' (it would be read as a command-line "
            f"option): got {text[:40]!r}. Send the value without a leading dash.",
            details={"field": name, "reason": "option_injection"},
        )
    return text


def _render_whole(match: re.Match[str], params: Mapping[str, Any], after_dashes: bool, in_group: bool) -> list[str]:
    spread, name, flag = match.group(1), match.group(2), match.group(3)
    value = params.get(name)
    if flag is not None:
        if value is None or value is False:
            return []
        if value is not True:
            raise InvalidArgumentsError(f"Argument '{name}' must be true or false.", details={"field": name})
        return [flag]
    if value is None:
        if spread or in_group:
            raise _Absent
        raise InvalidArgumentsError(f"Missing required argument '{name}'.", details={"field": name})
    if spread:
        if not isinstance(value, list):
            raise InvalidArgumentsError(f"Argument '{name}' must be a list of strings.", details={"field": name})
        return [_positional(name, _scalar(name, v), after_dashes) for v in value]
    return [_positional(name, _scalar(name, value), after_dashes)]


def _render_part(part: str, params: Mapping[str, Any], after_dashes: bool, in_group: bool) -> list[str]:
    whole = _PLACEHOLDER.match(part)
    if whole:
        return _render_whole(whole, params, after_dashes, in_group)
    pieces: list[str] = []
    first_is_value = False
    for index, (literal, fname, _, _) in enumerate(string.Formatter().parse(part)):
        pieces.append(literal)
        if fname is None:
            continue
        value = params.get(fname)
        if value is None:
            if in_group:
                raise _Absent
            raise InvalidArgumentsError(f"Missing required argument '{fname}'.", details={"field": fname})
        if index == 0 and not literal:
            first_is_value = True
        pieces.append(_scalar(fname, value))
    text = "".join(pieces)
    if first_is_value:
        _positional(_first_name(part), text, after_dashes)
    return [text]


def _first_name(part: str) -> str:
    for _, fname, _, _ in string.Formatter().parse(part):
        if fname:
            return fname
    return "?"


def build_argv(action: CLIAction, params: Mapping[str, Any]) -> list[str]:
    """The argv tail for ``action`` filled with ``params``.

    Hostile input: values are never interpreted by a shell; non-scalar values, NUL characters,
    values over 100,000 characters, unknown arguments and values that would be read as options
    raise :class:`~tools.errors.InvalidArgumentsError` with a message for the model.

    Raises:
        InvalidArgumentsError: a missing, unknown or unsafe argument.
    """
    known = action.placeholders()
    unknown = sorted(set(params) - set(known))
    if unknown and action.parameters is None:
        accepted = ", ".join(sorted(known)) or "none"
        raise InvalidArgumentsError(
            f"Unknown argument(s) {unknown}; this action accepts: {accepted}.",
            details={"unknown": unknown, "accepted": sorted(known)},
        )
    argv: list[str] = []
    after_dashes = False
    for element in action.args:
        group = isinstance(element, list)
        parts = element if isinstance(element, list) else [element]
        rendered: list[str] = []
        try:
            for part in parts:
                rendered.extend(_render_part(part, params, after_dashes, group))
        except _Absent:
            continue
        if "--" in parts:
            after_dashes = True
        argv.extend(rendered)
    return argv
