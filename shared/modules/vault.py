"""``CredentialVault``: a module's credentials sealed with Fernet (needs the ``modules`` extra).

The vault only turns a mapping of names to secret strings into an opaque token and back;
where tokens are stored is the credential store's business. Nothing here logs, and errors
never contain a secret.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["CredentialError", "CredentialVault"]


class CredentialError(ValueError):
    """Credentials could not be sealed or opened (wrong key, damaged token, bad values)."""


class CredentialVault:
    """Encrypts and decrypts credential mappings with one Fernet key.

    Args:
        key: A Fernet key (see :class:`~shared.modules.keys.ModuleKeys`).

    Raises:
        ImportError: ``cryptography`` is not installed (``pip install -e '.[modules]'``).
        CredentialError: The key is not a Fernet key.
    """

    def __init__(self, key: bytes) -> None:
        try:
            from cryptography.fernet import Fernet
        except ImportError as exc:  # pragma: no cover - the extra is installed in tests
            raise ImportError("module credentials need the 'modules' extra: pip install -e '.[modules]'") from exc
        try:
            self._fernet = Fernet(key)
        except (ValueError, TypeError):
            raise CredentialError("the credentials key is not a Fernet key (32 bytes, URL-safe base64)") from None

    def __repr__(self) -> str:
        return "CredentialVault(key=<hidden>)"

    def seal(self, values: Mapping[str, str]) -> str:
        """An encrypted token holding ``values``."""
        plain = json.dumps(dict(values), sort_keys=True).encode()
        return self._fernet.encrypt(plain).decode("ascii")

    def open(self, token: str) -> dict[str, str]:
        """The values sealed in ``token``.

        Raises:
            CredentialError: The token was made with another key or is damaged.
        """
        from cryptography.fernet import InvalidToken

        try:
            plain = self._fernet.decrypt(token.encode("ascii"))
            loaded: Any = json.loads(plain)
        except (InvalidToken, ValueError, UnicodeError):
            raise CredentialError(
                "the stored credentials cannot be decrypted (made with another key, or damaged); store them again"
            ) from None
        if not isinstance(loaded, dict) or not all(isinstance(v, str) for v in loaded.values()):
            raise CredentialError("the stored credentials are damaged; store them again")
        return {str(k): v for k, v in loaded.items()}
