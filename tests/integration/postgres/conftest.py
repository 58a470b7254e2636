"""A private PostgreSQL cluster for this session (see `cluster`), and a fresh database per test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .cluster import Cluster, start_cluster

NOT_INSTALLED = (
    "PostgreSQL is not installed (no initdb on PATH, at pg_config --bindir or in /usr/lib/postgresql/*/bin); "
    ".ci/run installs Debian's postgresql when it runs as root, or: apt-get install postgresql"
)


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Cluster]:
    """The session's cluster, stopped (and its directory removed) at the end, even on failure."""
    pytest.importorskip(
        "psycopg", reason="psycopg is not installed: pip install -e '.[postgres]' in a tooldeck checkout"
    )
    pytest.importorskip(
        "psycopg_pool", reason="psycopg-pool is not installed: pip install -e '.[postgres]' in a tooldeck checkout"
    )
    try:
        cluster = start_cluster()
    except FileNotFoundError as exc:
        pytest.skip(NOT_INSTALLED if str(exc) == "initdb" else f"PostgreSQL cannot run here: no {exc}")
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def database_url(pg_cluster: Cluster) -> str:
    """The URL of a new, empty database owned by an unprivileged role."""
    return pg_cluster.new_database()
