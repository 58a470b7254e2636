"""Schema versions: each component of tooldeck (approvals, claims, knowledge ...) creates and
upgrades its own tables, in order, once per database.

One table, ``tooldeck_schema_version``, records every migration applied: ``(component,
version, description, applied_at)``; a component's version is its highest row. Opening a
store runs :func:`migrate` with the component's migrations:

* the missing ones run in order, in **one transaction** (PostgreSQL's DDL is
  transactional: a failure, or a process killed half-way, leaves the schema as it was);
* under an **advisory lock** (``pg_advisory_xact_lock``) taken before anything is read, so
  two processes opening the same fresh database at once do not both create the tables:
  the second waits, then finds the work done;
* a database whose component is at a **newer** version than this code knows is refused
  with :class:`SchemaVersionError` (an older tooldeck must not write a schema it does not
  understand).

A component's migrations are append-only: version ``n`` is the ``n``-th entry, and a
released migration is never edited (add a new one instead).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tools.errors import TooldeckError

if TYPE_CHECKING:
    import psycopg

#: The table recording applied migrations.
SCHEMA_TABLE = "tooldeck_schema_version"
#: ``pg_advisory_xact_lock`` key of schema changes ("tooldeck" in ASCII).
MIGRATION_LOCK_KEY = 0x746F6F6C6465636B
_CREATE_SCHEMA_TABLE = f"""
CREATE TABLE IF NOT EXISTS {SCHEMA_TABLE} (
    component text NOT NULL,
    version integer NOT NULL CHECK (version > 0),
    description text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (component, version)
)
"""


class DatabaseError(TooldeckError):
    """A PostgreSQL database cannot be used; the message names it (never its password) and the fix."""


class SchemaVersionError(DatabaseError):
    """The database holds a newer schema than this tooldeck knows (upgrade tooldeck).

    Attributes:
        component: The component whose schema is newer.
        found: The database's version of it.
        known: The newest version this code knows.
    """

    def __init__(self, message: str, *, component: str, found: int, known: int) -> None:
        super().__init__(message)
        self.component = component
        self.found = found
        self.known = known


@dataclass(frozen=True)
class Migration:
    """One step of a component's schema.

    Attributes:
        description: What the step does (kept in ``tooldeck_schema_version``).
        apply: SQL to execute (one or more statements), or a function given the connection
            (inside the migration's transaction) for steps that need Python.
    """

    description: str
    apply: str | Callable[[psycopg.Connection[tuple[Any, ...]]], None]


def schema_version(conn: psycopg.Connection[tuple[Any, ...]], component: str) -> int:
    """The version of ``component`` in the connected database (0: never migrated)."""
    row = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (SCHEMA_TABLE,)).fetchone()
    if row is None or not row[0]:
        return 0
    found = conn.execute(
        f"SELECT coalesce(max(version), 0) FROM {SCHEMA_TABLE} WHERE component = %s",  # noqa: S608 - constant name
        (component,),
    ).fetchone()
    return int(found[0]) if found is not None else 0


def migrate(
    conn: psycopg.Connection[tuple[Any, ...]],
    component: str,
    migrations: Sequence[Migration],
    *,
    where: str,
    lock_timeout: float = 60.0,
) -> int:
    """Bring ``component`` up to ``len(migrations)``; returns the number of steps applied.

    Args:
        conn: A connection not inside a transaction (this function commits).
        component: The component's name (``"approvals"``, ``"claims"`` ...).
        migrations: Its migrations, oldest first.
        where: The database as people may see it (for error messages).
        lock_timeout: Seconds to wait for another process's migration.

    Raises:
        SchemaVersionError: the database's version of ``component`` is newer than
            ``len(migrations)``.
        psycopg.Error: a step failed (nothing was applied).
    """
    known = len(migrations)
    current = schema_version(conn, component)
    conn.commit()  # the check above opened a transaction; the locked work gets its own
    if current == known:
        return 0
    with conn.transaction():
        conn.execute(f"SET LOCAL lock_timeout = {int(lock_timeout * 1000)}")
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK_KEY,))
        conn.execute(_CREATE_SCHEMA_TABLE)
        current = schema_version(conn, component)  # again: another process may have migrated meanwhile
        if current > known:
            raise SchemaVersionError(
                f"database {where}: its {component} schema is version {current}, newer than this tooldeck knows "
                f"({known}); upgrade tooldeck on this host (every process sharing the database must run a "
                "version that knows the schema)",
                component=component,
                found=current,
                known=known,
            )
        for version in range(current + 1, known + 1):
            step = migrations[version - 1]
            if isinstance(step.apply, str):
                conn.execute(step.apply.encode())  # bytes: several statements, no parameters
            else:
                step.apply(conn)
            conn.execute(
                f"INSERT INTO {SCHEMA_TABLE} (component, version, description) VALUES (%s, %s, %s)",  # noqa: S608
                (component, version, step.description),
            )
    return known - current
