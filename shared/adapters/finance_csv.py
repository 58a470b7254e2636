"""Bank statements exported as CSV, with a configurable column mapping.

Amounts are parsed into ``Decimal`` (``1,234.56``, ``1.234,56`` with ``decimal_comma``,
``(12.00)`` and ``12.00-`` as negatives, currency symbols ignored), either from one signed
``amount`` column or from separate ``debit``/``credit`` columns.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from shared.adapters._sources import decode_text, file_token, read_file_bytes
from shared.adapters.base import AdapterError
from shared.adapters.finance_base import FinanceAdapter, FinanceOptions, categorize, transaction_id
from shared.adapters.records import Transaction
from shared.adapters.registry import register_adapter

__all__ = ["CsvColumns", "CsvFinanceAdapter", "CsvOptions", "parse_amount"]

_NOISE = re.compile(r"[^\d.,()+\-]")
MAX_FIELD_CHARS = 10_000


class CsvColumns(BaseModel):
    """Header names of the statement's columns (``None``: the statement has no such column)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    date: str = "date"
    description: str = "description"
    amount: str | None = "amount"
    debit: str | None = None
    credit: str | None = None
    category: str | None = None
    account: str | None = None
    currency: str | None = None
    memo: str | None = None
    id: str | None = None

    @model_validator(mode="after")
    def _amount_source(self) -> CsvColumns:
        if self.amount is None and (self.debit is None or self.credit is None):
            raise ValueError("map either 'amount' or both 'debit' and 'credit'")
        return self


class CsvOptions(FinanceOptions):
    """Options of :class:`CsvFinanceAdapter`."""

    columns: CsvColumns = Field(default_factory=CsvColumns)
    delimiter: str = Field(",", min_length=1, max_length=1)
    encoding: str = "utf-8"
    date_format: str = Field("%Y-%m-%d", description="strptime format, or 'iso'.")
    decimal_comma: bool = Field(False, description="Amounts look like 1.234,56.")


@dataclass(frozen=True, slots=True)
class _CsvRaw:
    source: str
    options: CsvOptions
    rows: list[tuple[int, dict[str, str]]]

    def __len__(self) -> int:
        return len(self.rows)


@dataclass(slots=True)
class _RowState:
    dates: dict[str, date] = field(default_factory=dict)
    seen: dict[str, int] = field(default_factory=dict)


def parse_amount(text: str, *, decimal_comma: bool = False) -> Decimal:
    """Parse a statement amount into a Decimal.

    Raises:
        ValueError: ``text`` holds no number.
    """
    cleaned = _NOISE.sub("", text.strip())
    negative = cleaned.startswith("-") or cleaned.endswith("-") or (cleaned.startswith("(") and cleaned.endswith(")"))
    cleaned = cleaned.strip("()+-")
    cleaned = cleaned.replace(".", "").replace(",", ".") if decimal_comma else cleaned.replace(",", "")
    try:
        value = Decimal(cleaned)
    except InvalidOperation:
        raise ValueError(f"amount {text.strip()!r} is not a number") from None
    if not value.is_finite() or cleaned == "":
        raise ValueError(f"amount {text.strip()!r} is not a number")
    return -value if negative else value


def _parse_date(text: str, fmt: str) -> date:
    text = text.strip()
    try:
        if fmt == "iso":
            return date.fromisoformat(text[:10])
        return datetime.strptime(text, fmt).date()
    except ValueError:
        raise ValueError(f"date {text!r} does not match the format {fmt!r}") from None


@register_adapter(category="finance", platform="csv")
class CsvFinanceAdapter(FinanceAdapter):
    """Transactions from a CSV bank statement."""

    description = "bank statement as CSV with a configurable column mapping"
    Options = CsvOptions

    def fetch_raw(self, config: Mapping[str, Any]) -> _CsvRaw:
        """Read the CSV; a missing header column is an error on line 1."""
        options = self.parse_options(config, CsvOptions)
        source = Path(options.path).name
        text = decode_text(read_file_bytes(options.path), source=source, encoding=options.encoding)
        reader = csv.DictReader(text.splitlines(), delimiter=options.delimiter, strict=True)
        try:
            header = reader.fieldnames or []
            wanted = [name for name in options.columns.model_dump().values() if name]
            missing = [name for name in wanted if name not in header]
            if missing:
                raise AdapterError(
                    f"missing column(s) {', '.join(map(repr, missing))}; the header has "
                    f"{', '.join(map(repr, header)) or 'nothing'}",
                    source=source,
                    line=1,
                )
            rows = [(reader.line_num, row) for row in reader]
        except csv.Error as exc:
            raise AdapterError(f"malformed CSV: {exc}", source=source, line=reader.line_num) from None
        return _CsvRaw(source=source, options=options, rows=rows)

    def transform(self, raw: _CsvRaw) -> list[Transaction]:
        """One transaction per row; a bad date or amount names its line."""
        options = raw.options
        out: list[Transaction] = []
        state = _RowState()
        for line, row in raw.rows:
            if not any((value or "").strip() for value in row.values() if isinstance(value, str)):
                continue  # blank line
            try:
                out.append(self._row(row, options, raw.source, state))
            except ValueError as exc:
                raise AdapterError(str(exc), source=raw.source, line=line) from None
        out.sort(key=lambda tx: tx.date)
        return out

    def _row(self, row: dict[str, Any], options: CsvOptions, source: str, state: _RowState) -> Transaction:
        cols = options.columns

        def cell(name: str | None) -> str:
            value = row.get(name) if name else None
            if value is None or not isinstance(value, str):
                return ""
            if len(value) > MAX_FIELD_CHARS:
                raise ValueError(f"column {name!r} is longer than {MAX_FIELD_CHARS} characters")
            return value.strip()

        date_text = cell(cols.date)
        when = state.dates.get(date_text)
        if when is None:  # statements repeat dates: parse each distinct one once
            when = state.dates[date_text] = _parse_date(date_text, options.date_format)
        if cols.amount is not None:
            amount = parse_amount(cell(cols.amount), decimal_comma=options.decimal_comma)
        else:
            debit, credit = cell(cols.debit), cell(cols.credit)
            if not debit and not credit:
                raise ValueError(f"neither {cols.debit!r} nor {cols.credit!r} has an amount")
            amount = Decimal(0)
            if credit:
                amount += abs(parse_amount(credit, decimal_comma=options.decimal_comma))
            if debit:
                amount -= abs(parse_amount(debit, decimal_comma=options.decimal_comma))
        description = cell(cols.description)
        memo = cell(cols.memo) or None
        account = cell(cols.account) or options.account or source
        category = cell(cols.category) or categorize(
            f"{description} {memo or ''}", options.category_rules, options.default_category
        )
        tx_id = cell(cols.id)
        if not tx_id:
            # Identical rows (two coffees on one day) are distinct transactions.
            base = transaction_id(account, when, amount, description, memo)
            state.seen[base] = state.seen.get(base, 0) + 1
            tx_id = f"{base}-{state.seen[base]}"
        return Transaction(
            id=tx_id,
            date=when,
            amount=amount,
            description=description,
            category=category,
            account=account,
            currency=(cell(cols.currency) or options.currency).upper(),
            source=self.platform,
            memo=memo,
        )

    def cache_token(self, config: Mapping[str, Any]) -> Hashable | None:
        """The file's mtime and size."""
        path = config.get("path")
        return file_token(path) if isinstance(path, str) else None

    def result_metadata(self, raw: _CsvRaw) -> dict[str, Any]:
        """The file name."""
        return {"source": raw.source}
