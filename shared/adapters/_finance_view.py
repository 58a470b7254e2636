"""The finance category's context payload and its tool-facing summary (pure functions)."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from decimal import Decimal, InvalidOperation
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from shared.adapters.finance_query import summarize
from shared.adapters.records import Transaction

RECENT_COUNT = 10
LARGE_EXPENSE_DAYS = 7


def _bounded(value: Any, default: Decimal, low: Decimal, high: Decimal) -> Decimal:
    try:
        number = Decimal(str(value)) if value is not None else default
    except InvalidOperation:
        return default
    if not number.is_finite():
        return default
    return min(max(number, low), high)


def finance_payload(records: Sequence[Transaction], *, now: datetime, options: Mapping[str, Any]) -> dict[str, Any]:
    """Totals and top categories over the last ``finance_days`` days, recent transactions,
    and expenses of at least ``large_expense`` in the last week. ``records`` sorted by date."""
    try:
        zone = ZoneInfo(str(options.get("timezone") or "UTC"))
    except (ZoneInfoNotFoundError, ValueError):
        zone = ZoneInfo("UTC")
    days = int(_bounded(options.get("finance_days"), Decimal(30), Decimal(1), Decimal(366)))
    threshold = _bounded(options.get("large_expense"), Decimal(500), Decimal(0), Decimal(10**12))
    today = now.astimezone(zone).date()
    start = today - timedelta(days=days - 1)
    window = records[bisect_left(records, start, key=lambda tx: tx.date) :]
    window = [tx for tx in window if tx.date <= today]
    summary = summarize(window)
    week_start = today - timedelta(days=LARGE_EXPENSE_DAYS - 1)
    large = [tx for tx in window if tx.date >= week_start and -tx.amount >= threshold > 0]
    large.sort(key=lambda tx: tx.amount)
    return {
        "as_of": today,
        "period": {"from": start, "to": today, "days": days},
        "totals": summary["totals"],
        "top_expense_categories": summary["top_expense_categories"],
        "recent": list(reversed(window[-RECENT_COUNT:])),
        "large_expenses": large[:5],
        "large_expense_threshold": threshold,
        "transaction_count": len(records),
        "first_date": records[0].date if records else None,
        "last_date": records[-1].date if records else None,
    }


def _tx_view(raw: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "date": str(raw["date"]),
        "description": str(raw["description"]),
        "amount": str(raw["amount"]),
        "currency": str(raw.get("currency") or ""),
        "category": str(raw.get("category") or ""),
    }


def normalize_finance(data: Any) -> dict[str, Any]:
    """Spending summary, top categories, recent transactions and large-expense alerts.

    Raises:
        TypeError, KeyError, ValueError: ``data`` is not a finance payload.
    """
    if not isinstance(data, Mapping):
        raise TypeError("finance payload must be an object")
    period = data["period"]
    alerts = [
        f"Large expense: {tx['amount'].lstrip('-')} {tx['currency']} to {tx['description']} on {tx['date']}"
        for tx in (_tx_view(raw) for raw in data.get("large_expenses") or [])
    ]
    return {
        "period": f"last {period['days']} days ({period['from']} to {period['to']})",
        "totals": [{key: str(row[key]) if key != "count" else int(row[key]) for key in row} for row in data["totals"]],
        "top_expense_categories": [
            {"category": str(row["key"]), "spent": str(row["expenses"]), "count": int(row["count"])}
            for row in data["top_expense_categories"]
        ],
        "recent_transactions": [_tx_view(raw) for raw in data["recent"]],
        "history": {
            "transactions": int(data.get("transaction_count") or 0),
            "from": data.get("first_date"),
            "to": data.get("last_date"),
        },
        "alerts": alerts,
    }
