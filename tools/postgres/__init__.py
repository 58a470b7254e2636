"""PostgreSQL for tooldeck's shared state (extra ``postgres``: psycopg 3 and psycopg-pool).

``TOOLDECK_DATABASE_URL=postgresql://...`` (read at the entry points: ``python -m
orchestrator``, ``tooldeck``) or a store's ``database_url=`` moves the approvals, the resume
claim ledger and the knowledge store from local files to one PostgreSQL database, so
several replicas on several hosts share them. Unset, the embedded files and SQLite stay the
default. Nothing here imports psycopg until a database is used.

::

    database = Database("postgresql://tooldeck@db/tooldeck")   # one pool, shared by stores
    approvals = PostgresApprovalsStore(database=database)
    knowledge = PostgresKnowledgeStore(database=database)

Each store creates and upgrades its own tables (:mod:`tools.postgres.migrations`).
"""

from tools.postgres._url import DATABASE_URL_VARIABLE, check_database_url, redact_url
from tools.postgres.database import Database, database_for
from tools.postgres.migrations import SCHEMA_TABLE, DatabaseError, Migration, SchemaVersionError, schema_version

__all__ = [
    "DATABASE_URL_VARIABLE",
    "SCHEMA_TABLE",
    "Database",
    "DatabaseError",
    "Migration",
    "SchemaVersionError",
    "check_database_url",
    "database_for",
    "redact_url",
    "schema_version",
]
