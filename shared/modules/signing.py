"""HMAC signatures over small JSON records: validation attestations and version records.

A signature binds a purpose (``"attestation"``, ``"version"``) and the record's canonical
JSON, so a signature made for one purpose never verifies for another. The key is kept like
the credential key (:class:`~shared.modules.keys.ModuleKeys`): a model, which only sees
tool results, cannot produce a valid signature.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Mapping
from typing import Any

__all__ = ["Signer"]

MIN_KEY_BYTES = 32


class Signer:
    """Signs and verifies records with HMAC-SHA256.

    Args:
        key: At least 32 bytes of secret key.

    Raises:
        ValueError: The key is shorter than 32 bytes.
    """

    def __init__(self, key: bytes) -> None:
        if len(key) < MIN_KEY_BYTES:
            raise ValueError(f"the signing key must be at least {MIN_KEY_BYTES} bytes")
        self._key = key

    def __repr__(self) -> str:
        return "Signer(key=<hidden>)"

    def sign(self, purpose: str, record: Mapping[str, Any]) -> str:
        """The hex signature of ``record`` (JSON-compatible) for ``purpose``."""
        message = purpose.encode() + b"\n" + _canonical(record)
        return hmac.new(self._key, message, hashlib.sha256).hexdigest()

    def verify(self, purpose: str, record: Mapping[str, Any], signature: object) -> bool:
        """Whether ``signature`` is this key's signature of ``record`` for ``purpose``."""
        if not isinstance(signature, str):
            return False
        try:
            expected = self.sign(purpose, record)
        except (TypeError, ValueError):
            return False
        return hmac.compare_digest(expected, signature)


def _canonical(record: Mapping[str, Any]) -> bytes:
    return json.dumps(dict(record), sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()
