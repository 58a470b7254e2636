"""What every finance adapter shares: options, categorisation, merging and the tool view."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from datetime import datetime
from decimal import Decimal
from typing import Any

from pydantic import Field, field_validator
from pydantic_core import to_jsonable_python

from shared.adapters._finance_view import finance_payload, normalize_finance
from shared.adapters.base import AdapterOptions, BaseAdapter
from shared.adapters.records import Transaction

__all__ = ["FinanceAdapter", "FinanceOptions", "categorize", "transaction_id"]


class FinanceOptions(AdapterOptions):
    """Options every finance adapter accepts."""

    path: str = Field(description="Path of the statement file.")
    account: str | None = Field(None, description="Account name to show (default: from file).")
    currency: str = Field("EUR", min_length=3, max_length=3, description="ISO 4217 code.")
    category_rules: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Category -> keywords; a transaction whose text contains a keyword "
        "(case-insensitive) gets that category when the statement has none.",
    )
    default_category: str = Field("uncategorized", description="Category when nothing matches.")

    @field_validator("currency")
    @classmethod
    def _upper(cls, value: str) -> str:
        return value.upper()


def categorize(text: str, rules: Mapping[str, Sequence[str]], default: str) -> str:
    """The first category of ``rules`` with a keyword contained in ``text`` (case-insensitive)."""
    lowered = text.lower()
    for category, keywords in rules.items():
        if any(keyword.lower() in lowered for keyword in keywords if keyword):
            return category
    return default


def transaction_id(*parts: object) -> str:
    """A stable id for a transaction without one (a short hash of its fields)."""
    digest = hashlib.blake2b("\x1f".join(str(p) for p in parts).encode(), digest_size=8)
    return digest.hexdigest()


class FinanceAdapter(BaseAdapter[Transaction]):
    """Base of the finance adapters: records are :class:`Transaction` s sorted by date."""

    offline = True

    @classmethod
    def merge_records(cls, batches: Sequence[Sequence[Transaction]]) -> list[Transaction]:
        """Transactions of every statement, sorted by date; duplicates (same id) dropped."""
        seen: set[tuple[str, str]] = set()
        merged: list[Transaction] = []
        for batch in batches:
            for tx in batch:
                key = (tx.account, tx.id)
                if key not in seen:
                    seen.add(key)
                    merged.append(tx)
        merged.sort(key=lambda tx: tx.date)
        return merged

    @classmethod
    def context_payload(cls, records: Sequence[Transaction], *, now: datetime, options: Mapping[str, Any]) -> Any:
        """Totals over the last ``options['finance_days']`` days (default 30) and recent items."""
        return to_jsonable_python(finance_payload(records, now=now, options=options))

    @classmethod
    def normalize_for_tools(cls, data: Any) -> dict[str, Any]:
        """Income, spending, top categories, recent transactions and large-expense alerts."""
        return normalize_finance(data)


def signed(amount: Decimal, negative: bool) -> Decimal:
    """``-abs(amount)`` when ``negative`` else ``abs(amount)``."""
    return -abs(amount) if negative else abs(amount)
