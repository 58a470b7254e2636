"""Database URLs: only postgresql:// is accepted, and no password is ever shown."""

from __future__ import annotations

import pytest

from tools.postgres import Database, check_database_url, redact_url


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (
            "postgresql://app:s3cret@db.internal:5432/tooldeck?sslmode=require",
            "postgresql://app@db.internal:5432/tooldeck",
        ),
        ("postgres://app@db/tooldeck", "postgresql://app@db/tooldeck"),
        (
            "postgresql:///tooldeck?host=/run/postgresql&user=app&password=s3cret",
            "postgresql://app@/tooldeck?host=/run/postgresql",
        ),
        ("postgresql://%2Frun%2Fpg/kb", "postgresql:///kb?host=/run/pg"),
        ("postgresql://app:s3cret@db:notaport/x", "postgresql://(unreadable URL)"),
    ],
)
def test_urls_are_shown_without_their_password(url: str, shown: str) -> None:
    assert redact_url(url) == shown
    assert "s3cret" not in repr(Database(url))


@pytest.mark.parametrize("bad", ["", "   ", "mysql://root:s3cret@db/x", "db.internal:5432", "sqlite:///x.db", None])
def test_only_postgresql_urls_are_accepted_and_the_value_is_not_repeated(bad: object) -> None:
    with pytest.raises(ValueError, match="TOOLDECK_DATABASE_URL") as caught:
        check_database_url(bad)
    assert "s3cret" not in str(caught.value)


def test_a_database_pickles_into_a_copy_with_its_own_pool() -> None:
    import pickle

    from tools.builtin.knowledge import PostgresKnowledgeStore

    store = PostgresKnowledgeStore("postgresql://app:s3cret@db.internal/kb", snippet_tokens=8)
    copy = pickle.loads(pickle.dumps(store))  # what a Ray actor receives: no connection is opened here
    assert copy.database is not store.database
    assert copy.database.location == store.database.location == "postgresql://app@db.internal/kb"
    assert copy._headline_options == store._headline_options
