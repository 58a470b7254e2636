"""Replace secret values with ``***`` in text and JSON-like data; guess which variables are secret."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from tools.result import ErrorInfo, ToolResult

#: Secrets shorter than this are not redacted (they would mangle ordinary text).
MIN_SECRET_LENGTH = 4
#: Values only *guessed* to be secret (by their variable's name) are redacted from this length.
MIN_GUESSED_SECRET_LENGTH = 8
MASK = "***"

#: Parts of variable names (split at ``_``) that mark a secret: ``OPENAI_API_KEY``,
#: ``GITHUB_TOKEN``, ``DB_PASSWORD``, ``AWS_SECRET_ACCESS_KEY``, ``SENTRY_DSN`` ...
SECRET_NAME_PARTS = frozenset(
    {"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "PWD", "PAT", "AUTH", "CREDENTIAL"}
    | {"CREDENTIALS", "COOKIE", "SIGNATURE", "DSN", "APIKEY", "PRIVATE"}
)
#: Name parts ending like this mark a secret too (``APIKEY``, ``ACCESSTOKEN``).
_SECRET_SUFFIXES = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD")
#: A URL with a password in it (``postgres://user:pw@host``): secret whatever the name.
_URL_WITH_PASSWORD = re.compile(r"^[a-z][a-z0-9+.-]*://[^/@:\s]*:[^/@\s]+@", re.IGNORECASE)


def looks_secret(name: str, value: str) -> bool:
    """Whether an environment variable probably holds a secret, judged by name and value.

    Values shorter than :data:`MIN_GUESSED_SECRET_LENGTH` never count (``PWD`` alone is the
    working directory and is not a secret either).
    """
    if len(value) < MIN_GUESSED_SECRET_LENGTH:
        return False
    upper = name.upper()
    parts = upper.split("_")
    if upper != "PWD" and any(part in SECRET_NAME_PARTS or part.endswith(_SECRET_SUFFIXES) for part in parts):
        return True
    return bool(_URL_WITH_PASSWORD.match(value))


def secret_values(env: Mapping[str, str]) -> list[str]:
    """The values of ``env`` that :func:`looks_secret` flags (for a :class:`Redactor`)."""
    return [value for name, value in env.items() if looks_secret(name, value)]


class Redactor:
    """Masks a fixed set of secret values.

    Args:
        secrets: The values to hide; empty and very short values are ignored.
    """

    def __init__(self, secrets: Iterable[str | None]) -> None:
        found = {s for s in secrets if s and len(s) >= MIN_SECRET_LENGTH}
        # Longest first, so a secret that contains another is masked whole.
        self._secrets = sorted(found, key=len, reverse=True)

    def __bool__(self) -> bool:
        return bool(self._secrets)

    def text(self, value: str) -> str:
        """``value`` with every secret replaced by ``***``."""
        for secret in self._secrets:
            if secret in value:
                value = value.replace(secret, MASK)
        return value

    def data(self, value: Any) -> Any:
        """A copy of JSON-like ``value`` with secrets masked in every string (keys included)."""
        if not self._secrets:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.data(k): self.data(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.data(v) for v in value]
        return value

    def result(self, result: ToolResult) -> ToolResult:
        """``result`` with every secret masked in its data, error and metadata."""
        if not self._secrets:
            return result
        error = result.error
        if error is not None:
            error = ErrorInfo(
                error.type, self.text(error.message), error.retryable, self.data(error.details), error.trips_breaker
            )
        return ToolResult(result.status, self.data(result.data), error, self.data(result.metadata))


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters with a visible note when cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... [{len(text) - limit} more characters cut]"
