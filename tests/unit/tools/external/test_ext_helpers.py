"""Redaction, markdown rendering and Retry-After parsing."""

from __future__ import annotations

from datetime import datetime, timezone
from email.utils import format_datetime

import pytest

from tools.external._markdown import render_markdown
from tools.external._redact import Redactor, clip
from tools.resilience import parse_retry_after


def test_redactor_masks_text_and_nested_data() -> None:
    redact = Redactor(["s3cr3t-token", None, "", "abc"])  # too-short values are ignored
    assert redact.text("x s3cr3t-token y") == "x *** y"
    assert redact.data({"k": ["s3cr3t-token!", 1], "s3cr3t-token": "abc"}) == {
        "k": ["***!", 1],
        "***": "abc",
    }
    assert not Redactor([])


def test_redactor_masks_longest_first() -> None:
    assert Redactor(["abcd", "abcdefgh"]).text("abcdefgh") == "***"


def test_clip_marks_the_cut() -> None:
    assert clip("abc", 5) == "abc"
    assert clip("abcdef", 3) == "abc... [3 more characters cut]"


def test_markdown_table_for_rows() -> None:
    text = render_markdown([{"a": 1, "b": "x|y"}, {"a": 2, "c": None}])
    assert text == "| a | b | c |\n|---|---|---|\n| 1 | x\\|y |  |\n| 2 |  | null |"


def test_markdown_object_list_text_and_cap() -> None:
    assert render_markdown({"name": "Ada", "n": 3}) == "- **name**: Ada\n- **n**: 3"
    assert render_markdown([1, "two"]) == "- 1\n- two"
    assert render_markdown(None) == "_(empty)_"
    assert render_markdown("plain") == "plain"
    long = render_markdown("x" * 5000, max_chars=100)
    assert long.endswith("_(cut)_")
    assert len(long) < 120
    many = render_markdown([{"i": i} for i in range(30)])
    assert "10 more rows not shown" in many


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("3", 3.0),
        ("0.5", 0.5),
        ("-4", 0.0),
        ("9999", 30.0),
        ("soon", None),
        (None, None),
        ("nan", None),
    ],
)
def test_retry_after_seconds(header: str | None, expected: float | None) -> None:
    assert parse_retry_after(header, now=1000.0, cap=30.0) == expected


def test_retry_after_http_date() -> None:
    now = datetime(2026, 1, 1, 12, 0, 0, tzinfo=timezone.utc)
    header = format_datetime(datetime(2026, 1, 1, 12, 0, 7, tzinfo=timezone.utc), usegmt=True)
    assert parse_retry_after(header, now=now.timestamp(), cap=30.0) == 7.0
    past = format_datetime(datetime(2025, 1, 1, tzinfo=timezone.utc), usegmt=True)
    assert parse_retry_after(past, now=now.timestamp(), cap=30.0) == 0.0
