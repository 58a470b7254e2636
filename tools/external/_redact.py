"""Replace secret values with ``***`` in text and JSON-like data."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

#: Secrets shorter than this are not redacted (they would mangle ordinary text).
MIN_SECRET_LENGTH = 4
MASK = "***"


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


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters with a visible note when cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... [{len(text) - limit} more characters cut]"
