"""SqliteKnowledgeStore: dedup, ranking, snippets, filters, validation, busy retries."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from tools.builtin.knowledge import (
    KnowledgeItem,
    KnowledgeStore,
    SqliteKnowledgeStore,
    StoreOutcome,
)
from tools.errors import InvalidArgumentsError


@pytest.fixture
def store() -> Iterator[SqliteKnowledgeStore]:
    with SqliteKnowledgeStore(":memory:", clock=lambda: 1_700_000_000.0) as memory:
        yield memory


def test_store_returns_ids_and_deduplicates_identical_text(store: SqliteKnowledgeStore) -> None:
    first = store.store("Lisbon is the capital of Portugal.", {"source": "atlas"})
    again = store.store("  Lisbon is the capital of Portugal.\n", {"source": "other"})
    other = store.store("Porto is known for its wine.")
    assert first == StoreOutcome("1", duplicate=False)
    assert again == StoreOutcome("1", duplicate=True)
    assert other == StoreOutcome("2", duplicate=False)
    assert store.count() == 2
    kept = store.get("1")
    assert kept == KnowledgeItem("Lisbon is the capital of Portugal.", {"source": "atlas"})


def test_store_many_keeps_input_order_and_dedups_within_the_batch(
    store: SqliteKnowledgeStore,
) -> None:
    store.store("existing text")
    outcomes = store.store_many(
        [
            KnowledgeItem("alpha"),
            KnowledgeItem("existing text"),
            KnowledgeItem("beta", {"n": 1}),
            KnowledgeItem("alpha"),
        ]
    )
    assert outcomes == [
        StoreOutcome("2", False),
        StoreOutcome("1", True),
        StoreOutcome("3", False),
        StoreOutcome("2", True),
    ]
    assert store.store_many([]) == []


def test_store_many_spans_several_transactions(store: SqliteKnowledgeStore) -> None:
    outcomes = store.store_many(KnowledgeItem(f"document number {i}") for i in range(2_345))
    assert len({o.id for o in outcomes}) == 2_345
    assert store.count() == 2_345


@pytest.mark.parametrize(
    ("items", "message"),
    [
        ([KnowledgeItem("   ")], "empty"),
        ([KnowledgeItem("x" * 100_001)], "at most 100000"),
        (
            [KnowledgeItem("ok"), KnowledgeItem("ok", {"bad": object()})],
            r"JSON values .*\(item 1\)",
        ),
        ([KnowledgeItem("ok", {"nan": float("nan")})], "JSON values"),
        ([KnowledgeItem("ok", {"big": "x" * 20_000})], "larger than 16384 bytes"),
        ([KnowledgeItem("ok", ["not", "a", "dict"])], "JSON object"),  # type: ignore[arg-type]
    ],
)
def test_bad_items_are_rejected_before_anything_is_written(
    store: SqliteKnowledgeStore, items: list[KnowledgeItem], message: str
) -> None:
    with pytest.raises(InvalidArgumentsError, match=message):
        store.store_many(items)
    assert store.count() == 0


def test_lone_surrogates_and_control_characters_are_stored_safely(
    store: SqliteKnowledgeStore,
) -> None:
    outcome = store.store("broken \ud800 text\x00 with nul", {"k": "v\udfff"})
    item = store.get(outcome.id)
    assert item is not None
    assert "\ufffd" in item.text
    [hit] = store.search("broken")
    assert hit.id == outcome.id


def test_search_ranks_by_bm25_and_highlights(store: SqliteKnowledgeStore) -> None:
    store.store_many(
        [
            KnowledgeItem("Solar panels on the roof. Solar output peaks at noon. Solar!"),
            KnowledgeItem("Wind turbines and one solar panel."),
            KnowledgeItem("Hydro power from rivers."),
            KnowledgeItem("Geothermal heat from the ground."),
            KnowledgeItem("Tidal energy from the sea."),
        ]
    )
    hits = store.search("solar")
    assert [hit.id for hit in hits] == ["1", "2"]
    assert hits[0].score > hits[1].score > 0
    assert "**Solar**" in hits[0].snippet
    assert hits[0].text.startswith("Solar panels")
    assert hits[0].created_at.isoformat() == "2023-11-14T22:13:20+00:00"


def test_search_syntax_phrases_or_prefix_and_diacritics(store: SqliteKnowledgeStore) -> None:
    store.store_many(
        [
            KnowledgeItem("The tax return for 2024 is due in April."),
            KnowledgeItem("Return the tax forms to the office."),
            KnowledgeItem("Taxation of the café in Zürich."),
        ]
    )
    assert [h.id for h in store.search('"tax return"')] == ["1"]
    assert {h.id for h in store.search("tax return")} == {"1", "2"}
    assert {h.id for h in store.search("april OR office")} == {"1", "2"}
    assert {h.id for h in store.search("tax*")} == {"1", "2", "3"}
    assert [h.id for h in store.search("cafe zurich")] == ["3"]
    assert store.search("nonexistentword") == []


def test_hostile_queries_never_raise_fts_errors(store: SqliteKnowledgeStore) -> None:
    store.store("NEAR(alpha beta) col:gamma AND OR NOT * ^ - + \" ' ( )")
    for query in ["NEAR(alpha", "col:gamma", '") OR ("', "^alpha", "alpha AND", "NOT", "*a*"]:
        store.search(query)  # no sqlite3.OperationalError
    assert [h.id for h in store.search("col:gamma")] == ["1"]


def test_filters_on_scalars_lists_nested_keys_and_booleans(store: SqliteKnowledgeStore) -> None:
    store.store_many(
        [
            KnowledgeItem("energy report one", {"source": "a", "tags": ["solar", "2024"]}),
            KnowledgeItem("energy report two", {"source": "b", "tags": ["wind"], "draft": True}),
            KnowledgeItem("energy report three", {"author": {"name": "Ana"}, "year": 2024}),
        ]
    )

    def ids(**filters: str | int | bool) -> list[str]:
        return [h.id for h in store.search("energy", filters=filters)]

    assert ids(source="a") == ["1"]
    assert ids(tags="wind") == ["2"]
    assert ids(tags="solar", source="a") == ["1"]
    assert ids(tags="solar", source="b") == []
    assert ids(**{"author.name": "Ana"}) == ["3"]
    assert ids(year=2024) == ["3"]
    assert ids(draft=True) == ["2"]
    assert ids(missing="x") == []


@pytest.mark.parametrize(
    ("filters", "message"),
    [
        ({"bad key": "x"}, "not valid"),
        ({"$.injection')--": "x"}, "not valid"),
        ({"ok": float("inf")}, "text, number or true/false"),
        ({"ok": ["list"]}, "text, number or true/false"),
        ({f"k{i}": "v" for i in range(9)}, "At most 8"),
    ],
)
def test_bad_filters_are_validation_errors(
    store: SqliteKnowledgeStore, filters: dict[str, object], message: str
) -> None:
    with pytest.raises(InvalidArgumentsError, match=message):
        store.search("energy", filters=filters)  # type: ignore[arg-type]


def test_limit_is_clamped(store: SqliteKnowledgeStore) -> None:
    store.store_many(KnowledgeItem(f"common word {i}") for i in range(150))
    assert len(store.search("common", limit=0)) == 1
    assert len(store.search("common", limit=1_000)) == 100


def test_delete_get_and_malformed_ids(store: SqliteKnowledgeStore) -> None:
    outcome = store.store("to be deleted")
    assert store.delete(outcome.id) is True
    assert store.delete(outcome.id) is False
    assert store.search("deleted") == []
    for bad in ["", "abc", "-1", "1 OR 1=1", "\u0661", "9" * 30]:
        assert store.get(bad) is None
        assert store.delete(bad) is False


def test_file_store_persists_creates_parents_and_uses_wal(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "dir" / "kb.sqlite"
    with SqliteKnowledgeStore(path) as first:
        first.store("persisted fact")
    with SqliteKnowledgeStore(path) as second:
        assert [h.text for h in second.search("persisted")] == ["persisted fact"]
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()


def test_satisfies_the_protocol(store: SqliteKnowledgeStore) -> None:
    assert isinstance(store, KnowledgeStore)
    assert repr(store) == "SqliteKnowledgeStore(':memory:')"


def test_busy_database_is_retried_until_the_lock_is_released(tmp_path: Path) -> None:
    path = tmp_path / "kb.sqlite"
    SqliteKnowledgeStore(path).close()
    blocker = sqlite3.connect(path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")  # another writer holds the write lock
    sleeps: list[float] = []

    def release_on_first_sleep(seconds: float) -> None:
        sleeps.append(seconds)
        if blocker.in_transaction:
            blocker.execute("COMMIT")

    store = SqliteKnowledgeStore(path, busy_timeout=0.01, sleep=release_on_first_sleep)
    assert store.store("written after the lock was released").duplicate is False
    assert len(sleeps) >= 1
    store.close()
    blocker.close()


def test_busy_database_gives_up_after_max_attempts(tmp_path: Path) -> None:
    path = tmp_path / "kb.sqlite"
    sleeps: list[float] = []
    store = SqliteKnowledgeStore(path, busy_timeout=0.01, max_attempts=3, sleep=sleeps.append)
    blocker = sqlite3.connect(path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            store.store("never written")
        assert len(sleeps) == 1  # 3 attempts: one direct, two under tenacity with one back-off
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    assert store.count() == 0
    store.close()
