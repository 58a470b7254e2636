"""Which environment variables look secret, and masking them."""

from __future__ import annotations

import pytest

from tools.external._redact import Redactor, looks_secret, secret_values


@pytest.mark.parametrize(
    ("name", "value", "secret"),
    [
        ("OPENAI_API_KEY", "sk-proj-0123456789", True),
        ("ANTHROPIC_API_KEY", "sk-ant-0123456789", True),
        ("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG", True),
        ("AWS_SESSION_TOKEN", "FwoGZXIvYXdzEJr", True),
        ("GITHUB_TOKEN", "ghp_0123456789", True),
        ("GH_PAT", "github_pat_0123", True),
        ("DB_PASSWORD", "hunter2hunter2", True),
        ("MYSQL_PWD", "hunter2hunter2", True),
        ("SENTRY_DSN", "https://abc@o1.ingest.sentry.io/1", True),
        ("HF_APIKEY", "hf_0123456789", True),
        ("slack_bot_token", "xoxb-0123456789", True),  # names are case-insensitive
        ("DATABASE_URL", "postgres://app:s3cret@db:5432/app", True),  # a URL with a password
        ("HOME", "/home/someone", False),
        ("PWD", "/home/someone/project", False),  # the working directory
        ("OLDPWD", "/home/someone", False),
        ("GIT_AUTHOR_NAME", "Ada Lovelace", False),
        ("KEYBOARD_LAYOUT", "us-international", False),
        ("HOMEPAGE_URL", "https://example.com/a:b@c", False),  # no scheme-user-password form
        ("API_TOKEN", "short", False),  # too short to mask safely
    ],
)
def test_looks_secret(name: str, value: str, secret: bool) -> None:
    assert looks_secret(name, value) is secret


def test_secret_values_and_masking() -> None:
    env = {"OPENAI_API_KEY": "sk-proj-0123456789", "LANG": "C.UTF-8", "GITHUB_TOKEN": "ghp_abcdefghij"}
    secrets = secret_values(env)
    assert sorted(secrets) == ["ghp_abcdefghij", "sk-proj-0123456789"]
    redactor = Redactor(secrets)
    assert redactor.text("key sk-proj-0123456789 and ghp_abcdefghij in C.UTF-8") == "key *** and *** in C.UTF-8"
    assert redactor.data({"sk-proj-0123456789": ["ghp_abcdefghij", 3]}) == {"***": ["***", 3]}
