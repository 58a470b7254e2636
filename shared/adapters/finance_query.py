"""Queries over transactions: list, search, summary and categories, with paging and sorting.

:class:`FinanceIndex` is built once per set of transactions (the context service caches
it) and answers :class:`FinanceQuery` s in a few milliseconds for tens of thousands of
transactions: dates are bisected, search text is lowercased once, only the requested page
is serialised.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from datetime import date
from decimal import Decimal
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic_core import to_jsonable_python

from shared.adapters.records import Transaction

__all__ = ["FinanceAction", "FinanceIndex", "FinanceQuery", "summarize", "totals_by_currency"]

FinanceAction = Literal["transactions", "summary", "categories", "search"]
SortField = Literal["date", "amount", "description", "category"]
GroupBy = Literal["category", "month", "account", "description"]

_ZERO = Decimal(0)


class FinanceQuery(BaseModel):
    """One finance query; field limits bound the work any query can cause."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    action: FinanceAction = "transactions"
    search: str | None = Field(None, max_length=200)
    category: str | None = Field(None, max_length=100, description="Only transactions in this category (any case).")
    sort: SortField = "date"
    sort_dir: Literal["asc", "desc"] = "desc"
    page: int = Field(1, ge=1, le=1_000_000)
    per_page: int = Field(20, ge=1, le=200)
    group_by: GroupBy | None = None
    date_from: date | None = None
    date_to: date | None = None

    @model_validator(mode="after")
    def _consistent(self) -> FinanceQuery:
        if self.action == "search" and not (self.search and self.search.strip()):
            raise ValueError("action 'search' needs a non-empty 'search' text")
        if self.date_from and self.date_to and self.date_from > self.date_to:
            raise ValueError("date_from must not be after date_to")
        return self


def totals_by_currency(transactions: Iterable[Transaction]) -> list[dict[str, Any]]:
    """Income, expenses (positive number), net and count per currency."""
    income: dict[str, Decimal] = defaultdict(Decimal)
    spent: dict[str, Decimal] = defaultdict(Decimal)
    count: dict[str, int] = defaultdict(int)
    for tx in transactions:
        count[tx.currency] += 1
        if tx.amount >= _ZERO:
            income[tx.currency] += tx.amount
        else:
            spent[tx.currency] -= tx.amount
    return [
        {
            "currency": currency,
            "income": income[currency],
            "expenses": spent[currency],
            "net": income[currency] - spent[currency],
            "count": count[currency],
        }
        for currency in sorted(count)
    ]


def _group_key(group_by: GroupBy) -> Callable[[Transaction], str]:
    if group_by == "month":
        return lambda tx: tx.date.strftime("%Y-%m")
    if group_by == "account":
        return lambda tx: tx.account
    if group_by == "description":
        return lambda tx: tx.description
    return lambda tx: tx.category


_SORT_KEYS: dict[str, Callable[[Transaction], Any]] = {
    "amount": lambda tx: tx.amount,
    "description": lambda tx: tx.description.lower(),
    "category": lambda tx: tx.category.lower(),
}


class FinanceIndex:
    """Transactions sorted by date, with search text prepared once.

    Args:
        transactions: Any order; the index keeps its own date-sorted copy.
    """

    def __init__(self, transactions: Sequence[Transaction]) -> None:
        self._items = sorted(transactions, key=lambda tx: tx.date)
        self._ordinals = [tx.date.toordinal() for tx in self._items]
        self._text = [
            f"{tx.description}\x1f{tx.memo or ''}\x1f{tx.category}\x1f{tx.account}".lower().replace("\n", " ")
            for tx in self._items
        ]
        # One lowercase blob, one line per transaction: a search scans it at C speed with
        # str.find and maps hits back to rows, instead of testing every row in Python.
        self._blob = "\n".join(self._text)
        self._starts: list[int] = []
        offset = 0
        for text in self._text:
            self._starts.append(offset)
            offset += len(text) + 1

    def __len__(self) -> int:
        return len(self._items)

    @property
    def first_date(self) -> date | None:
        """Date of the oldest transaction."""
        return self._items[0].date if self._items else None

    @property
    def last_date(self) -> date | None:
        """Date of the newest transaction."""
        return self._items[-1].date if self._items else None

    def _range(self, date_from: date | None, date_to: date | None) -> range:
        low = bisect_left(self._ordinals, date_from.toordinal()) if date_from else 0
        high = bisect_right(self._ordinals, date_to.toordinal()) if date_to else len(self._items)
        return range(low, high)

    def select(self, query: FinanceQuery) -> list[Transaction]:
        """Transactions in the date range that contain every word of ``query.search`` and,
        when ``query.category`` is given, belong to that category (compared without case)."""
        selected = self._select_text(query)
        wanted = (query.category or "").strip().casefold()
        if not wanted:
            return selected
        return [tx for tx in selected if tx.category.casefold() == wanted]

    def _select_text(self, query: FinanceQuery) -> list[Transaction]:
        positions = self._range(query.date_from, query.date_to)
        terms = sorted(set((query.search or "").lower().split()), key=len, reverse=True)
        if not terms:
            return self._items[positions.start : positions.stop]
        text, items = self._text, self._items
        rows = self._rows_containing(terms[0], positions)
        rest = terms[1:]
        if not rest:
            return [items[i] for i in rows]
        return [items[i] for i in rows if all(term in text[i] for term in rest)]

    def _rows_containing(self, term: str, positions: range) -> list[int]:
        """Rows (ascending) within ``positions`` whose text contains ``term``."""
        if not positions:
            return []
        blob, starts = self._blob, self._starts
        find = blob.find
        end = starts[positions.stop] if positions.stop < len(starts) else len(blob)
        rows: list[int] = []
        pos = find(term, starts[positions.start], end)
        while pos != -1:
            row = bisect_right(starts, pos) - 1
            rows.append(row)
            if row + 1 >= len(starts):
                break
            pos = find(term, starts[row + 1], end)
        return rows

    def run(self, query: FinanceQuery) -> dict[str, Any]:
        """Answer ``query`` as a JSON-compatible dict (amounts as strings)."""
        selected = self.select(query)
        filters = {
            "search": query.search,
            "category": query.category,
            "date_from": query.date_from,
            "date_to": query.date_to,
        }
        if query.action == "summary":
            body = self._summary(selected, query.group_by)
        elif query.action == "categories":
            body = self._categories(selected)
        else:
            body = self._page(selected, query)
        out: dict[str, Any] = to_jsonable_python({"action": query.action, "filters": filters, **body})
        return out

    def _page(self, selected: list[Transaction], query: FinanceQuery) -> dict[str, Any]:
        reverse = query.sort_dir == "desc"
        if query.sort == "date":
            ordered: Sequence[Transaction] = selected[::-1] if reverse else selected
        else:
            ordered = sorted(selected, key=_SORT_KEYS[query.sort], reverse=reverse)
        total = len(ordered)
        start = (query.page - 1) * query.per_page
        page = ordered[start : start + query.per_page]
        return {
            "total": total,
            "page": query.page,
            "per_page": query.per_page,
            "pages": math.ceil(total / query.per_page) if total else 0,
            "sort": query.sort,
            "sort_dir": query.sort_dir,
            "transactions": list(page),
        }

    def _summary(self, selected: list[Transaction], group_by: GroupBy | None) -> dict[str, Any]:
        return summarize(selected, group_by)

    def _categories(self, selected: list[Transaction]) -> dict[str, Any]:
        groups: dict[str, list[Transaction]] = defaultdict(list)
        for tx in selected:
            groups[tx.category].append(tx)
        rows = [{"category": name, **_flat_totals(items)} for name, items in groups.items()]
        rows.sort(key=lambda row: (-row["expenses"], row["category"]))
        return {"categories": rows}


def summarize(selected: Sequence[Transaction], group_by: GroupBy | None = None) -> dict[str, Any]:
    """Totals per currency over date-sorted ``selected``, with top expense categories, or
    with groups by ``group_by`` when given. Values are Decimals (not yet JSON)."""
    body: dict[str, Any] = {
        "period": {
            "from": selected[0].date if selected else None,
            "to": selected[-1].date if selected else None,
        },
        "count": len(selected),
        "totals": totals_by_currency(selected),
    }
    key = _group_key(group_by or "category")
    groups: dict[str, list[Transaction]] = defaultdict(list)
    for tx in selected:
        groups[key(tx)].append(tx)
    rows = [{"key": name, **_flat_totals(items)} for name, items in groups.items()]
    if group_by is None:
        rows = [row for row in rows if row["expenses"] > _ZERO]
        rows.sort(key=lambda row: row["expenses"], reverse=True)
        body["top_expense_categories"] = rows[:5]
    else:
        rows.sort(key=lambda row: row["key"])
        body["group_by"] = group_by
        body["groups"] = rows[:500]
    return body


def _flat_totals(items: list[Transaction]) -> dict[str, Any]:
    income = sum((tx.amount for tx in items if tx.amount >= _ZERO), _ZERO)
    spent = -sum((tx.amount for tx in items if tx.amount < _ZERO), _ZERO)
    return {"count": len(items), "income": income, "expenses": spent, "net": income - spent}
