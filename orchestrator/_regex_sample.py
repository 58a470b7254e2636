"""A string that matches a regular expression, for `orchestrator.testing.TestModel`.

Covers what JSON-schema ``pattern`` keywords use in practice: literals and escapes,
``.``, classes (``\\d \\w \\s`` and negations), sets with ranges and negation, groups
(capturing, ``(?:...)``, named), alternation, the quantifiers ``* + ? {n} {n,} {n,m}``
(lazy or not), anchors and ``\\b``. Lookarounds, backreferences and conditionals raise
`Unsupported`: the caller falls back to other candidates. The result is checked by the
caller against the pattern with ``re.search``; this module only proposes.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Unsupported", "sample"]

_DIGITS = string.digits
_WORD = string.ascii_letters + string.digits + "_"
_SPACE = " "
_PRINTABLE = "".join(ch for ch in string.printable if ch not in "\t\n\r\x0b\x0c")
_MAX_REPEAT = 8


class Unsupported(ValueError):
    """The pattern uses a construct this sampler does not generate."""


@dataclass
class _Parser:
    pattern: str
    rng: random.Random
    pos: int = 0

    def peek(self) -> str | None:
        return self.pattern[self.pos] if self.pos < len(self.pattern) else None

    def take(self) -> str:
        if self.pos >= len(self.pattern):
            raise Unsupported("unexpected end of pattern")
        ch = self.pattern[self.pos]
        self.pos += 1
        return ch

    # alternation := sequence ('|' sequence)*
    def alternation(self) -> str:
        options = [self.sequence()]
        while self.peek() == "|":
            self.take()
            options.append(self.sequence())
        return options[self.rng.randrange(len(options))] if len(options) > 1 else options[0]

    def sequence(self) -> str:
        out: list[str] = []
        while self.peek() not in (None, "|", ")"):
            atom = self.atom()
            out.append(self.repeat(atom))
        return "".join(out)

    def atom(self) -> _Atom:
        ch = self.take()
        if ch == "(":
            return self.group()
        if ch == "[":
            return self.of_set(self.char_set())
        if ch == "\\":
            return self.escape()
        if ch == ".":
            return self.of_set(_WORD)
        if ch in "^$":
            return _Atom.literal("")
        if ch in "*+?{":
            raise Unsupported(f"nothing to repeat at {self.pos - 1}")
        return _Atom.literal(ch)

    def group(self) -> _Atom:
        if self.peek() == "?":
            self.take()
            kind = self.take()
            named = (kind == "P" and self.peek() == "<") or (kind == "<" and self.peek() not in ("=", "!"))
            if named:
                while self.take() != ">":
                    pass
            elif kind != ":":
                raise Unsupported(f"(?{kind}...) groups are not generated")
        start = self.pos
        self.alternation()  # parsed once to find the end; regenerated per repetition
        end = self.pos
        if self.take() != ")":
            raise Unsupported("unbalanced parenthesis")
        body = self.pattern[start:end]
        return _Atom(lambda: _Parser(body, self.rng).whole())

    def of_set(self, members: str) -> _Atom:
        if not members:
            raise Unsupported("an empty character set")
        rng = self.rng
        return _Atom(lambda: members[rng.randrange(len(members))])

    def whole(self) -> str:
        text = self.alternation()
        if self.pos != len(self.pattern):
            raise Unsupported(f"unexpected {self.pattern[self.pos]!r} at {self.pos}")
        return text

    def escape(self) -> _Atom:
        ch = self.take()
        classes = {"d": _DIGITS, "w": _WORD, "s": _SPACE, "D": string.ascii_letters, "W": "-", "S": _WORD}
        if ch in classes:
            return self.of_set(classes[ch])
        if ch in "bBAZz":
            return _Atom.literal("")
        if ch.isdigit():
            raise Unsupported("backreferences are not generated")
        controls = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v"}
        if ch in controls:
            return _Atom.literal(controls[ch])
        if ch in "xu":
            width = 2 if ch == "x" else 4
            digits = "".join(self.take() for _ in range(width))
            return _Atom.literal(chr(int(digits, 16)))
        return _Atom.literal(ch)

    def char_set(self) -> str:
        negated = self.peek() == "^"
        if negated:
            self.take()
        members: list[str] = []
        first = True
        while True:
            ch = self.take()
            if ch == "]" and not first:
                break
            first = False
            if ch == "\\":
                ch = self.take()
                classes = {"d": _DIGITS, "w": _WORD, "s": _SPACE}
                if ch in classes:
                    members.extend(classes[ch])
                    continue
                ch = {"n": "\n", "t": "\t"}.get(ch, ch)
            if self.peek() == "-" and self.pos + 1 < len(self.pattern) and self.pattern[self.pos + 1] != "]":
                self.take()
                high = self.take()
                if high == "\\":
                    high = self.take()
                members.extend(chr(c) for c in range(ord(ch), ord(high) + 1))
            else:
                members.append(ch)
        if negated:
            allowed = [ch for ch in _PRINTABLE if ch not in set(members)]
            if not allowed:
                raise Unsupported("a negated set that excludes every printable character")
            return "".join(allowed)
        return "".join(members)

    def repeat(self, atom: _Atom) -> str:
        low, high = 1, 1
        ch = self.peek()
        if ch == "*":
            self.take()
            low, high = 0, _MAX_REPEAT
        elif ch == "+":
            self.take()
            low, high = 1, _MAX_REPEAT
        elif ch == "?":
            self.take()
            low, high = 0, 1
        elif ch == "{" and self._counted():
            low, high = self._bounds()
        if self.peek() in ("?", "+") and (low, high) != (1, 1):  # lazy or possessive: same strings
            self.take()
        count = low if low == high else self.rng.randint(max(low, min(1, high)), min(high, low + 3))
        return "".join(atom.make() for _ in range(count))

    def _counted(self) -> bool:
        rest = self.pattern[self.pos :]
        close = rest.find("}")
        inner = rest[1:close] if close > 0 else ""
        return bool(inner) and all(c.isdigit() or c == "," for c in inner) and inner[0].isdigit()

    def _bounds(self) -> tuple[int, int]:
        self.take()
        inner = ""
        while (ch := self.take()) != "}":
            inner += ch
        low_text, _, high_text = inner.partition(",")
        low = int(low_text)
        high = int(high_text) if high_text else low + _MAX_REPEAT
        if "," not in inner:
            high = low
        if low > 1000 or high < low:
            raise Unsupported("a repetition count out of range")
        return low, high


class _Atom:
    """One element of a pattern: makes a (new) string each time it is repeated."""

    def __init__(self, make: Callable[[], str]) -> None:
        self.make = make

    @staticmethod
    def literal(text: str) -> _Atom:
        return _Atom(lambda: text)


def sample(pattern: str, rng: random.Random) -> str:
    """A string matching ``pattern`` (checked by the caller with ``re.search``).

    Raises:
        Unsupported: the pattern uses a construct not generated here, or is malformed.
    """
    try:
        return _Parser(pattern, rng).whole()
    except Unsupported:
        raise
    except (IndexError, ValueError) as exc:
        raise Unsupported(str(exc)) from None
