"""CSV and OFX finance adapters: column mapping, Decimal amounts, categories, bad files."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path

import pytest

from shared.adapters import CsvFinanceAdapter, OfxFinanceAdapter, Transaction, parse_amount


def _csv(path: Path, clock: Callable[[], datetime], **options: object):  # type: ignore[no-untyped-def]
    return CsvFinanceAdapter(clock=clock).fetch({"path": str(path), **options})


def test_sample_csv_with_column_mapping(
    csv_columns: dict[str, str], examples: Path, clock: Callable[[], datetime]
) -> None:
    result = _csv(examples / "statement.csv", clock, columns=csv_columns, account="Checking")
    assert result.success, result.error
    assert (result.raw_count, result.transformed_count) == (25, 25)
    first = result.data[0]
    assert first == Transaction(
        id=first.id,
        date=date(2026, 10, 1),
        amount=Decimal("2450.00"),
        description="ACME CORP PAYROLL",
        category="Income",
        account="Checking",
        currency="EUR",
        source="csv",
        memo="Salary October",
    )
    assert all(isinstance(tx.amount, Decimal) for tx in result.data)
    coffees = [tx for tx in result.data if tx.date == date(2026, 11, 8)]
    assert len(coffees) == 2
    assert coffees[0].id != coffees[1].id
    assert sum(tx.amount for tx in result.data) == Decimal("1863.89")


def test_debit_credit_columns_semicolons_and_decimal_comma(tmp_path: Path, clock: Callable[[], datetime]) -> None:
    path = tmp_path / "bank.csv"
    path.write_text(
        "Data;Descrição;Débito;Crédito;Moeda\n"
        "05/11/2026;Supermercado Pingo Doce;1.234,56;;EUR\n"
        "06/11/2026;Transferência recebida;;99,90;eur\n"
        "\n",
        encoding="utf-8",
    )
    result = _csv(
        path,
        clock,
        delimiter=";",
        decimal_comma=True,
        date_format="%d/%m/%Y",
        columns={
            "date": "Data",
            "description": "Descrição",
            "amount": None,
            "debit": "Débito",
            "credit": "Crédito",
            "currency": "Moeda",
        },
        category_rules={"Groceries": ["pingo doce"]},
    )
    assert result.success, result.error
    assert [(tx.date, tx.amount, tx.category, tx.currency) for tx in result.data] == [
        (date(2026, 11, 5), Decimal("-1234.56"), "Groceries", "EUR"),
        (date(2026, 11, 6), Decimal("99.90"), "uncategorized", "EUR"),
    ]


@pytest.mark.parametrize(
    ("text", "decimal_comma", "expected"),
    [
        ("12.50", False, Decimal("12.50")),
        ("-1,234.56", False, Decimal("-1234.56")),
        ("(45.00)", False, Decimal("-45.00")),
        ("€ 3.20-", False, Decimal("-3.20")),
        ("+7", False, Decimal("7")),
        ("1.234,56", True, Decimal("1234.56")),
        ("-0,99", True, Decimal("-0.99")),
    ],
)
def test_parse_amount(text: str, decimal_comma: bool, expected: Decimal) -> None:
    assert parse_amount(text, decimal_comma=decimal_comma) == expected


@pytest.mark.parametrize("text", ["", "abc", "1.2.3", "NaN", "Infinity", "--"])
def test_parse_amount_rejects_non_numbers(text: str) -> None:
    with pytest.raises(ValueError, match="is not a number"):
        parse_amount(text)


def test_bad_amount_names_file_and_line(
    csv_columns: dict[str, str], tmp_path: Path, examples: Path, clock: Callable[[], datetime]
) -> None:
    text = (examples / "statement.csv").read_text().replace("-71.45", "seventy")
    path = tmp_path / "bad.csv"
    path.write_text(text)
    result = _csv(path, clock, columns=csv_columns)
    assert result.error == "bad.csv line 7: amount 'seventy' is not a number"


def test_bad_date_names_file_and_line(tmp_path: Path, clock: Callable[[], datetime]) -> None:
    path = tmp_path / "dates.csv"
    path.write_text("date,description,amount\n2026-11-01,a,1\n2026-13-45,b,2\n")
    result = _csv(path, clock)
    assert result.error == "dates.csv line 3: date '2026-13-45' does not match the format '%Y-%m-%d'"


def test_missing_column_is_reported_on_line_1(tmp_path: Path, clock: Callable[[], datetime]) -> None:
    path = tmp_path / "cols.csv"
    path.write_text("when,what,how much\n2026-11-01,a,1\n")
    result = _csv(path, clock)
    assert result.error == (
        "cols.csv line 1: missing column(s) 'date', 'description', 'amount'; the header has 'when', 'what', 'how much'"
    )


def test_malformed_quoting_is_reported(tmp_path: Path, clock: Callable[[], datetime]) -> None:
    path = tmp_path / "quotes.csv"
    path.write_text('date,description,amount\n2026-11-01,"unterminated,1\n')
    result = _csv(path, clock)
    assert not result.success
    assert result.error is not None
    assert result.error.startswith("quotes.csv line ")
    assert "malformed CSV" in result.error


def test_oversized_cell_is_refused(tmp_path: Path, clock: Callable[[], datetime]) -> None:
    path = tmp_path / "big.csv"
    path.write_text("date,description,amount\n2026-11-01," + "x" * 20_000 + ",1\n")
    result = _csv(path, clock)
    assert result.error == "big.csv line 2: column 'description' is longer than 10000 characters"


def test_sample_ofx(examples: Path, clock: Callable[[], datetime]) -> None:
    result = OfxFinanceAdapter(clock=clock).fetch(
        {"path": str(examples / "statement.ofx"), "category_rules": {"Housing": ["rent"]}}
    )
    assert result.success, result.error
    assert result.raw_count == 6
    assert result.transformed_count == 6
    assert result.metadata["balances"][0]["balance"] == "3120.96"
    rent = next(tx for tx in result.data if tx.id == "202611030001")
    assert rent == Transaction(
        id="202611030001",
        date=date(2026, 11, 3),
        amount=Decimal("-850.00"),
        description="RENT LISBOA HOMES",
        category="Housing",
        account="0011223344",
        currency="EUR",
        source="ofx",
        memo="Rent November",
    )


def test_ofx_bad_amount_names_file_and_line(tmp_path: Path, examples: Path, clock: Callable[[], datetime]) -> None:
    text = (examples / "statement.ofx").read_text().replace("<TRNAMT>-62.35", "<TRNAMT>lots")
    path = tmp_path / "bad.ofx"
    path.write_text(text)
    result = OfxFinanceAdapter(clock=clock).fetch({"path": str(path)})
    line = text.splitlines().index("<TRNAMT>lots") + 1
    assert result.error == f"bad.ofx line {line}: transaction #3: amount 'lots' is not a number"


def test_ofx_not_ofx(tmp_path: Path, clock: Callable[[], datetime]) -> None:
    path = tmp_path / "hello.ofx"
    path.write_text("hello world\n")
    result = OfxFinanceAdapter(clock=clock).fetch({"path": str(path)})
    assert result.error == "hello.ofx line 1: not an OFX file: the OFX header is missing or malformed"


def test_ofx_without_statement(tmp_path: Path, examples: Path, clock: Callable[[], datetime]) -> None:
    text = (examples / "statement.ofx").read_text()
    head, _ = text.split("<OFX>", 1)
    path = tmp_path / "empty.ofx"
    path.write_text(head + "<OFX>\n<SIGNONMSGSRSV1>\n</SIGNONMSGSRSV1>\n</OFX>\n")
    result = OfxFinanceAdapter(clock=clock).fetch({"path": str(path)})
    assert result.error == "empty.ofx: the OFX file holds no bank or credit-card statement"


def test_merge_sorts_and_drops_duplicates(examples: Path, clock: Callable[[], datetime]) -> None:
    ofx = OfxFinanceAdapter(clock=clock).fetch({"path": str(examples / "statement.ofx")}).data
    merged = OfxFinanceAdapter.merge_records([ofx, ofx[:2]])
    assert len(merged) == len(ofx)
    assert [tx.date for tx in merged] == sorted(tx.date for tx in ofx)
