"""``ToolCatalog``: a SQLite catalog of known-but-not-adopted tools, searchable by text.

Sources (:mod:`tools.store.sources`) are remembered in the database, so ``sync()`` refreshes
every one of them. A source that fails keeps its previous entries and records the error; the
others are refreshed anyway. Text search uses SQLite FTS5 (ranked by BM25) when the SQLite
library has it, else a plain ``LIKE`` match.

A catalog file can come with a directory (a cloned repository, an archive), and its
remembered sources start programs (an MCP server's command, every binary of a directory).
Given the user's :class:`~tools.store.trust.TrustStore` (``owners=``), a catalog is the user's
only when it was created by them: creating one writes a random owner token into it and records
its hash in the user's trust file. Another catalog can be searched, but its sources are not
run and its entries are not adopted (:meth:`ToolCatalog.require_own`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import secrets
import shlex
import sqlite3
from collections.abc import Callable, Iterator, Mapping
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import TypeAdapter, ValidationError

from tools.store.errors import CatalogError, UnknownCatalogEntryError
from tools.store.sources import CatalogEntry, CatalogSource, normalize_capability

if TYPE_CHECKING:
    from tools.store.trust import TrustStore

logger = logging.getLogger(__name__)

CATALOG_FILE = "catalog.sqlite3"
_SOURCE_ADAPTER: TypeAdapter[CatalogSource] = TypeAdapter(CatalogSource)
_WORD = re.compile(r"\w+", re.UNICODE)
_SCHEMA = """
CREATE TABLE IF NOT EXISTS sources (
    name TEXT PRIMARY KEY, spec TEXT NOT NULL, last_sync TEXT, last_error TEXT
);
CREATE TABLE IF NOT EXISTS entries (
    catalog_id TEXT PRIMARY KEY, source TEXT NOT NULL, name TEXT NOT NULL,
    description TEXT NOT NULL, adapter_type TEXT NOT NULL, capabilities TEXT NOT NULL,
    entry TEXT NOT NULL, last_seen TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS entries_source ON entries(source);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
_FTS = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS entries_fts USING fts5("
    "catalog_id UNINDEXED, name, description, capabilities, tokenize='unicode61')"
)


@dataclass(frozen=True)
class SourceSync:
    """What one source's sync did.

    Attributes:
        source: The source's name.
        entries: Entries it has now (after the sync, or kept after a failure).
        added: Entries that are new.
        removed: Entries that disappeared.
        error: Why the sync failed (its previous entries were kept), or None.
    """

    source: str
    entries: int = 0
    added: int = 0
    removed: int = 0
    error: str | None = None


@dataclass(frozen=True)
class SyncReport:
    """The outcome of :meth:`ToolCatalog.sync`, one :class:`SourceSync` per source."""

    sources: list[SourceSync] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when every source synced."""
        return all(s.error is None for s in self.sources)


#: Called before (``done=False``) and after (``done=True``) each source is synced.
SyncProgress = Callable[[str, int, int, bool], None]


class ToolCatalog:
    """Known tools in a SQLite database, filled by sources and searched by text.

    Args:
        path: The database file (created with its directory when missing), e.g.
            ``.tooldeck/catalog.sqlite3``.
        env: The environment sources run with (``PATH`` for servers and binaries, credentials
            for MCP servers over HTTP); pass ``os.environ`` at the entry point.
        clock: Current time (injectable for tests).
        owners: The user's trust file (``tooldeck`` passes it): a catalog they did not
            create is then refused to :meth:`sync`, :meth:`add_source` and adoption
            (:meth:`require_own`). None: every catalog is the caller's own.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        env: Mapping[str, str] | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(timezone.utc),
        owners: TrustStore | None = None,
    ) -> None:
        self.path = Path(path)
        self._env = dict(env or {})
        self._clock = clock
        self._fts: bool | None = None
        self._owners = owners
        self._opened = False

    def __repr__(self) -> str:
        return f"ToolCatalog({str(self.path)!r})"

    @contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        creating = not self._opened and not self.path.exists()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=30.0)
        except (OSError, sqlite3.Error) as exc:
            raise CatalogError(f"catalog {self.path}: cannot be opened ({exc}); check the path") from None
        with closing(conn):
            try:
                conn.executescript(_SCHEMA)
                if not self._opened:
                    self._opened = True
                    if creating:
                        self._claim(conn)
                if self._fts is None:
                    try:
                        conn.execute(_FTS)
                        self._fts = True
                    except sqlite3.OperationalError:
                        self._fts = False
                with conn:
                    yield conn
            except sqlite3.DatabaseError as exc:
                raise CatalogError(
                    f"catalog {self.path}: {exc}; remove the file and run 'tooldeck catalog sync' again"
                ) from None

    # ------------------------------------------------------------------ ownership

    def _claim(self, conn: sqlite3.Connection) -> None:
        """Record a catalog this process created as the user's (with ``owners``)."""
        if self._owners is None:
            return
        with conn:
            conn.execute("INSERT OR IGNORE INTO meta(key, value) VALUES ('owner', ?)", (secrets.token_hex(32),))
        token = conn.execute("SELECT value FROM meta WHERE key = 'owner'").fetchone()[0]  # a racing creator's
        self._owners.trust(self.path, _digest(token))

    def is_own(self) -> bool:
        """True when the user created this catalog (always, without ``owners``)."""
        if self._owners is None:
            return True
        with self._db() as db:
            row = db.execute("SELECT value FROM meta WHERE key = 'owner'").fetchone()
        record = self._owners.get(self.path)
        return row is not None and record is not None and record.sha256 == _digest(str(row[0]))

    def require_own(self, doing: str = "use it") -> None:
        """Refuse a catalog the user did not create before running or adopting anything of it.

        Args:
            doing: What was refused, for the message (``"adopt from it"``).

        Raises:
            CatalogError: the catalog came with the directory (cloned, copied, unpacked).
        """
        if self.is_own():
            return
        raise CatalogError(
            f"catalog {self.path} was not created by you (it came with this directory: a cloned repository, "
            f"a copy or an archive), so tooldeck will not {doing}: its remembered sources start programs and "
            f"its entries can run anything. Remove it (rm {shlex.quote(str(self.path))}) and add the sources you "
            "want: tooldeck catalog sync --mcp NAME=COMMAND (or --manuals, --binaries)"
        )

    # ------------------------------------------------------------------ sources

    def add_source(self, source: CatalogSource) -> None:
        """Remember ``source`` (replacing one with the same name); :meth:`sync` fills it.

        Raises:
            CatalogError: the catalog is not the user's (see :meth:`require_own`).
        """
        self.require_own("add a source to it")
        spec = source.model_dump_json()
        with self._db() as db:
            db.execute(
                "INSERT INTO sources(name, spec) VALUES (?, ?) "
                "ON CONFLICT(name) DO UPDATE SET spec = excluded.spec, last_error = NULL",
                (source.name, spec),
            )

    def remove_source(self, name: str) -> bool:
        """Forget a source and its entries; returns whether it existed."""
        with self._db() as db:
            self._delete_entries(db, name)
            return db.execute("DELETE FROM sources WHERE name = ?", (name,)).rowcount > 0

    def sources(self) -> list[CatalogSource]:
        """The remembered sources, by name."""
        with self._db() as db:
            rows = db.execute("SELECT spec FROM sources ORDER BY name").fetchall()
        return [_SOURCE_ADAPTER.validate_json(row[0]) for row in rows]

    # ------------------------------------------------------------------ sync

    def sync(self, names: list[str] | None = None, *, progress: SyncProgress | None = None) -> SyncReport:
        """Refresh the entries of every remembered source (or of those in ``names``).

        Args:
            names: Only these sources.
            progress: Called with (source name, index, total, done) around each source.

        Raises:
            CatalogError: a name in ``names`` is not a remembered source, or the catalog is
                not the user's (see :meth:`require_own`): no source is run.
        """
        self.require_own("run its remembered sources")
        sources = self.sources()
        if names is not None:
            unknown = sorted(set(names) - {s.name for s in sources})
            if unknown:
                raise CatalogError(f"no catalog source named {unknown}; add it first (tooldeck catalog sync --help)")
            sources = [s for s in sources if s.name in names]
        report: list[SourceSync] = []
        for index, source in enumerate(sources):
            if progress is not None:
                progress(source.name, index, len(sources), False)
            report.append(self._sync_one(source))
            if progress is not None:
                progress(source.name, index + 1, len(sources), True)
        return SyncReport(report)

    def _sync_one(self, source: CatalogSource) -> SourceSync:
        now = self._clock().isoformat()
        try:
            entries = source.collect(self._env)
        except CatalogError as exc:
            logger.warning("catalog source %s failed: %s", source.name, exc)
            with self._db() as db:
                db.execute("UPDATE sources SET last_error = ? WHERE name = ?", (str(exc), source.name))
                kept = db.execute("SELECT COUNT(*) FROM entries WHERE source = ?", (source.name,)).fetchone()[0]
            return SourceSync(source.name, entries=kept, error=str(exc))
        with self._db() as db:
            old = {r[0] for r in db.execute("SELECT catalog_id FROM entries WHERE source = ?", (source.name,))}
            self._delete_entries(db, source.name)
            for entry in {e.catalog_id: e for e in entries}.values():
                self._insert(db, entry, now)
            db.execute(
                "UPDATE sources SET last_sync = ?, last_error = NULL WHERE name = ?",
                (now, source.name),
            )
        new = {e.catalog_id for e in entries}
        return SourceSync(source.name, entries=len(new), added=len(new - old), removed=len(old - new))

    def _delete_entries(self, db: sqlite3.Connection, source: str) -> None:
        if self._fts:
            db.execute(
                "DELETE FROM entries_fts WHERE catalog_id IN (SELECT catalog_id FROM entries WHERE source = ?)",
                (source,),
            )
        db.execute("DELETE FROM entries WHERE source = ?", (source,))

    def _insert(self, db: sqlite3.Connection, entry: CatalogEntry, now: str) -> None:
        caps = " ".join(entry.capabilities)
        db.execute(
            "INSERT OR REPLACE INTO entries VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                entry.catalog_id,
                entry.source,
                entry.name,
                entry.description,
                entry.adapter_type,
                json.dumps(list(entry.capabilities)),
                entry.model_dump_json(),
                now,
            ),
        )
        if self._fts:
            db.execute("DELETE FROM entries_fts WHERE catalog_id = ?", (entry.catalog_id,))
            db.execute(
                "INSERT INTO entries_fts(catalog_id, name, description, capabilities) VALUES (?, ?, ?, ?)",
                (entry.catalog_id, entry.name.replace("_", " ") + " " + entry.name, entry.description, caps),
            )

    def put(self, entry: CatalogEntry) -> None:
        """Add or replace one entry directly (without a source sync)."""
        with self._db() as db:
            self._insert(db, entry, self._clock().isoformat())

    # ------------------------------------------------------------------ queries

    def get(self, catalog_id: str) -> CatalogEntry:
        """The entry ``catalog_id``.

        Raises:
            UnknownCatalogEntryError: no such entry; the message suggests a search.
        """
        with self._db() as db:
            row = db.execute("SELECT entry FROM entries WHERE catalog_id = ?", (catalog_id,)).fetchone()
        if row is None:
            hint = catalog_id.rsplit(":", maxsplit=1)[-1]
            raise UnknownCatalogEntryError(
                f"no catalog entry {catalog_id[:100]!r}; find one with: tooldeck catalog search {hint[:40]!r}"
            )
        return _entry(row[0])

    def entries(self) -> list[CatalogEntry]:
        """Every entry, by catalog id."""
        with self._db() as db:
            rows = db.execute("SELECT entry FROM entries ORDER BY catalog_id").fetchall()
        return [_entry(r[0]) for r in rows]

    def search(self, text: str, *, limit: int = 20) -> list[CatalogEntry]:
        """Entries matching the words of ``text`` (names, descriptions, capabilities), best first.

        All words must match; when nothing does, any word may. Empty text lists everything.
        """
        words = [w.lower() for w in _WORD.findall(text)][:20]
        if not words:
            return self.entries()[:limit]
        with self._db() as db:
            for joiner in (" AND ", " OR "):
                rows = self._match(db, words, joiner, limit)
                if rows:
                    return [_entry(r[0]) for r in rows]
        return []

    def _match(self, db: sqlite3.Connection, words: list[str], joiner: str, limit: int) -> list[tuple[str]]:
        if self._fts:
            query = joiner.join('"' + w.replace('"', "") + '"*' for w in words)
            return db.execute(
                "SELECT e.entry FROM entries_fts f JOIN entries e ON e.catalog_id = f.catalog_id "
                "WHERE entries_fts MATCH ? ORDER BY bm25(entries_fts) LIMIT ?",
                (query, limit),
            ).fetchall()
        clause = joiner.join(["(lower(name || ' ' || description || ' ' || capabilities) LIKE ?)"] * len(words))
        params = [f"%{w}%" for w in words]
        return db.execute(
            f"SELECT entry FROM entries WHERE {clause} ORDER BY catalog_id LIMIT ?",  # noqa: S608 - fixed clauses
            (*params, limit),
        ).fetchall()

    def find_by_capability(self, capability: str, *, limit: int = 20) -> list[CatalogEntry]:
        """Entries tagged with ``capability``; if none, entries whose text matches all its words."""
        wanted = normalize_capability(capability)
        tagged = [e for e in self.entries() if wanted in e.capabilities]
        if tagged:
            return tagged[:limit]
        words = [w for w in re.split(r"[_\W]+", wanted) if w]
        if not words:
            return []
        with self._db() as db:
            rows = self._match(db, [w.lower() for w in words], " AND ", limit)
        return [_entry(r[0]) for r in rows]


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _entry(raw: str) -> CatalogEntry:
    try:
        return CatalogEntry.model_validate_json(raw)
    except ValidationError as exc:
        raise CatalogError(
            f"a catalog entry is unreadable ({exc.error_count()} problem(s)); run 'tooldeck catalog sync'"
        ) from None
