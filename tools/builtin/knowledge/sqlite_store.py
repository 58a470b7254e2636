"""The embedded knowledge store: SQLite with an FTS5 index, safe under concurrent writers.

One table holds the texts (a unique SHA-256 index stores identical texts once) and JSON
metadata; an external-content FTS5 table indexes the text and gives BM25 ranking and
snippets. Several processes may write the same file: the database runs in WAL mode with a
busy timeout, every write is one ``BEGIN IMMEDIATE`` transaction, and a write that still
meets ``SQLITE_BUSY`` is retried with back-off (tenacity).
"""

from __future__ import annotations

import functools
import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypeVar

from tenacity import (
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential,
    wait_random,
)

from tools.builtin.knowledge._records import (
    MAX_FILTERS,
    MAX_LIMIT,
    MAX_METADATA_BYTES,
    MAX_TEXT_CHARS,
    check_filters,
    parse_id,
    prepare_row,
)
from tools.builtin.knowledge.query import build_match_expression
from tools.builtin.knowledge.store import FilterValue, KnowledgeHit, KnowledgeItem, StoreOutcome

T = TypeVar("T")
__all__ = ["MAX_FILTERS", "MAX_LIMIT", "MAX_METADATA_BYTES", "MAX_TEXT_CHARS", "SqliteKnowledgeStore", "is_busy_error"]

_BATCH_ROWS = 1_000
_HASH_LOOKUP_CHUNK = 500  # below SQLite's oldest bound-variable limit (999)
_SQLITE_BUSY = 5
_SQLITE_LOCKED = 6

_SCHEMA = """
CREATE TABLE IF NOT EXISTS knowledge (
    id INTEGER PRIMARY KEY,
    text TEXT NOT NULL,
    text_hash BLOB NOT NULL UNIQUE,
    metadata TEXT NOT NULL DEFAULT '{}',
    created_at REAL NOT NULL
);
CREATE VIRTUAL TABLE IF NOT EXISTS knowledge_fts USING fts5(
    text, content='knowledge', content_rowid='id', tokenize='unicode61 remove_diacritics 2'
);
DROP TRIGGER IF EXISTS knowledge_ai;
CREATE TRIGGER IF NOT EXISTS knowledge_ad AFTER DELETE ON knowledge BEGIN
    INSERT INTO knowledge_fts(knowledge_fts, rowid, text) VALUES ('delete', old.id, old.text);
END;
"""


def is_busy_error(error: BaseException) -> bool:
    """True for SQLITE_BUSY / SQLITE_LOCKED (worth retrying), including extended codes."""
    if not isinstance(error, sqlite3.OperationalError):
        return False
    code = getattr(error, "sqlite_errorcode", None)
    if isinstance(code, int):
        return (code & 0xFF) in (_SQLITE_BUSY, _SQLITE_LOCKED)
    message = str(error).lower()
    return "locked" in message or "busy" in message


class SqliteKnowledgeStore:
    """A :class:`~tools.builtin.knowledge.store.KnowledgeStore` in one SQLite file.

    Args:
        path: The database file (created with its parent directory if missing), or
            ``":memory:"`` for a private in-memory store (tests).
        busy_timeout: Seconds SQLite waits for a lock before reporting busy.
        max_attempts: Tries per write transaction when SQLite still reports busy.
        cache_mb: SQLite page cache of this connection, in MB (grows only as used).
        highlight: Markers put around matched words in snippets.
        snippet_tokens: Words per snippet (1-64).
        sleep: Back-off sleep between busy retries (injectable for tests).
        clock: Wall clock in seconds since the epoch, for ``created_at``.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        busy_timeout: float = 5.0,
        max_attempts: int = 8,
        cache_mb: int = 32,
        highlight: tuple[str, str] = ("**", "**"),
        snippet_tokens: int = 24,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
    ) -> None:
        location = os.fspath(path)
        if location != ":memory:":
            Path(location).parent.mkdir(parents=True, exist_ok=True)
        self.path = location
        self._highlight = highlight
        self._snippet_tokens = max(1, min(snippet_tokens, 64))
        self._clock = clock
        self._lock = threading.Lock()
        self._max_attempts = max(1, max_attempts)
        self._retrying = Retrying(
            stop=stop_after_attempt(max(1, max_attempts)),
            wait=wait_exponential(multiplier=0.01, max=0.5) + wait_random(0, 0.01),
            retry=retry_if_exception(is_busy_error),
            reraise=True,
            sleep=sleep,
        )
        self._conn = sqlite3.connect(location, timeout=busy_timeout, isolation_level=None, check_same_thread=False)
        self._conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
        self._conn.execute(f"PRAGMA cache_size = {-1024 * max(1, int(cache_mb))}")
        self._retrying.copy()(self._initialise)

    def _initialise(self) -> None:
        with self._lock:
            conn = self._conn
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            try:  # executescript commits first, so the transaction is part of the script
                conn.executescript(f"BEGIN IMMEDIATE;{_SCHEMA}COMMIT;")
            except BaseException as exc:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                if isinstance(exc, sqlite3.OperationalError) and "fts5" in str(exc).lower():
                    raise RuntimeError(
                        f"SqliteKnowledgeStore needs SQLite with the FTS5 extension; this Python's "
                        f"SQLite {sqlite3.sqlite_version} lacks it ({exc})."
                    ) from exc
                raise

    def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            self._conn.close()

    def __enter__(self) -> SqliteKnowledgeStore:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"SqliteKnowledgeStore({self.path!r})"

    # -- writing ---------------------------------------------------------------------------

    def store(self, text: str, metadata: Mapping[str, Any] | None = None) -> StoreOutcome:
        """Store ``text`` with ``metadata``; an identical text is stored once.

        The text is stripped; empty or over-long texts (> 100,000 characters) and metadata
        that is not a JSON object of at most 16 KB raise
        :class:`~tools.errors.InvalidArgumentsError`. Nothing is written then.
        """
        return self.store_many([KnowledgeItem(text, metadata or {})])[0]

    def store_many(self, items: Iterable[KnowledgeItem]) -> list[StoreOutcome]:
        """Store many texts, 1,000 per transaction; outcomes in input order.

        Every item is validated before anything is written (a bad item raises
        :class:`~tools.errors.InvalidArgumentsError` naming its index).
        """
        rows = [prepare_row(index, item) for index, item in enumerate(items)]
        outcomes: list[StoreOutcome] = []
        for start in range(0, len(rows), _BATCH_ROWS):
            batch = rows[start : start + _BATCH_ROWS]
            now = self._clock()
            outcomes.extend(self._write(functools.partial(_insert_rows, rows=batch, now=now)))
        return outcomes

    def delete(self, doc_id: str) -> bool:
        """Delete a document; True when it existed. A malformed id returns False."""
        rowid = parse_id(doc_id)
        if rowid is None:
            return False
        deleted = self._write(lambda conn: conn.execute("DELETE FROM knowledge WHERE id = ?", (rowid,)).rowcount)
        return bool(deleted)

    def _write(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``work`` in one BEGIN IMMEDIATE transaction, retried while SQLite is busy."""
        return self._with_retry(functools.partial(self._transaction, work))

    def _transaction(self, work: Callable[[sqlite3.Connection], T]) -> T:
        with self._lock:
            conn = self._conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                result = work(conn)
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            return result

    # -- reading ---------------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        limit: int = 5,
        filters: Mapping[str, FilterValue] | None = None,
    ) -> list[KnowledgeHit]:
        """Ranked hits for ``query`` (BM25), best first, with highlighted snippets.

        ``query`` uses the syntax of :mod:`tools.builtin.knowledge.query` and can never
        cause an FTS5 syntax error. ``filters`` keep documents whose metadata value at each
        key (dotted paths allowed: ``"author.name"``) equals the given value, or, for a
        list, contains it (``{"tags": "tax"}``). Bad queries, more than 8 filters, bad
        filter keys or values raise :class:`~tools.errors.InvalidArgumentsError`.
        ``limit`` is clamped to 1-100.
        """
        match = build_match_expression(query)
        where, params = _filter_clauses(filters or {})
        # The inner query ranks inside FTS5 and keeps only `limit` rows; the outer one fetches
        # their texts, so a common word does not load every matching document. `where` holds
        # constant fragments only; every value is a bound parameter.
        meta_join = " JOIN knowledge AS m ON m.id = knowledge_fts.rowid" if where else ""
        sql = (
            "SELECT k.id, k.text, k.metadata, k.created_at, f.rank, f.snip FROM ("  # noqa: S608
            "SELECT knowledge_fts.rowid AS rowid, knowledge_fts.rank AS rank, "
            "snippet(knowledge_fts, 0, ?, ?, '…', ?) AS snip "
            f"FROM knowledge_fts{meta_join} WHERE knowledge_fts MATCH ?{where} "
            "ORDER BY knowledge_fts.rank LIMIT ?) AS f "
            "JOIN knowledge AS k ON k.id = f.rowid ORDER BY f.rank"
        )
        args: list[Any] = [*self._highlight, self._snippet_tokens, match, *params]
        args.append(max(1, min(limit, MAX_LIMIT)))
        rows = self._read(lambda conn: conn.execute(sql, args).fetchall())
        return [_hit(row) for row in rows]

    def get(self, doc_id: str) -> KnowledgeItem | None:
        """The stored text and metadata for ``doc_id``; None if unknown or malformed."""
        rowid = parse_id(doc_id)
        if rowid is None:
            return None
        row = self._read(
            lambda conn: conn.execute("SELECT text, metadata FROM knowledge WHERE id = ?", (rowid,)).fetchone()
        )
        return None if row is None else KnowledgeItem(row[0], json.loads(row[1]))

    def count(self) -> int:
        """How many documents are stored."""
        row = self._read(lambda conn: conn.execute("SELECT count(*) FROM knowledge").fetchone())
        return int(row[0])

    def _read(self, work: Callable[[sqlite3.Connection], T]) -> T:
        def run() -> T:
            with self._lock:
                return work(self._conn)

        return self._with_retry(run)

    def _with_retry(self, call: Callable[[], T]) -> T:
        """Call once; only when SQLite reports busy, retry with back-off (cheap success path)."""
        try:
            return call()
        except sqlite3.OperationalError as exc:
            if not is_busy_error(exc) or self._max_attempts <= 1:
                raise
        retrying = self._retrying.copy(stop=stop_after_attempt(self._max_attempts - 1))
        result: T = retrying(call)
        return result


def _insert_rows(conn: sqlite3.Connection, *, rows: list[tuple[str, bytes, str]], now: float) -> list[StoreOutcome]:
    """Insert the new texts with one ``executemany``; runs inside the write transaction."""
    known = _ids_by_hash(conn, [digest for _text, digest, _meta in rows])
    fresh: dict[bytes, tuple[str, bytes, str, float]] = {}
    for text, digest, metadata in rows:
        if digest not in known and digest not in fresh:
            fresh[digest] = (text, digest, metadata, now)
    # New rows get ids above the current maximum (we hold the write lock), so one range
    # query finds them, and one INSERT ... SELECT indexes them (much faster than a trigger).
    (last_id,) = conn.execute("SELECT coalesce(max(id), 0) FROM knowledge").fetchone()
    conn.executemany(
        "INSERT INTO knowledge (text, text_hash, metadata, created_at) VALUES (?, ?, ?, ?)", list(fresh.values())
    )
    conn.execute("INSERT INTO knowledge_fts (rowid, text) SELECT id, text FROM knowledge WHERE id > ?", (last_id,))
    added = conn.execute("SELECT text_hash, id FROM knowledge WHERE id > ?", (last_id,)).fetchall()
    ids = {**known, **dict(added)}
    outcomes: list[StoreOutcome] = []
    for _text, digest, _metadata in rows:
        first_time = fresh.pop(digest, None) is not None
        outcomes.append(StoreOutcome(str(ids[digest]), duplicate=not first_time))
    return outcomes


def _ids_by_hash(conn: sqlite3.Connection, digests: list[bytes]) -> dict[bytes, int]:
    found: dict[bytes, int] = {}
    unique = list(dict.fromkeys(digests))
    for start in range(0, len(unique), _HASH_LOOKUP_CHUNK):
        chunk = unique[start : start + _HASH_LOOKUP_CHUNK]
        marks = ",".join("?" * len(chunk))
        sql = f"SELECT text_hash, id FROM knowledge WHERE text_hash IN ({marks})"  # noqa: S608 -- placeholders only
        found.update(conn.execute(sql, chunk).fetchall())
    return found


def _filter_clauses(filters: Mapping[str, FilterValue]) -> tuple[str, list[Any]]:
    clauses: list[str] = []
    params: list[Any] = []
    for key, value in check_filters(filters):
        clauses.append(" AND EXISTS (SELECT 1 FROM json_each(m.metadata, ?) AS j WHERE j.value = ?)")
        params.extend([f"$.{key}", value])
    return "".join(clauses), params


def _hit(row: tuple[Any, ...]) -> KnowledgeHit:
    doc_id, text, metadata, created_at, rank, snippet = row
    return KnowledgeHit(
        id=str(doc_id),
        score=float(f"{-float(rank):.6g}"),
        snippet=str(snippet),
        text=str(text),
        metadata=json.loads(metadata),
        created_at=datetime.fromtimestamp(float(created_at), tz=timezone.utc),
    )
