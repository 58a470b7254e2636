"""The knowledge store's suite, run against SQLite (the default) and PostgreSQL.

The contract tests are the SQLite store's own (``tests/unit/tools/builtin/
test_knowledge_store.py``), collected here again with a ``store`` fixture parametrised over
both backends, so PostgreSQL passes exactly what SQLite passes: dedup and ids, batches,
validation, ranking and snippets, the query syntax (phrases, OR, prefixes, diacritics),
hostile queries, metadata filters, limits, delete and get. Below them, what the backends
add: concurrent writers from several threads, and PostgreSQL's own guarantees.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from tests.unit.tools.builtin.test_knowledge_store import (
    test_bad_filters_are_validation_errors,
    test_bad_items_are_rejected_before_anything_is_written,
    test_delete_get_and_malformed_ids,
    test_filters_on_scalars_lists_nested_keys_and_booleans,
    test_hostile_queries_never_raise_fts_errors,
    test_limit_is_clamped,
    test_lone_surrogates_and_control_characters_are_stored_safely,
    test_search_ranks_by_bm25_and_highlights,
    test_search_syntax_phrases_or_prefix_and_diacritics,
    test_store_many_keeps_input_order_and_dedups_within_the_batch,
    test_store_many_spans_several_transactions,
    test_store_returns_ids_and_deduplicates_identical_text,
)
from tools.builtin.knowledge import KnowledgeItem, KnowledgeStore, SqliteKnowledgeStore
from tools.builtin.knowledge.postgres_store import PostgresKnowledgeStore
from tools.errors import UpstreamError

from .backends import database_url_for

#: Imported, hence collected again here, with this module's `store` fixture.
CONTRACT = (
    test_store_returns_ids_and_deduplicates_identical_text,
    test_store_many_keeps_input_order_and_dedups_within_the_batch,
    test_store_many_spans_several_transactions,
    test_bad_items_are_rejected_before_anything_is_written,
    test_lone_surrogates_and_control_characters_are_stored_safely,
    test_search_ranks_by_bm25_and_highlights,
    test_search_syntax_phrases_or_prefix_and_diacritics,
    test_hostile_queries_never_raise_fts_errors,
    test_filters_on_scalars_lists_nested_keys_and_booleans,
    test_bad_filters_are_validation_errors,
    test_limit_is_clamped,
    test_delete_get_and_malformed_ids,
)
NOW = 1_700_000_000.0


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest) -> Iterator[KnowledgeStore]:
    """A fresh, empty store of each backend (its clock fixed at 2023-11-14T22:13:20Z)."""
    if request.param == "sqlite":
        with SqliteKnowledgeStore(":memory:", clock=lambda: NOW) as memory:
            yield memory
        return
    with PostgresKnowledgeStore(database_url_for(request), clock=lambda: NOW) as database:
        yield database


def test_threads_storing_overlapping_texts_store_each_once(store: KnowledgeStore) -> None:
    outcomes: list[list[tuple[str, bool]]] = []
    barrier = threading.Barrier(6)
    lock = threading.Lock()

    def write(worker: int) -> None:
        barrier.wait()
        mine = []
        for i in range(40):
            text = f"shared fact {i}" if i % 2 == 0 else f"fact {i} of worker {worker}"
            outcome = store.store(text, {"worker": worker})
            mine.append((outcome.id, outcome.duplicate))
        with lock:
            outcomes.append(mine)

    threads = [threading.Thread(target=write, args=(w,)) for w in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert store.search("shared", limit=100) and len(store.search("shared", limit=100)) == 20
    firsts = [outcome for mine in outcomes for outcome in mine[::2] if not outcome[1]]
    assert len(firsts) == 20  # each shared text stored once, by exactly one worker
    shared_ids = {mine[i][0] for mine in outcomes for i in range(0, 40, 2)}
    assert len(shared_ids) == 20  # and every worker got the same id for it


def test_the_postgres_store_finds_words_that_postgres_own_parser_would_glue(request: pytest.FixtureRequest) -> None:
    with PostgresKnowledgeStore(database_url_for(request)) as store:
        store.store_many(
            [
                KnowledgeItem("Docs live at https://example.com/guide and mail ops@example.org."),
                KnowledgeItem("Version 1.2.3 ships the e-mail fix."),
            ]
        )
        assert [h.id for h in store.search("example")] == ["1"]
        assert [h.id for h in store.search("guide")] == ["1"]
        assert [h.id for h in store.search("ops")] == ["1"]
        assert [h.id for h in store.search('"e mail"')] == ["2"]
        assert [h.id for h in store.search("3")] == ["2"]
        [hit] = store.search("fix")
        assert hit.snippet.startswith("Version") and "**fix**" in hit.snippet


def test_a_long_text_gets_a_snippet_with_ellipses(request: pytest.FixtureRequest) -> None:
    filler = " ".join(f"word{i}" for i in range(200))
    with PostgresKnowledgeStore(database_url_for(request), snippet_tokens=8) as store:
        store.store(f"{filler} the harbour opens at dawn {filler}")
        [hit] = store.search("harbour")
        assert hit.snippet.startswith("…") and hit.snippet.endswith("…")
        assert "**harbour**" in hit.snippet
        assert len(hit.snippet.split()) <= 10


def test_an_unreachable_database_is_an_upstream_error_without_the_password() -> None:
    store = PostgresKnowledgeStore("postgresql://app:s3cret@/kb?host=/nonexistent-dir&connect_timeout=2")
    with pytest.raises(UpstreamError) as caught:
        store.search("anything")
    assert "s3cret" not in str(caught.value) and "postgresql://" not in str(caught.value)
    assert caught.value.retryable
    assert "s3cret" not in repr(store)


def test_markers_with_double_quotes_are_refused() -> None:
    with pytest.raises(ValueError, match="double quote"):
        PostgresKnowledgeStore("postgresql:///kb", highlight=('<b class="x">', "</b>"))
