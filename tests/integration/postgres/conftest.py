"""A private PostgreSQL cluster for this session (see `cluster`), a fresh database per test, and
the metrics place of the backend-parametrised metrics suites."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.store.conftest import weather_api

from .backends import BACKENDS, database_url_for
from .cluster import Cluster, start_cluster
from .metrics_places import MetricsPlace

__all__ = ["database_url", "pg_cluster", "place", "weather_api"]

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


@pytest.fixture(params=BACKENDS)
def place(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MetricsPlace]:
    """Where a metrics suite keeps its figures: a project's metrics file, or a fresh database."""
    url = database_url_for(request) if request.param == "postgres" else None
    where = MetricsPlace(request.param, tmp_path / ".tooldeck" / "metrics.json", url)
    yield where
    where.close()
