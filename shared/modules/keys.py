"""The module system's two secret keys: one encrypts credentials, one signs records.

Each key comes from the value the entry point read from an environment variable, or
else from a key file that is created on first use with ``0600`` permissions in a
``0700`` folder (created exclusively, so two processes starting together agree on one
key). A key file that others may read is refused. Keys never appear in ``repr``.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["KeyFileError", "ModuleKeys", "load_or_create_key"]

CREDENTIALS_KEY_FILE = "module-credentials.key"
SIGNING_KEY_FILE = "module-signing.key"


class KeyFileError(ValueError):
    """A key file or key value is unusable; the message names the file or variable and the fix."""


def _new_fernet_key() -> bytes:
    return base64.urlsafe_b64encode(os.urandom(32))


def _new_signing_key() -> bytes:
    return base64.urlsafe_b64encode(os.urandom(48))


def load_or_create_key(path: Path, *, create: Callable[[], bytes]) -> bytes:
    """The key stored in ``path``, creating it (``0600``) with ``create()`` when missing.

    Raises:
        KeyFileError: The file is readable by other users, empty, or cannot be created.
    """
    try:
        return _read_key(path)
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise KeyFileError(f"cannot read the key file {path} ({exc.strerror})") from None
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(create())
                handle.flush()
                os.fsync(handle.fileno())
            with contextlib.suppress(FileExistsError):  # another process made it first: use theirs
                os.link(tmp, path)
        finally:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    except OSError as exc:
        raise KeyFileError(
            f"cannot create the key file {path} ({exc.strerror}); check the folder's permissions"
        ) from None
    return _read_key(path)


def _read_key(path: Path) -> bytes:
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as handle:
        mode = os.fstat(handle.fileno()).st_mode
        if mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise KeyFileError(f"the key file {path} may be read by other users; run: chmod 600 {path}")
        data = handle.read(4096).strip()
    if not data:
        raise KeyFileError(f"the key file {path} is empty; delete it to have a new key made")
    return data


def _fernet_key(value: bytes, where: str) -> bytes:
    try:
        raw = base64.urlsafe_b64decode(value)
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) != 32:
        raise KeyFileError(
            f"{where} is not a credentials key (32 bytes, URL-safe base64); make one with: "
            "python -c 'import base64, os; print(base64.urlsafe_b64encode(os.urandom(32)).decode())'"
        )
    return value


@dataclass(frozen=True)
class ModuleKeys:
    """The credential-encryption key (Fernet format) and the record-signing key.

    Attributes:
        credentials: A Fernet key (32 bytes, URL-safe base64).
        signing: At least 32 bytes for HMAC signatures.
    """

    credentials: bytes = field(repr=False)
    signing: bytes = field(repr=False)

    @classmethod
    def load(
        cls,
        key_dir: Path,
        *,
        credentials_key: str | None = None,
        signing_key: str | None = None,
    ) -> ModuleKeys:
        """Keys from the given values (read from the environment by the entry point), else
        from key files in ``key_dir`` (created ``0600`` on first use).

        Raises:
            KeyFileError: A value or file is unusable.
        """
        if credentials_key:
            credentials = _fernet_key(credentials_key.strip().encode(), "the credentials key value")
        else:
            path = key_dir / CREDENTIALS_KEY_FILE
            credentials = _fernet_key(load_or_create_key(path, create=_new_fernet_key), str(path))
        if signing_key:
            signing = signing_key.strip().encode()
            if len(signing) < 32:
                raise KeyFileError("the signing key value must be at least 32 characters")
        else:
            signing = load_or_create_key(key_dir / SIGNING_KEY_FILE, create=_new_signing_key)
        return cls(credentials=credentials, signing=signing)
