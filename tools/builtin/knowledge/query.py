"""Turn a model's search text into a safe SQLite FTS5 ``MATCH`` expression.

The supported syntax is small and documented for the model:

- ``solar panels`` — every word must appear (AND);
- ``"solar panels"`` — the exact phrase;
- ``solar OR wind`` — either side; ``OR`` groups the terms next to it, so
  ``solar OR wind energy`` means (solar OR wind) AND energy;
- ``sola*`` — a word prefix.

Everything else is literal text: each term is emitted as an FTS5 string (double quotes
doubled), so operators, column filters, parentheses or ``NEAR`` typed by the model can never
form FTS5 syntax. A query that cannot match anything sensible raises
:class:`~tools.errors.InvalidArgumentsError` with a message written for the model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tools.errors import InvalidArgumentsError

MAX_QUERY_CHARS = 500
MAX_TERMS = 32

# Control characters (NUL ends an FTS5 string early) and lone surrogates (not encodable).
_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]")
_TOKEN = re.compile(r'"([^"]*)"?|(\S+)')
_WORD_CHAR = re.compile(r"[^\W_]")  # a letter or digit: what the tokenizer indexes


@dataclass(frozen=True, slots=True)
class QueryTerm:
    """One word or phrase of a query (``prefix``: a trailing ``*``)."""

    text: str
    prefix: bool = False

    def to_fts(self) -> str:
        quoted = '"' + self.text.replace('"', '""') + '"'
        return quoted + "*" if self.prefix else quoted


def build_match_expression(query: str) -> str:
    """Return an FTS5 ``MATCH`` expression for ``query`` that cannot be a syntax error.

    Args:
        query: Search text from the model (see the module docstring for the syntax).

    Raises:
        InvalidArgumentsError: When the query is empty, longer than 500 characters, has
            more than 32 terms, or holds no letters or digits.
    """
    parts: list[str] = []
    for group in parse_query(query):
        rendered = " OR ".join(term.to_fts() for term in group)
        parts.append(f"({rendered})" if len(group) > 1 else rendered)
    return " AND ".join(parts)


def parse_query(query: str) -> list[list[QueryTerm]]:
    """The query's AND-ed groups of OR-ed terms (what every store's search renders).

    Raises:
        InvalidArgumentsError: As `build_match_expression`.
    """
    text = _UNSAFE.sub(" ", query).strip()
    if not text:
        raise InvalidArgumentsError(
            "The search query is empty. Send the words to look for, e.g. query='solar panel efficiency'."
        )
    if len(text) > MAX_QUERY_CHARS:
        raise InvalidArgumentsError(
            f"The search query has {len(text)} characters; at most {MAX_QUERY_CHARS} are "
            "allowed. Send a few key words instead of a whole passage."
        )
    groups = _parse_groups(text)
    if not groups:
        raise InvalidArgumentsError(
            "The search query has no letters or digits to search for. Send words, e.g. query='tax return 2024'."
        )
    if sum(len(group) for group in groups) > MAX_TERMS:
        raise InvalidArgumentsError(
            f"The search query has more than {MAX_TERMS} terms. Send fewer, more specific words."
        )
    return groups


def _parse_groups(text: str) -> list[list[QueryTerm]]:
    """Split into AND-ed groups of OR-ed terms; ``OR`` at the edges is ignored."""
    groups: list[list[QueryTerm]] = []
    pending_or = False
    for match in _TOKEN.finditer(text):
        phrase, word = match.group(1), match.group(2)
        if word == "OR" and phrase is None:
            pending_or = bool(groups)
            continue
        term = _make_term(phrase, word)
        if term is None:
            continue
        if pending_or:
            groups[-1].append(term)
        else:
            groups.append([term])
        pending_or = False
    return groups


def _make_term(phrase: str | None, word: str | None) -> QueryTerm | None:
    if phrase is not None:
        body = " ".join(phrase.split())
        return QueryTerm(body) if _WORD_CHAR.search(body) else None
    word = word or ""
    prefix = word.endswith("*")
    body = word.rstrip("*")
    if not _WORD_CHAR.search(body):
        return None
    return QueryTerm(body, prefix=prefix)
