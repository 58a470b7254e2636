"""Model query text -> FTS5 MATCH: documented syntax, and never an FTS5 syntax error."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tools.builtin.knowledge import build_match_expression
from tools.errors import InvalidArgumentsError


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("solar panels", '"solar" AND "panels"'),
        ('"solar panels" cost', '"solar panels" AND "cost"'),
        ("solar OR wind energy", '("solar" OR "wind") AND "energy"'),
        ("a OR b OR c", '("a" OR "b" OR "c")'),
        ("OR solar OR", '"solar"'),
        ("tax*", '"tax"*'),
        ('say "hi', '"say" AND "hi"'),
        ("NEAR(a b) col:x AND NOT y", '"NEAR(a" AND "b)" AND "col:x" AND "AND" AND "NOT" AND "y"'),
        ('he said "x""y"', '"he" AND "said" AND "x" AND "y"'),
        ("don't", '"don\'t"'),
        ("  spaced   out  ", '"spaced" AND "out"'),
        ("solar -- ** ()", '"solar"'),
        ("nul\x00byte \ud800x", '"nul" AND "byte" AND "x"'),
        ("or", '"or"'),
    ],
)
def test_queries_become_quoted_terms(query: str, expected: str) -> None:
    assert build_match_expression(query) == expected


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("", "empty"),
        ("   \n\t", "empty"),
        ("x" * 501, "at most 500"),
        ('-- ** () "" ___', "no letters or digits"),
        (" ".join(f"w{i}" for i in range(33)), "more than 32 terms"),
    ],
)
def test_unusable_queries_are_clear_validation_errors(query: str, message: str) -> None:
    with pytest.raises(InvalidArgumentsError, match=message):
        build_match_expression(query)


@pytest.fixture(scope="module")
def fts() -> Iterator[sqlite3.Connection]:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(body, tokenize='unicode61 remove_diacritics 2')")
    conn.execute("INSERT INTO t VALUES ('the quick brown fox jumps over the lazy dog')")
    yield conn
    conn.close()


@settings(max_examples=200, deadline=None)
@given(
    st.text(
        alphabet=st.sampled_from(list("abcXYZ019 \"*()-+:^.,;!?'\\ORANDNOTNEAR{}[]éß中\t\n\x00")),
        max_size=80,
    )
)
def test_any_text_is_rejected_cleanly_or_runs(fts: sqlite3.Connection, query: str) -> None:
    try:
        expression = build_match_expression(query)
    except InvalidArgumentsError:
        return
    fts.execute("SELECT count(*) FROM t WHERE t MATCH ?", (expression,)).fetchone()


@settings(max_examples=200, deadline=None)
@given(st.text(st.characters(codec=None), max_size=120))
def test_arbitrary_unicode_never_breaks_fts5(fts: sqlite3.Connection, query: str) -> None:
    try:
        expression = build_match_expression(query)
    except InvalidArgumentsError:
        return
    fts.execute("SELECT count(*) FROM t WHERE t MATCH ?", (expression,)).fetchone()
