"""The backends every store suite runs against: the embedded default and PostgreSQL.

A suite's ``store`` fixture is parametrised with `BACKENDS`; the ``postgres`` variant takes a
fresh database from the session's private cluster (``database_url``), so it is skipped with
a reason only when PostgreSQL cannot be installed.
"""

from __future__ import annotations

import pytest

BACKENDS = [pytest.param("file", id="file"), pytest.param("postgres", id="postgres")]


def database_url_for(request: pytest.FixtureRequest) -> str:
    """A fresh database's URL (starting the session's cluster on first use)."""
    url: str = request.getfixturevalue("database_url")
    return url
