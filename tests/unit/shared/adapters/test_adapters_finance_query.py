"""FinanceIndex / FinanceQuery: search, sort, paging, grouping, date ranges, limits."""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal

import pytest
from pydantic import ValidationError

from shared.adapters import FinanceIndex, FinanceQuery, Transaction


def _tx(day: int, amount: str, description: str, category: str, account: str = "A") -> Transaction:
    return Transaction(
        id=f"{day}-{description}",
        date=date(2026, 1, 1) + timedelta(days=day),
        amount=Decimal(amount),
        description=description,
        category=category,
        account=account,
        currency="EUR",
        source="csv",
    )


TXS = [
    _tx(40, "-3.50", "Coffee Corner", "Eating out"),
    _tx(0, "2000.00", "Payroll", "Income"),
    _tx(1, "-800.00", "Rent", "Housing"),
    _tx(2, "-2.80", "COFFEE corner", "Eating out", account="B"),
    _tx(35, "-60.00", "Supermarket", "Groceries"),
    _tx(36, "-12.00", "Coffee beans supermarket", "Groceries"),
]


def test_transactions_newest_first_with_paging() -> None:
    index = FinanceIndex(TXS)
    out = index.run(FinanceQuery(per_page=2, page=2))
    assert (out["total"], out["pages"], out["page"]) == (6, 3, 2)
    assert [t["description"] for t in out["transactions"]] == ["Supermarket", "COFFEE corner"]
    assert out["transactions"][0]["amount"] == "-60.00"  # Decimal serialised as a string


def test_search_matches_every_word_case_insensitively() -> None:
    out = FinanceIndex(TXS).run(FinanceQuery(action="search", search="coffee CORNER", sort="amount", sort_dir="asc"))
    assert [t["amount"] for t in out["transactions"]] == ["-3.50", "-2.80"]
    out = FinanceIndex(TXS).run(FinanceQuery(action="search", search="groceries"))  # category text too
    assert out["total"] == 2


def test_date_range_is_inclusive() -> None:
    query = FinanceQuery(date_from=date(2026, 1, 2), date_to=date(2026, 2, 5))
    out = FinanceIndex(TXS).run(query)
    assert [t["date"] for t in out["transactions"]] == ["2026-02-05", "2026-01-03", "2026-01-02"]


def test_summary_with_top_categories_and_grouping() -> None:
    out = FinanceIndex(TXS).run(FinanceQuery(action="summary"))
    assert out["totals"] == [
        {"currency": "EUR", "income": "2000.00", "expenses": "878.30", "net": "1121.70", "count": 6}
    ]
    assert [row["key"] for row in out["top_expense_categories"]] == [
        "Housing",
        "Groceries",
        "Eating out",
    ]
    grouped = FinanceIndex(TXS).run(FinanceQuery(action="summary", group_by="month"))
    assert [(g["key"], g["count"], g["net"]) for g in grouped["groups"]] == [
        ("2026-01", 3, "1197.20"),
        ("2026-02", 3, "-75.50"),
    ]


def test_categories_sorted_by_spending() -> None:
    out = FinanceIndex(TXS).run(FinanceQuery(action="categories"))
    assert [(c["category"], c["expenses"]) for c in out["categories"]] == [
        ("Housing", "800.00"),
        ("Groceries", "72.00"),
        ("Eating out", "6.30"),
        ("Income", "0"),
    ]


def test_category_filter_any_case_with_every_action() -> None:
    index = FinanceIndex(TXS)
    out = index.run(FinanceQuery(category="eating OUT"))
    assert out["filters"]["category"] == "eating OUT"
    assert [t["description"] for t in out["transactions"]] == ["Coffee Corner", "COFFEE corner"]
    searched = index.run(FinanceQuery(action="search", search="coffee", category="Groceries"))
    assert [t["description"] for t in searched["transactions"]] == ["Coffee beans supermarket"]
    summary = index.run(FinanceQuery(action="summary", category="Housing"))
    assert summary["count"] == 1
    categories = index.run(FinanceQuery(action="categories", category="groceries"))
    assert [row["category"] for row in categories["categories"]] == ["Groceries"]
    assert index.run(FinanceQuery(category="Travel"))["total"] == 0
    assert index.run(FinanceQuery(category="  "))["total"] == 6  # blank means no filter


def test_page_past_the_end_is_empty_not_an_error() -> None:
    out = FinanceIndex(TXS).run(FinanceQuery(page=99))
    assert out["transactions"] == []
    assert out["total"] == 6


@pytest.mark.parametrize(
    "bad",
    [
        {"action": "search"},
        {"action": "search", "search": "   "},
        {"page": 0},
        {"per_page": 1000},
        {"search": "x" * 201},
        {"category": "x" * 101},
        {"date_from": "2026-02-01", "date_to": "2026-01-01"},
        {"action": "delete"},
        {"sort": "id"},
        {"unknown": 1},
    ],
)
def test_invalid_queries_are_rejected(bad: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        FinanceQuery.model_validate(bad)


def test_empty_index() -> None:
    index = FinanceIndex([])
    assert index.first_date is None
    assert index.last_date is None
    out = index.run(FinanceQuery(action="summary"))
    assert out["count"] == 0
    assert out["totals"] == []
    assert out["period"] == {"from": None, "to": None}
