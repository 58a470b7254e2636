"""`PostgresKnowledgeStore`: the knowledge store in PostgreSQL, for replicas that share it.

The contract of :class:`~tools.builtin.knowledge.SqliteKnowledgeStore`, in one table
(``tooldeck_knowledge``): identical texts stored once (a unique SHA-256), JSON metadata
(``jsonb``, filtered by containment through a GIN index), full-text search over a
``tsvector`` column (GIN index), ranked, with highlighted snippets.

**Tokens.** Both stores see the same words: the text is folded in Python the way SQLite's
``unicode61 remove_diacritics 2`` tokenizer folds it (Unicode NFKD, marks removed, case
folded, words = runs of letters and digits) and indexed with the ``simple`` configuration
(no stemming, no stop words), and queries are folded the same way. So ``cafe zurich`` finds
"café in Zürich", ``tax*`` finds "Taxation", and URLs or e-mail addresses are split into
their words as SQLite splits them (PostgreSQL's own parser would keep ``example.com`` as one
token).

**Ranking.** PostgreSQL has no BM25. Hits are ranked by ``ts_rank_cd(search, query, 1)``:
cover density (how often and how close together the query's words occur) divided by ``1 +
log(length)``, so more matches rank higher and long documents are not favoured for length
alone, as with BM25. What differs: no inverse document frequency (a rare word does not
outweigh a common one), and term frequency is not saturated the way BM25's ``k1`` does; so
the order of hits of similar relevance can differ from SQLite's, and scores are on another
scale (both: higher is better, always > 0).

**Snippets** come from ``ts_headline`` over the original text (configuration
``tooldeck_search``: ``simple`` plus the ``unaccent`` extension when the database has it,
else ``simple`` alone, when accented words are then not highlighted); a snippet that does
not start or end the text is marked with ``…`` as SQLite's are.

Writes of one ``store_many`` batch (1,000 texts) are one transaction: a writer that dies
half-way leaves nothing of its batch.
"""

from __future__ import annotations

import json
import logging
import re
import time
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from tools.builtin.knowledge._records import MAX_LIMIT, check_filters, parse_id, prepare_row
from tools.builtin.knowledge.query import QueryTerm, parse_query
from tools.builtin.knowledge.store import FilterValue, KnowledgeHit, KnowledgeItem, StoreOutcome
from tools.errors import UpstreamError
from tools.postgres import Database, DatabaseError, Migration, database_for

if TYPE_CHECKING:
    import psycopg

logger = logging.getLogger(__name__)

TABLE = "tooldeck_knowledge"
#: The text search configuration of snippets (``simple``, plus ``unaccent`` when available).
SEARCH_CONFIG = "tooldeck_search"
_BATCH_ROWS = 1_000
#: Letters and numbers (``str.isalnum``: Unicode's L and N categories) and private-use
#: characters (Co), as SQLite's unicode61 tokenizer reads a word.
_WORDS = re.compile(r"(?:[^\W_]|[\ue000-\uf8ff\U000f0000-\U000ffffd\U00100000-\U0010fffd])+")


def _search_config(conn: psycopg.Connection[tuple[Any, ...]]) -> None:
    """Create ``tooldeck_search``: ``simple``, with ``unaccent`` in front when it can be had."""
    import psycopg

    conn.execute(f"CREATE TEXT SEARCH CONFIGURATION {SEARCH_CONFIG} (COPY = pg_catalog.simple)")
    try:
        with conn.transaction():  # a savepoint: the migration goes on without it
            conn.execute("CREATE EXTENSION IF NOT EXISTS unaccent")
    except psycopg.Error as exc:
        logger.warning(
            "knowledge store: the unaccent extension is not available (%s); snippets will not highlight words "
            "whose accents differ from the query's (install PostgreSQL's contrib package to get it)",
            type(exc).__name__,
        )
        return
    conn.execute(
        f"ALTER TEXT SEARCH CONFIGURATION {SEARCH_CONFIG} "
        "ALTER MAPPING FOR word, hword, hword_part WITH unaccent, simple"
    )


MIGRATIONS = (
    Migration(
        "knowledge table and its indexes",
        f"""
        CREATE TABLE {TABLE} (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            text text NOT NULL,
            text_hash bytea NOT NULL UNIQUE,
            metadata jsonb NOT NULL DEFAULT '{{}}',
            search tsvector NOT NULL,
            created_at timestamptz NOT NULL
        );
        CREATE INDEX {TABLE}_search ON {TABLE} USING gin (search);
        CREATE INDEX {TABLE}_metadata ON {TABLE} USING gin (metadata jsonb_path_ops);
        """,
    ),
    Migration("snippet configuration (simple + unaccent)", _search_config),
)


class PostgresKnowledgeStore:
    """A :class:`~tools.builtin.knowledge.store.KnowledgeStore` in PostgreSQL.

    Args:
        database_url: ``postgresql://...`` (``TOOLDECK_DATABASE_URL``); the store opens its
            own connection pool and closes it on `close`.
        database: A :class:`~tools.postgres.Database` shared with other stores.
        highlight: Markers put around matched words in snippets (no ``"`` in them).
        snippet_tokens: Words per snippet (2-64).
        clock: Wall clock in seconds since the epoch, for ``created_at``.

    Raises:
        ValueError: neither or both of ``database_url`` and ``database``, a URL that is not
            ``postgresql://``, or a marker with a double quote.
    """

    def __init__(
        self,
        database_url: str | None = None,
        *,
        database: Database | None = None,
        highlight: tuple[str, str] = ("**", "**"),
        snippet_tokens: int = 24,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if any('"' in marker for marker in highlight):
            raise ValueError(f"highlight markers may not contain a double quote, got {highlight!r}")
        self.database, self._owned = database_for(database_url, database, store="PostgresKnowledgeStore")
        self._highlight = highlight
        words = max(2, min(snippet_tokens, 64))
        self._headline_options = (
            f'StartSel="{highlight[0]}", StopSel="{highlight[1]}", MaxWords={words}, '
            f"MinWords={max(1, words // 2)}, MaxFragments=1"
        )
        self._clock = clock

    def __repr__(self) -> str:
        return f"PostgresKnowledgeStore({self.database.location!r})"

    def close(self) -> None:
        """Close the connection pool when this store opened it."""
        if self._owned:
            self.database.close()

    def __enter__(self) -> PostgresKnowledgeStore:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    # -- writing ---------------------------------------------------------------------------

    def store(self, text: str, metadata: Mapping[str, Any] | None = None) -> StoreOutcome:
        """Store ``text`` with ``metadata``; an identical text is stored once.

        Raises:
            InvalidArgumentsError: empty or over-long text, metadata that is not a JSON
                object of at most 16 KB (nothing is written).
            UpstreamError: the database cannot be used.
        """
        return self.store_many([KnowledgeItem(text, metadata or {})])[0]

    def store_many(self, items: Iterable[KnowledgeItem]) -> list[StoreOutcome]:
        """Store many texts, 1,000 per transaction; outcomes in input order.

        Every item is validated before anything is written. NUL characters, which
        PostgreSQL cannot store in text, become U+FFFD.
        """
        rows = [prepare_row(index, _without_nul(item)) for index, item in enumerate(items)]
        outcomes: list[StoreOutcome] = []
        for start in range(0, len(rows), _BATCH_ROWS):
            batch = rows[start : start + _BATCH_ROWS]
            with self._connection() as conn:
                outcomes.extend(self._insert(conn, batch))
        return outcomes

    def delete(self, doc_id: str) -> bool:
        """Delete a document; True when it existed. A malformed id returns False."""
        key = parse_id(doc_id)
        if key is None:
            return False
        with self._connection() as conn:
            return conn.execute(f"DELETE FROM {TABLE} WHERE id = %s", (key,)).rowcount > 0  # noqa: S608

    def _insert(
        self, conn: psycopg.Connection[tuple[Any, ...]], rows: list[tuple[str, bytes, str]]
    ) -> list[StoreOutcome]:
        digests = [digest for _text, digest, _metadata in rows]
        known = self._ids(conn, digests)
        fresh: dict[bytes, tuple[str, str, str]] = {}
        for text, digest, metadata in rows:
            if digest not in known and digest not in fresh:
                fresh[digest] = (text, metadata, _folded(text))
        added: dict[bytes, int] = {}
        if fresh:
            now = datetime.fromtimestamp(self._clock(), timezone.utc)
            texts, metas, folded = (list(column) for column in zip(*fresh.values(), strict=True))
            inserted = conn.execute(
                f"INSERT INTO {TABLE} (text, text_hash, metadata, search, created_at) "  # noqa: S608
                "SELECT t, h, m::jsonb, to_tsvector('simple', f), %s "
                "FROM unnest(%s::text[], %s::bytea[], %s::text[], %s::text[]) WITH ORDINALITY AS u(t, h, m, f, n) "
                "ORDER BY n ON CONFLICT (text_hash) DO NOTHING RETURNING text_hash, id",
                (now, texts, list(fresh), metas, folded),
            ).fetchall()
            added = {bytes(digest): int(key) for digest, key in inserted}
            raced = [digest for digest in fresh if digest not in added]  # stored meanwhile by another writer
            known.update(self._ids(conn, raced) if raced else {})
        outcomes: list[StoreOutcome] = []
        for _text, digest, _metadata in rows:
            first_time = added.pop(digest, None)
            outcomes.append(
                StoreOutcome(str(first_time if first_time is not None else known[digest]), first_time is None)
            )
            if first_time is not None:
                known[digest] = first_time
        return outcomes

    @staticmethod
    def _ids(conn: psycopg.Connection[tuple[Any, ...]], digests: list[bytes]) -> dict[bytes, int]:
        rows = conn.execute(
            f"SELECT text_hash, id FROM {TABLE} WHERE text_hash = ANY(%s::bytea[])",  # noqa: S608
            (list(dict.fromkeys(digests)),),
        ).fetchall()
        return {bytes(digest): int(key) for digest, key in rows}

    # -- reading ---------------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        limit: int = 5,
        filters: Mapping[str, FilterValue] | None = None,
    ) -> list[KnowledgeHit]:
        """Ranked hits for ``query``, best first, with highlighted snippets.

        The query syntax, the filters and their errors are those of
        :meth:`SqliteKnowledgeStore.search <tools.builtin.knowledge.SqliteKnowledgeStore.search>`
        (``ts_rank_cd`` ranks instead of BM25; see the module docstring).
        """
        tsquery = _tsquery(parse_query(query))
        where, params = _containment(check_filters(filters or {}))
        if tsquery is None:
            return []
        sql = (
            "SELECT k.id, k.text, k.metadata, k.created_at, r.rank, "  # noqa: S608 - constant fragments only
            f"ts_headline('{SEARCH_CONFIG}', k.text, to_tsquery('{SEARCH_CONFIG}', %s), %s) FROM ("
            f"SELECT id, ts_rank_cd(search, q, 1) AS rank FROM {TABLE}, to_tsquery('simple', %s) AS q "
            f"WHERE search @@ q{where} ORDER BY rank DESC, id LIMIT %s) AS r "
            f"JOIN {TABLE} AS k ON k.id = r.id ORDER BY r.rank DESC, r.id"
        )
        args = [tsquery, self._headline_options, tsquery, *params, max(1, min(limit, MAX_LIMIT))]
        with self._connection() as conn:
            rows = conn.execute(sql, args).fetchall()
        return [self._hit(row) for row in rows]

    def get(self, doc_id: str) -> KnowledgeItem | None:
        """The stored text and metadata for ``doc_id``; None if unknown or malformed."""
        key = parse_id(doc_id)
        if key is None:
            return None
        with self._connection() as conn:
            row = conn.execute(f"SELECT text, metadata FROM {TABLE} WHERE id = %s", (key,)).fetchone()  # noqa: S608
        return None if row is None else KnowledgeItem(row[0], row[1])

    def count(self) -> int:
        """How many documents are stored."""
        with self._connection() as conn:
            row = conn.execute(f"SELECT count(*) FROM {TABLE}").fetchone()  # noqa: S608
        return int(row[0]) if row is not None else 0

    # -- internals -------------------------------------------------------------------------

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[tuple[Any, ...]]]:
        """One transaction on the migrated table; an unusable database as `UpstreamError`."""
        try:
            with self.database.session("knowledge", MIGRATIONS) as conn:
                yield conn
        except DatabaseError as exc:
            logger.warning("knowledge store unavailable: %s", exc)
            raise UpstreamError(
                "The knowledge base cannot be used right now (its database is unavailable). Try again later, "
                "or continue without it."
            ) from exc

    def _hit(self, row: tuple[Any, ...]) -> KnowledgeHit:
        doc_id, text, metadata, created_at, rank, headline = row
        return KnowledgeHit(
            id=str(doc_id),
            score=float(f"{float(rank):.6g}"),
            snippet=self._ellipsis(str(headline), str(text)),
            text=str(text),
            metadata=dict(metadata),
            created_at=created_at.astimezone(timezone.utc),
        )

    def _ellipsis(self, headline: str, text: str) -> str:
        """``…`` where the snippet does not reach the start or the end of the text."""
        plain = headline.replace(self._highlight[0], "").replace(self._highlight[1], "")
        if not plain.strip():
            return headline
        head = "" if text.startswith(plain) else "…"
        tail = "" if text.endswith(plain) else "…"
        return f"{head}{headline}{tail}"


def _folded(text: str) -> str:
    """The words SQLite's ``unicode61 remove_diacritics 2`` tokenizer would index, space-separated."""
    return " ".join(_words(text))


def _words(text: str) -> list[str]:
    bare = "".join(c for c in unicodedata.normalize("NFKD", text) if unicodedata.category(c) != "Mn")
    return _WORDS.findall(bare.casefold())


def _tsquery(groups: list[list[QueryTerm]]) -> str | None:
    """The ``to_tsquery`` text of parsed groups: words quoted, phrases ``<->``, prefixes ``:*``.

    None when no term has a word left after folding (nothing can match).
    """
    rendered_groups: list[str] = []
    for group in groups:
        terms: list[str] = []
        for term in group:
            words = [_quoted(word) for word in _words(term.text)]
            if not words:
                continue
            if term.prefix:
                words[-1] += ":*"
            terms.append("(" + " <-> ".join(words) + ")")
        if terms:
            rendered_groups.append("(" + " | ".join(terms) + ")")
    return " & ".join(rendered_groups) if rendered_groups else None


def _quoted(word: str) -> str:
    return "'" + word.replace("\\", "\\\\").replace("'", "''") + "'"


def _containment(filters: list[tuple[str, FilterValue]]) -> tuple[str, list[Any]]:
    """SQL and parameters keeping documents whose metadata at each dotted key equals the
    value or is a list containing it (GIN-indexed ``@>``)."""
    clauses: list[str] = []
    params: list[Any] = []
    for key, value in filters:
        scalar: Any = value
        listed: Any = [value]
        for part in reversed(key.split(".")):
            scalar, listed = {part: scalar}, {part: listed}
        clauses.append(" AND (metadata @> %s::jsonb OR metadata @> %s::jsonb)")
        params.extend([json.dumps(scalar), json.dumps(listed)])
    return "".join(clauses), params


def _without_nul(item: KnowledgeItem) -> KnowledgeItem:
    """``item`` with NUL characters (which PostgreSQL cannot store) as U+FFFD."""
    text = item.text.replace("\x00", "\ufffd") if isinstance(item.text, str) else item.text
    metadata = _replace_nul(item.metadata) if isinstance(item.metadata, Mapping) else item.metadata
    return KnowledgeItem(text, metadata)


def _replace_nul(value: Any) -> Any:
    if isinstance(value, str):
        return value.replace("\x00", "\ufffd")
    if isinstance(value, Mapping):
        return {_replace_nul(key): _replace_nul(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_replace_nul(item) for item in value]
    return value
