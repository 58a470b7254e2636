"""Fixtures for the shared/ unit tests: the sample files and a fixed clock."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "context"
#: Thursday 26 November 2026, 09:00 in Lisbon (UTC+0 in winter).
FIXED_NOW = datetime(2026, 11, 26, 9, 0, tzinfo=timezone.utc)

CSV_COLUMNS = {
    "date": "Date",
    "description": "Description",
    "amount": "Amount",
    "category": "Category",
    "memo": "Memo",
}


@pytest.fixture
def examples() -> Path:
    """The folder of sample files."""
    return EXAMPLES


@pytest.fixture
def csv_columns() -> dict[str, str]:
    """Column mapping of the sample statement.csv."""
    return dict(CSV_COLUMNS)


@pytest.fixture
def clock() -> Callable[[], datetime]:
    """A clock stopped at :data:`FIXED_NOW`."""
    return lambda: FIXED_NOW
