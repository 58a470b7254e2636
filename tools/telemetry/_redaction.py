"""What metrics keep of an error message: secret-looking values masked, one line, short.

Error messages are written for the model and tools are expected to keep secrets out of
them; this is the second line of defence for files that outlive the process. It masks
credentials in the shapes they usually take (``Bearer ...``, ``api_key=...``,
``user:password@host``, provider token prefixes, long opaque strings); it cannot know a
secret that looks like ordinary words.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

#: Longest error text kept, ellipsis included.
MAX_ERROR_CHARS = 200
MASK = "***"

#: A secret-sounding name (``api_key``, ``X-Auth-Token``, ``db_password``), case ignored.
_SENSITIVE_NAME = (
    r"(?:[a-z0-9]+[_-])*(?:api[_-]?key|apikey|token|secret|password|passwd|pwd|"
    r"credentials?|authorization|auth|session|cookie|private[_-]?key|signature|sig)"
    r"(?:[_-][a-z0-9]+)*"
)
_SECRET_KEY = re.compile(_SENSITIVE_NAME, re.IGNORECASE)

_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # user:password@ in URLs
    (re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s:@]+:[^/\s@]+@"), rf"\1{MASK}@"),
    # Authorization schemes
    (re.compile(r"(?i)\b(bearer|basic|token)\s+[A-Za-z0-9._~+/=-]{6,}"), rf"\1 {MASK}"),
    # key=value, key: value, "key": "value" for secret-sounding keys
    (re.compile(rf"\b({_SENSITIVE_NAME})(\"?\s*[:=]\s*\"?)([^\s\"'&,;]+)", re.IGNORECASE), rf"\1\2{MASK}"),
    # Well-known token shapes
    (re.compile(r"\b(?:sk|pk|rk)-[A-Za-z0-9_-]{12,}"), MASK),
    (re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}"), MASK),
    (re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}"), MASK),
    (re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), MASK),
    (re.compile(r"\beyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*"), MASK),
    # Long opaque strings: keys, signatures, blobs
    (re.compile(r"[A-Za-z0-9+/_=-]{32,}"), MASK),
)
_SPACE = re.compile(r"\s+")
_MAX_SCANNED = 4000


def redact_text(text: str, *, opaque: bool = True) -> str:
    """``text`` with secret-looking values replaced by ``***``.

    Args:
        text: Any text.
        opaque: Also mask every long opaque string (32+ key-like characters). Right for short
            error lines; for stored data (a number with thousands of digits, a hash, base64)
            pass False to mask only the shapes credentials take.
    """
    patterns = _PATTERNS if opaque else _PATTERNS[:-1]
    for pattern, replacement in patterns:
        text = pattern.sub(replacement, text)
    return text


def is_secret_name(name: str) -> bool:
    """Whether a field called ``name`` holds a secret (``password``, ``api_key``, ``X-Auth-Token``);
    its value is masked whatever it looks like."""
    return _SECRET_KEY.fullmatch(name) is not None


#: Known secrets shorter than this are not masked (they would mask ordinary words).
MIN_SECRET_CHARS = 4


def redact_data(value: Any, secrets: Iterable[str] = ()) -> Any:
    """A copy of JSON-like ``value`` with ``secrets`` and secret-looking values masked.

    The redaction of traces and run records, for anything shown to people: every string
    (not the mapping keys, which are names) has the known ``secrets`` replaced by ``***``
    (longest first), then the secret shapes :func:`redact_text` knows; a value under a
    secret-sounding name (:func:`is_secret_name`: a ``password`` argument) is masked whole,
    whatever it looks like. Tuples come back as lists; other values as they are.
    """
    known = sorted({s for s in secrets if s and len(s) >= MIN_SECRET_CHARS}, key=len, reverse=True)
    return _walk(value, known)


def _walk(value: Any, known: list[str]) -> Any:
    if isinstance(value, str):
        for secret in known:
            if secret in value:
                value = value.replace(secret, MASK)
        return redact_text(value) if len(value) >= 6 else value  # shorter text holds no secret shape
    if isinstance(value, dict):
        return {key: _field(str(key), item, known) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_walk(item, known) for item in value]
    return value


def _field(name: str, value: Any, known: list[str]) -> Any:
    """A mapping's value: masked whole under a secret-sounding name, else walked."""
    if is_secret_name(name) and value is not None and not isinstance(value, bool):
        return MASK
    return _walk(value, known)


def summarize_error(
    message: object, *, limit: int = MAX_ERROR_CHARS, redact: Callable[[str], str] | None = None
) -> str:
    """One redacted line of at most ``limit`` characters from an error message.

    Args:
        message: The error's message (anything; non-strings are converted with ``str``).
        limit: Longest result, the trailing ``…`` included.
        redact: An extra redaction step run first, e.g. one that masks known secret values.
    """
    text = message if isinstance(message, str) else str(message)
    # Bound the work on hostile input; far more than can be kept, so no secret is cut in two.
    text = text[:_MAX_SCANNED]
    if redact is not None:
        text = redact(text)
    text = _SPACE.sub(" ", redact_text(text)).strip()
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return text
