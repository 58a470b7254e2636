"""Bank and credit-card statements in OFX (v1 SGML and v2 XML), parsed with ``ofxtools``.

Each ``<STMTTRN>`` is converted on its own so that a broken transaction is reported with
its line. ``ofxtools`` belongs to the ``context`` extra and is imported on first use.
"""

from __future__ import annotations

import io
import warnings
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any
from xml.etree.ElementTree import Element

from shared.adapters._sources import decode_text, file_token, find_line, read_file_bytes
from shared.adapters.base import AdapterError
from shared.adapters.finance_base import FinanceAdapter, FinanceOptions, categorize
from shared.adapters.records import Transaction
from shared.adapters.registry import register_adapter

__all__ = ["OfxFinanceAdapter", "OfxOptions"]

_STATEMENTS = ("STMTRS", "CCSTMTRS")


class OfxOptions(FinanceOptions):
    """Options of :class:`OfxFinanceAdapter`; ``currency`` is used when the file has none."""


@dataclass(frozen=True, slots=True)
class _OfxRaw:
    source: str
    text: str
    options: OfxOptions
    statements: list[Element]

    def __len__(self) -> int:
        return sum(len(stmt.findall(".//STMTTRN")) for stmt in self.statements)


@register_adapter(category="finance", platform="ofx")
class OfxFinanceAdapter(FinanceAdapter):
    """Transactions from an OFX statement file."""

    description = "bank or credit-card statement in OFX (v1 SGML or v2 XML)"
    Options = OfxOptions

    def fetch_raw(self, config: Mapping[str, Any]) -> _OfxRaw:
        """Parse the OFX header and body; malformed files raise naming the file."""
        from ofxtools.header import OFXHeaderError
        from ofxtools.Parser import OFXTree, ParseError

        options = self.parse_options(config, OfxOptions)
        source = Path(options.path).name
        data = read_file_bytes(options.path)
        text = decode_text(data, source=source, encoding="latin-1")
        tree = OFXTree()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                root = tree.parse(io.BytesIO(data))
        except OFXHeaderError:
            raise AdapterError(
                "not an OFX file: the OFX header is missing or malformed", source=source, line=1
            ) from None
        except (ParseError, ValueError) as exc:
            raise AdapterError(f"malformed OFX: {str(exc).splitlines()[0][:200]}", source=source) from None
        statements = [el for tag in _STATEMENTS for el in root.iter(tag)]
        if not statements:
            raise AdapterError("the OFX file holds no bank or credit-card statement", source=source)
        return _OfxRaw(source=source, text=text, options=options, statements=statements)

    def transform(self, raw: _OfxRaw) -> list[Transaction]:
        """Convert every STMTTRN; a broken one is reported with its line."""
        from ofxtools.models.base import Aggregate

        out: list[Transaction] = []
        for stmt in raw.statements:
            currency = (stmt.findtext("CURDEF") or raw.options.currency).upper()
            account = raw.options.account or stmt.findtext(".//ACCTID") or raw.source
            for index, element in enumerate(stmt.iter("STMTTRN")):
                _check_amount(element, index, raw)
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        model: Any = Aggregate.from_etree(element)
                except Exception as exc:
                    raise AdapterError(
                        f"transaction #{index + 1} is invalid ({_reason(exc)})",
                        source=raw.source,
                        line=_line(raw.text, element),
                    ) from None
                out.append(self._transaction(model, currency, account, raw.options))
        out.sort(key=lambda tx: tx.date)
        return out

    def _transaction(self, model: Any, currency: str, account: str, options: OfxOptions) -> Transaction:
        name = str(model.name or getattr(model.payee, "name", None) or model.memo or model.trntype)
        memo = str(model.memo) if model.memo else None
        return Transaction(
            id=str(model.fitid),
            date=model.dtposted.date(),
            amount=model.trnamt,
            description=name,
            category=categorize(f"{name} {memo or ''}", options.category_rules, options.default_category),
            account=account,
            currency=str(model.currency.cursym).upper() if getattr(model, "currency", None) else currency,
            source=self.platform,
            memo=memo,
        )

    def cache_token(self, config: Mapping[str, Any]) -> Hashable | None:
        """The file's mtime and size."""
        path = config.get("path")
        return file_token(path) if isinstance(path, str) else None

    def result_metadata(self, raw: _OfxRaw) -> dict[str, Any]:
        """The file name and the ledger balance of each statement, when present."""
        balances = [
            {
                "account": stmt.findtext(".//ACCTID"),
                "balance": stmt.findtext("LEDGERBAL/BALAMT"),
                "as_of": stmt.findtext("LEDGERBAL/DTASOF"),
            }
            for stmt in raw.statements
        ]
        return {"source": raw.source, "balances": balances}


def _check_amount(element: Element, index: int, raw: _OfxRaw) -> None:
    amount = (element.findtext("TRNAMT") or "").strip()
    try:
        valid = Decimal(amount).is_finite()
    except InvalidOperation:
        valid = False
    if not valid:
        raise AdapterError(
            f"transaction #{index + 1}: amount {amount[:40]!r} is not a number",
            source=raw.source,
            line=find_line(raw.text, f"<TRNAMT>{amount}") if amount else _line(raw.text, element),
        )


def _reason(exc: Exception) -> str:
    text = str(exc).splitlines()[0][:200] if str(exc) else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _line(text: str, element: Element) -> int | None:
    fitid = element.findtext("FITID")
    if fitid:
        return find_line(text, f"<FITID>{fitid}")
    return None
