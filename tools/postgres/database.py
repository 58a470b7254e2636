"""`Database`: one PostgreSQL database shared by tooldeck's stores, through a small pool.

Every PostgreSQL store (approvals, the resume claim ledger, knowledge ...) talks to its
database through a `Database`: it opens a pool of connections on first use
(``psycopg_pool``, extra ``postgres``), runs each store's migrations once
(:mod:`tools.postgres.migrations`), and turns connection failures into a
:class:`~tools.postgres.migrations.DatabaseError` that names the database (never its
password) and what to check. Several stores may share one `Database` (one pool); a store
given only a URL makes its own.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from tools.postgres._url import check_database_url, redact_url
from tools.postgres.migrations import DatabaseError, Migration, migrate

if TYPE_CHECKING:
    import psycopg
    from psycopg_pool import ConnectionPool

logger = logging.getLogger(__name__)


class Database:
    """A PostgreSQL database and a pool of connections to it.

    Args:
        url: ``postgresql://user:password@host:port/dbname`` (libpq URL; a Unix socket
            directory goes in ``?host=/run/postgresql``).
        max_connections: Most connections this object opens at once.
        connect_timeout: Seconds to wait for a connection (to connect, or for a free one).
        application_name: Shown in ``pg_stat_activity``.

    Raises:
        ValueError: ``url`` is not a ``postgresql://`` URL.
        DatabaseError: (on first use) the database cannot be reached.
    """

    def __init__(
        self,
        url: str,
        *,
        max_connections: int = 8,
        connect_timeout: float = 10.0,
        application_name: str = "tooldeck",
    ) -> None:
        if max_connections < 1:
            raise ValueError(f"max_connections must be >= 1, got {max_connections}")
        self._url = check_database_url(url, setting="database_url")
        self.location = redact_url(self._url)
        self._max = max_connections
        self._timeout = connect_timeout
        self._application_name = application_name
        self._pool: ConnectionPool[Any] | None = None
        self._lock = threading.Lock()
        self._migrated: set[str] = set()
        self._closed = False

    def __repr__(self) -> str:
        return f"Database({self.location!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        # A copy in another process (a Ray worker) opens its own pool to the same database.
        return (_rebuild, (self._url, self._max, self._timeout, self._application_name))

    # ------------------------------------------------------------------ use

    @contextlib.contextmanager
    def connection(self) -> Iterator[psycopg.Connection[tuple[Any, ...]]]:
        """A pooled connection inside a transaction: committed when the block ends, rolled
        back when it raises.

        Raises:
            DatabaseError: no connection could be had within ``connect_timeout``.
        """
        import psycopg
        from psycopg_pool import PoolTimeout

        pool = self._open()
        try:
            with pool.connection(timeout=self._timeout) as conn:
                yield conn
        except PoolTimeout:
            raise DatabaseError(self._unreachable(self._diagnose())) from None
        except psycopg.OperationalError as exc:
            raise DatabaseError(self._unreachable(_reason(exc))) from exc

    @contextlib.contextmanager
    def session(self, component: str, migrations: Sequence[Migration]) -> Iterator[psycopg.Connection[tuple[Any, ...]]]:
        """`connection` to a database whose ``component`` schema is current (`ensure_schema`
        first); every driver error, also one raised in the block, as a `DatabaseError`.

        Raises:
            SchemaVersionError: the database's schema is newer than this code knows.
            DatabaseError: the database cannot be reached or refused an operation (the
                transaction was rolled back).
        """
        import psycopg

        self.ensure_schema(component, migrations)
        try:
            with self.connection() as conn:
                yield conn
        except psycopg.Error as exc:
            raise DatabaseError(
                f"database {self.location} refused an operation on the {component} tables ({type(exc).__name__}: "
                f"{_reason(exc)}); it was rolled back"
            ) from exc

    def ensure_schema(self, component: str, migrations: Sequence[Migration]) -> None:
        """Create or upgrade ``component``'s tables (once per object; see `migrate`).

        Raises:
            SchemaVersionError: the database's schema is newer than this code knows.
            DatabaseError: the database cannot be reached, or a migration failed.
        """
        if component in self._migrated:
            return
        import psycopg

        with self.connection() as conn:
            try:
                applied = migrate(conn, component, migrations, where=self.location)
            except psycopg.Error as exc:
                raise DatabaseError(
                    f"database {self.location}: the {component} schema could not be created or upgraded "
                    f"({_reason(exc)}); the user needs the right to create tables in it (nothing was changed)"
                ) from exc
        if applied:
            logger.info("database %s: %s schema upgraded by %d step(s)", self.location, component, applied)
        self._migrated.add(component)

    @property
    def closed(self) -> bool:
        """Whether `close` was called (the object cannot be used any more)."""
        return self._closed

    def close(self) -> None:
        """Close every connection (the object cannot be used afterwards)."""
        with self._lock:
            pool, self._pool = self._pool, None
            self._closed = True
        if pool is not None:
            pool.close()

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # ------------------------------------------------------------------ internals

    def _open(self) -> ConnectionPool[Any]:
        with self._lock:
            if self._closed:
                raise DatabaseError(f"database {self.location}: this Database was closed")
            if self._pool is None:
                self._pool = self._new_pool()
            return self._pool

    def _new_pool(self) -> ConnectionPool[Any]:
        try:
            import psycopg
            from psycopg_pool import ConnectionPool
        except ImportError:
            raise DatabaseError(
                "PostgreSQL support needs psycopg 3 and psycopg-pool: "
                "pip install -e '.[postgres]' in a tooldeck checkout"
            ) from None
        try:  # one direct connection first: a wrong URL fails now, with the server's reason
            psycopg.connect(self._url, connect_timeout=max(1, round(self._timeout))).close()
        except psycopg.Error as exc:
            raise DatabaseError(self._unreachable(_reason(exc))) from None
        pool: ConnectionPool[Any] = ConnectionPool(
            self._url,
            min_size=1,
            max_size=self._max,
            timeout=self._timeout,
            kwargs={"connect_timeout": max(1, round(self._timeout)), "application_name": self._application_name},
            check=ConnectionPool.check_connection,
            name=f"tooldeck {self.location}",
            open=False,
        )
        pool.open(wait=False)
        return pool

    def _diagnose(self) -> str:
        """Why the pool had no connection: the error of one direct attempt, or "all busy"."""
        import psycopg

        try:
            psycopg.connect(self._url, connect_timeout=max(1, round(self._timeout))).close()
        except psycopg.Error as exc:
            return _reason(exc)
        return f"all {self._max} connections stayed busy for {self._timeout:g} s"

    def _unreachable(self, reason: str) -> str:
        return (
            f"database {self.location} cannot be used: {reason}; check that the server runs and that the URL "
            "(TOOLDECK_DATABASE_URL or database_url=) names the right host, database, user and password"
        )


def _rebuild(url: str, max_connections: int, timeout: float, application_name: str) -> Database:
    return Database(url, max_connections=max_connections, connect_timeout=timeout, application_name=application_name)


def _reason(exc: BaseException) -> str:
    """The first line of a driver error, without anything that could be a password."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text[:300]


def database_for(database_url: str | None, database: Database | None, *, store: str) -> tuple[Database, bool]:
    """The `Database` a store uses, and whether the store owns it (closes it on ``close()``).

    Raises:
        ValueError: neither or both of ``database_url`` and ``database`` were given, or the
            URL is not a ``postgresql://`` URL.
    """
    if (database_url is None) == (database is None):
        raise ValueError(f"{store} needs exactly one of database_url= (a postgresql:// URL) or database= (a Database)")
    if database is not None:
        return database, False
    return Database(str(database_url)), True
