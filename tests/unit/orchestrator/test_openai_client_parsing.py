"""Pure parts of the OpenAI client: URL handling and Retry-After parsing (no network)."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from orchestrator import OpenAIChatModel
from tools.resilience import parse_retry_after

NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=timezone.utc)


@pytest.mark.parametrize(
    ("base_url", "endpoint"),
    [
        ("http://127.0.0.1:8080", "http://127.0.0.1:8080/v1/chat/completions"),
        ("http://127.0.0.1:8080/v1/", "http://127.0.0.1:8080/v1/chat/completions"),
        ("https://api.openai.com/v1", "https://api.openai.com/v1/chat/completions"),
        ("http://h:1/v1/chat/completions", "http://h:1/v1/chat/completions"),
        ("http://h:1/api/v1?x=1#f", "http://h:1/api/v1/chat/completions"),
    ],
)
def test_endpoint_from_base_url(base_url: str, endpoint: str) -> None:
    assert OpenAIChatModel(base_url, "m").endpoint == endpoint


@pytest.mark.parametrize("base_url", ["ftp://h/v1", "localhost:8080", "", "http://"])
def test_bad_base_url_is_rejected_with_the_fix(base_url: str) -> None:
    with pytest.raises(ValueError, match="http"):
        OpenAIChatModel(base_url, "m")


def test_credentials_in_base_url_are_rejected_without_echoing_them() -> None:
    with pytest.raises(ValueError) as info:
        OpenAIChatModel("http://user:hunter2@h/v1", "m")
    assert "hunter2" not in str(info.value)


def test_empty_model_and_bad_limits_are_rejected() -> None:
    with pytest.raises(ValueError, match="model"):
        OpenAIChatModel("http://h/v1", " ")
    with pytest.raises(ValueError, match="timeouts"):
        OpenAIChatModel("http://h/v1", "m", timeout=0)


def test_strict_tools_default_only_for_openai() -> None:
    assert OpenAIChatModel("https://api.openai.com/v1", "m").supports_strict_tools
    assert not OpenAIChatModel("http://127.0.0.1:1/v1", "m").supports_strict_tools
    assert OpenAIChatModel("http://127.0.0.1:1/v1", "m", strict_tools=True).supports_strict_tools


@pytest.mark.parametrize(
    ("header", "seconds"),
    [
        ("7", 7.0),
        (" 1.5 ", 1.5),
        ("-3", 0.0),
        ("Thu, 01 Jan 2026 12:00:30 GMT", 30.0),
        ("Thu, 01 Jan 2026 11:00:00 GMT", 0.0),
        ("soon", None),
        ("", None),
        (None, None),
    ],
)
def test_parse_retry_after(header: str | None, seconds: float | None) -> None:
    assert parse_retry_after(header, now=NOW.timestamp()) == seconds
