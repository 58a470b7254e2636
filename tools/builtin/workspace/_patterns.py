"""Patterns from the model, checked before anything runs: RE2 expressions and globs.

Every expression (``grep``'s pattern, a glob translated to one) is compiled by RE2, whose
matching time is linear in the text, within :class:`WorkspaceLimits` bounds: a length
limit, a memory budget for the compiled program (``regex_max_mem``), and counted
repetitions of at most 1,000 (RE2's own limit; it reads a count too large to parse, such as
``x{4294967294}``, as literal text, so those are refused here first). Anything outside the
bounds, or not valid syntax (a reversed range ``[z-a]`` in a glob's class included), is an
:class:`InvalidArgumentsError`: the model's to fix, never a strike against the breaker.
"""

from __future__ import annotations

import re
import string
from typing import Any

import re2

from tools.builtin.workspace._grepworker import compile_lines, re2_message, regex_options
from tools.builtin.workspace.workspace import WorkspaceLimits
from tools.errors import InvalidArgumentsError

#: RE2's largest repetition count.
MAX_REPEAT = 1000
_COUNT = re.compile(r"\{(\d+)(?:,(\d*))?\}")
_SYNTAX = "RE2 syntax (like Python's re without backreferences or lookaround)"


def _escape(char: str) -> str:
    """One character as an RE2 literal (also inside a class)."""
    if char.isalnum() or char == "_" or ord(char) > 0x7F:
        return char
    if char in string.punctuation:
        return "\\" + char
    return f"\\x{{{ord(char):x}}}"


def _skip_class(pattern: str, i: int) -> int:
    """The index after the character class that starts at ``pattern[i] == '['``."""
    j = i + 1
    if j < len(pattern) and pattern[j] == "^":
        j += 1
    if j < len(pattern) and pattern[j] == "]":
        j += 1
    while j < len(pattern) and pattern[j] != "]":
        if pattern[j] == "\\":
            j += 1
        elif pattern.startswith("[:", j):
            end = pattern.find(":]", j + 2)
            j = end + 1 if end >= 0 else j
        j += 1
    return j + 1


def largest_count(pattern: str) -> int:
    """The largest counted repetition (``{n}``, ``{n,}``, ``{n,m}``) outside classes and
    escapes (0 when there is none)."""
    largest, i = 0, 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            if pattern.startswith("\\Q", i):  # literal text up to \E
                end = pattern.find("\\E", i + 2)
                i = len(pattern) if end < 0 else end + 2
                continue
            i += 2
            continue
        if char == "[":
            i = _skip_class(pattern, i)
            continue
        if char == "{" and (count := _COUNT.match(pattern, i)) is not None:
            largest = max(largest, *(int(n) for n in count.groups() if n))
            i = count.end()
            continue
        i += 1
    return largest


def _check_length(pattern: str, what: str, limits: WorkspaceLimits) -> None:
    if len(pattern) > limits.max_pattern_chars:
        raise InvalidArgumentsError(
            f"{what} is {len(pattern)} characters, over the {limits.max_pattern_chars} allowed; use a shorter one."
        )


def compile_regex(pattern: str, limits: WorkspaceLimits, *, ignore_case: bool = False) -> Any:
    """``grep``'s pattern, compiled line-wise by RE2 within the limits.

    Raises:
        InvalidArgumentsError: too long, a repetition over 1,000, not valid RE2, or a
            program larger than ``regex_max_mem``.
    """
    _check_length(pattern, "pattern", limits)
    count = largest_count(pattern)
    if count > MAX_REPEAT:
        raise InvalidArgumentsError(
            f"pattern repeats something {count} times; at most {MAX_REPEAT} are allowed. Use a smaller count, "
            "or '+' / '*'."
        )
    try:
        return compile_lines(pattern, max_mem=limits.regex_max_mem, ignore_case=ignore_case)
    except re2.error as exc:
        message = re2_message(exc).replace("(?m)", "", 1)
        if "too large" in message or "bad repetition" in message or "repetition size" in message:
            raise InvalidArgumentsError(
                f"pattern is too large for the regex engine ({message}); simplify it: fewer or smaller "
                "repetitions, narrower classes."
            ) from None
        raise InvalidArgumentsError(
            f"pattern is not a valid regular expression ({message}). Use {_SYNTAX}; escape special characters "
            "like '(' as '\\('."
        ) from None


def _glob_class(pattern: str, i: int, what: str) -> tuple[str, int] | None:
    """The RE2 class for the glob class at ``pattern[i] == '['`` and the index after it,
    or None when it is not closed (then '[' is literal)."""
    j = i + 1
    negate = j < len(pattern) and pattern[j] in "!^"
    j += negate
    first = j
    if j < len(pattern) and pattern[j] == "]":
        j += 1
    end = pattern.find("]", j)
    if end < 0:
        return None
    body, k, items = pattern[first:end], 0, []
    while k < len(body):
        if k + 2 < len(body) and body[k + 1] == "-":
            low, high = body[k], body[k + 2]
            if low > high:
                raise InvalidArgumentsError(
                    f"{what} has the character range '{low}-{high}', which is backwards; write it as "
                    f"'{high}-{low}' (or escape '-' by putting it last: '[{low}{high}-]')."
                )
            items.append(f"{_escape(low)}-{_escape(high)}")
            k += 3
        else:
            items.append(_escape(body[k]))
            k += 1
    inner = "".join(items)
    return ("[^/" + inner + "]" if negate else "[" + inner + "]"), end + 1


def glob_regex(pattern: str, *, what: str = "The glob") -> str:
    """The RE2 expression of a glob on ``/``-separated relative paths: ``**`` spans
    directories, ``*`` and ``?`` stay within one, ``[...]`` is a class (``[!...]``
    negated), anything else is literal.

    Raises:
        InvalidArgumentsError: a class with a backwards range.
    """
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        char = pattern[i]
        if char == "[" and (found := _glob_class(pattern, i, what)) is not None:
            out.append(found[0])
            i = found[1]
            continue
        out.append("[^/]*" if char == "*" else "[^/]" if char == "?" else _escape(char))
        i += 1
    return "".join(out)


def ripgrep_glob(pattern: str) -> str:
    """The same glob in ripgrep's syntax: what is literal here (``{``, ``}``, ``\\``, an
    unclosed ``[``) is escaped there, so both engines select the same files."""
    out, i = [], 0
    while i < len(pattern):
        char = pattern[i]
        if char == "[" and (found := _glob_class(pattern, i, "The glob")) is not None:
            out.append(pattern[i : found[1]])
            i = found[1]
            continue
        out.append("\\" + char if char in "{}[\\" else char)
        i += 1
    return "".join(out)


def compile_glob(pattern: str, limits: WorkspaceLimits, *, what: str = "The glob") -> Any:
    """A glob compiled by RE2 (match with ``fullmatch``) within the limits.

    Raises:
        InvalidArgumentsError: too long, a backwards class range, or too large a program.
    """
    _check_length(pattern, what, limits)
    source = glob_regex(pattern, what=what)
    try:
        return re2.compile(source, regex_options(max_mem=limits.regex_max_mem))
    except re2.error as exc:
        raise InvalidArgumentsError(f"{what} can't be used ({re2_message(exc)}); simplify it.") from None
