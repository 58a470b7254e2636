"""What metrics keep of an error message: secrets masked, one line, at most 200 characters."""

from __future__ import annotations

import pytest

from tools.telemetry import redact_data, summarize_error


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("No account named 'savings'", "No account named 'savings'"),
        ("HTTP 401 from https://alice:s3cr3t-pw@example.com/v1", "HTTP 401 from https://***@example.com/v1"),
        ("sent Bearer eyJhbGciOi.payload.sig", "sent Bearer ***"),
        ("api_key=abc123def456 rejected", "api_key=*** rejected"),
        ('body {"password": "hunter2", "user": "bob"}', 'body {"password": "***", "user": "bob"}'),
        ("X-Api-Key: k-12345678", "X-Api-Key: ***"),
        ("OPENAI_API_KEY=sk-proj-abcdefghijklmnop1234", "OPENAI_API_KEY=***"),
        ("token ghp_abcdefghijklmnopqrstuvwxyz0123", "token ***"),
        ("aws AKIAIOSFODNN7EXAMPLE denied", "aws *** denied"),
        ("blob " + "A1b2" * 12 + " end", "blob *** end"),
        ("line one\n\n   line two\ttabbed", "line one line two tabbed"),
    ],
    ids=[
        "plain",
        "url-credentials",
        "bearer",
        "key-value",
        "json-password",
        "header",
        "env-style",
        "github-token",
        "aws-key",
        "opaque-blob",
        "whitespace",
    ],
)
def test_summaries(message: str, expected: str) -> None:
    assert summarize_error(message) == expected


def test_long_messages_are_cut_to_200_characters_with_a_mark() -> None:
    summary = summarize_error("word " * 1000)
    assert len(summary) == 200 and summary.endswith("…")


def test_hostile_sizes_are_bounded() -> None:
    summary = summarize_error("a " * 5_000_000 + "api_key=zzzzzzzz")
    assert len(summary) == 200


def test_extra_redaction_runs_first() -> None:
    assert summarize_error("the PIN is 4242", redact=lambda text: text.replace("4242", "***")) == "the PIN is ***"


def test_non_string_messages_are_converted() -> None:
    assert summarize_error(ValueError("bad")) == "bad"
    assert summarize_error(None) == "None"


def test_redact_data_masks_known_secrets_and_secret_shapes_in_every_string() -> None:
    value = {
        "note": "the key is hunter2-long-enough, keep it",
        "headers": ["Authorization: Bearer abcdef123456", "Accept: */*"],
        "nested": {"dsn": "postgres://bob:pw@db/x", "count": 3, "ok": True, "none": None},
        "pair": ("api_key=abc123def456", "short"),
    }
    assert redact_data(value, ["hunter2-long-enough", "abc"]) == {
        "note": "the key is ***, keep it",
        "headers": ["Authorization: *** ***", "Accept: */*"],
        "nested": {"dsn": "postgres://***@db/x", "count": 3, "ok": True, "none": None},
        "pair": ["api_key=***", "short"],
    }
    assert value["note"] == "the key is hunter2-long-enough, keep it"  # a copy; the input is untouched


def test_redact_data_keeps_keys_and_ignores_too_short_secrets() -> None:
    assert redact_data({"note": "abc"}, ["abc"]) == {"note": "abc"}
    assert redact_data({"password": "abc"}) == {"password": "***"}  # a secret-sounding name: whatever it holds
    assert redact_data("plain words", []) == "plain words"
