"""``StateSigner``: HMAC-SHA256 signatures on saved states, so an edited state is refused.

A paused run's state says which calls wait for a person and with which arguments; whoever
can edit the file could otherwise change what a later ``--resume --approve-call`` runs. The
state is therefore signed with a key only the user can read, and verified before anything
in it is believed::

    signer = StateSigner.from_env(os.environ)      # $XDG_CONFIG_HOME/tooldeck/state.key
    saved = signer.sign({"kind": "...", ...})      # a copy with a "signature" field
    checked = signer.verify(saved)                 # the document again, or StateSignatureError

* The MAC covers the canonical JSON of the whole document except its ``signature`` field
  (keys sorted, no whitespace, UTF-8), after a domain-separation prefix: any change to a
  value (a level, an agent, arguments, pending approvals, messages) fails; reformatting the
  JSON does not. Comparison is constant-time (:func:`hmac.compare_digest`).
* The key: 32 random bytes, hex, in ``state.key`` in the user's configuration directory,
  mode ``0600`` in a ``0700`` directory. It is created on the first :meth:`~StateSigner.sign`
  (atomically: written to a temporary file and linked into place, so two processes starting
  at once end up with the same key), never by :meth:`~StateSigner.verify`. A key file other
  users may read or write, owned by another user, a symlink, or not 64 hex digits is
  refused with a message saying how to fix it.
* Rotating the key is removing the file: a new one is made on the next pause, and states
  signed with the old key are refused ("signed with another key").
* **Replicas share one key.** A state paused on one host resumes on another only when both
  sign with the same key: ``TOOLDECK_STATE_KEY_FILE=/etc/tooldeck/state.key`` (read by the
  entry points through :meth:`~StateSigner.from_env`) names a key file the operator made once
  and copied to every replica. Such a key is never created: a missing file is an error at
  the first pause or resume, not a fresh key per host. It is checked like the user's own (a
  regular file of this user, not a symlink, nobody else may read or write it, 64 hex digits).
* :meth:`StateSigner.ephemeral` makes a key that lives in memory only (the default of an
  ``AgentGraph``): its states resume only through the same signer object.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
import stat
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tools.approvals.errors import ApprovalError
from tools.approvals.hashing import canonical_json

#: The key file's name in the user's configuration directory.
STATE_KEY_FILE = "state.key"
#: The setting naming a key file shared by several replicas (read by the entry points).
STATE_KEY_FILE_VARIABLE = "TOOLDECK_STATE_KEY_FILE"
#: The field of a signed document that holds its signature.
SIGNATURE_FIELD = "signature"
#: The only algorithm this code writes and accepts.
SIGNATURE_ALGORITHM = "hmac-sha256"
_KEY_BYTES = 32
_DOMAIN = b"tooldeck.signed-state.v1\n"
_KEY_ID_DOMAIN = b"tooldeck.state-key-id\n"


class StateKeyError(ApprovalError):
    """The state key file cannot be used (unsafe permissions, damaged, unreadable)."""


class StateSignatureError(ApprovalError):
    """A document's signature is missing, malformed, made with another key, or wrong.

    Attributes:
        reason: ``"unsigned"``, ``"malformed"``, ``"other_key"``, ``"no_key"`` or ``"mismatch"``.
    """

    def __init__(self, message: str, *, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


class StateSigner:
    """Signs and verifies JSON documents with HMAC-SHA256 under one key.

    Args:
        key: The raw key (at least 32 bytes); use :meth:`from_env`, :meth:`from_file` or
            :meth:`ephemeral` instead of passing one by hand.
        key_file: Where the key lives (read lazily, created on the first :meth:`sign`);
            exactly one of ``key`` and ``key_file``.
        create: False: the key file must exist (a key shared by several replicas, see
            :meth:`from_env`); it is never made here.

    Raises:
        ValueError: neither or both of ``key`` and ``key_file``, or a key shorter than 32 bytes.
    """

    def __init__(
        self, key: bytes | None = None, *, key_file: str | os.PathLike[str] | None = None, create: bool = True
    ) -> None:
        if (key is None) == (key_file is None):
            raise ValueError("StateSigner needs exactly one of key= (bytes) and key_file= (a path)")
        if key is not None and len(key) < _KEY_BYTES:
            raise ValueError(f"a state key has at least {_KEY_BYTES} bytes, got {len(key)}")
        self._key = key
        self.key_file = Path(key_file) if key_file is not None else None
        self._create = create
        self._lock = threading.Lock()

    @classmethod
    def ephemeral(cls) -> StateSigner:
        """A signer with a fresh random key kept in memory only."""
        return cls(secrets.token_bytes(_KEY_BYTES))

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> StateSigner:
        """A signer whose key is the file ``path`` (created on the first signature)."""
        return cls(key_file=path)

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> StateSigner:
        """The signer of this deployment: the key file ``TOOLDECK_STATE_KEY_FILE`` names when
        it is set (one key for every replica; it must exist, it is never created), else the
        user's ``state.key`` in ``$XDG_CONFIG_HOME/tooldeck`` (else ``~/.config/tooldeck``)."""
        shared = env.get(STATE_KEY_FILE_VARIABLE, "").strip()
        if shared:
            return cls(key_file=Path(shared).expanduser(), create=False)
        from tools.store.registry_store import user_config_dir

        return cls(key_file=user_config_dir(env) / STATE_KEY_FILE)

    def __repr__(self) -> str:
        where = "in memory" if self.key_file is None else str(self.key_file)
        return f"StateSigner({where})"

    # ------------------------------------------------------------------ signing

    def sign(self, document: Mapping[str, Any]) -> dict[str, Any]:
        """A copy of ``document`` with its ``signature`` field (any old one replaced).

        Raises:
            StateKeyError: the key file is unusable or cannot be created.
            TypeError / ValueError: ``document`` is not JSON data.
        """
        body = {k: v for k, v in document.items() if k != SIGNATURE_FIELD}
        key = self._load(create=True)
        if key is None:  # pragma: no cover - _load(create=True) makes one or raises
            raise StateKeyError(f"no state key could be made at {self.key_file}")
        signed = dict(body)
        signed[SIGNATURE_FIELD] = {"alg": SIGNATURE_ALGORITHM, "key_id": key_id(key), "mac": _mac(key, body)}
        return signed

    def verify(self, document: Mapping[str, Any], *, what: str = "the state") -> dict[str, Any]:
        """``document`` without its signature, if the signature is this key's and matches.

        Args:
            document: A document :meth:`sign` produced (after any JSON round trip).
            what: How errors name the document (e.g. ``"the state in paused.json"``).

        Raises:
            StateSignatureError: no signature, a malformed one, one made with another key (or
                no key here to check it with), or one that does not match: the document was
                edited. The message names the problem and what to do.
            StateKeyError: the key file is unusable.
        """
        signature = document.get(SIGNATURE_FIELD)
        if signature is None:
            raise StateSignatureError(
                f"{what} is not signed, so nothing in it can be trusted; it was not resumed. States are signed "
                "when a run pauses: ask the question again",
                reason="unsigned",
            )
        if (
            not isinstance(signature, Mapping)
            or signature.get("alg") != SIGNATURE_ALGORITHM
            or not _is_hex(signature.get("key_id"), 16)
            or not _is_hex(signature.get("mac"), 64)
        ):
            raise StateSignatureError(
                f"{what} has a malformed signature (expected {{alg: {SIGNATURE_ALGORITHM}, key_id, mac}}); "
                "the state was altered or is damaged, so nothing was run",
                reason="malformed",
            )
        key = self._load(create=False)
        if key is None:
            raise StateSignatureError(
                f"{what} cannot be checked: there is no state key at {self.key_file} (it was signed by a key that is "
                "not here: another user or machine, or the key was removed). Nothing was run; ask the question again",
                reason="no_key",
            )
        if not hmac.compare_digest(key_id(key), str(signature["key_id"])):
            raise StateSignatureError(
                f"{what} was signed with another key (key id {str(signature['key_id'])[:16]}, this "
                f"{self._where()} has key id {key_id(key)}): it was saved by another user or machine, or before "
                "the key was replaced. Nothing was run; ask the question again",
                reason="other_key",
            )
        body = {k: v for k, v in document.items() if k != SIGNATURE_FIELD}
        if not hmac.compare_digest(_mac(key, body), str(signature["mac"])):
            raise StateSignatureError(
                f"{what} does not match its signature: it was edited after it was saved (any change to the "
                "level, agent, arguments, pending approvals or messages breaks it), so nothing was run. Resume "
                "the state exactly as it was saved, or ask the question again",
                reason="mismatch",
            )
        return body

    def _where(self) -> str:
        return "signer" if self.key_file is None else f"user's key {self.key_file}"

    # ------------------------------------------------------------------ the key

    def _load(self, *, create: bool) -> bytes | None:
        """The key; from the key file when there is one (None: no file and ``create`` is false).

        Raises:
            StateKeyError: the key file is unusable, or a shared key (``create=False`` at
                construction) is missing or named by a relative path.
        """
        if self._key is not None or self.key_file is None:
            return self._key
        path = self.key_file
        if not self._create and not path.is_absolute():
            raise StateKeyError(
                f"{STATE_KEY_FILE_VARIABLE} must name the key file by an absolute path (every replica resolves it "
                f"alike), got {str(path)[:200]!r}"
            )
        with self._lock:
            key = _read_key(path)
            if key is None and not self._create:
                raise StateKeyError(_missing_shared_key(path))
            return _create_key(path) if key is None and create else key


def _missing_shared_key(path: Path) -> str:
    return (
        f"state key {path} ({STATE_KEY_FILE_VARIABLE}) does not exist; it is never created, because every replica "
        f'must sign with the same key: make it once (umask 077; python -c "import secrets; '
        f'print(secrets.token_hex(32))" > {path.name}) and copy it to {path} on each host, owned by the user '
        "tooldeck runs as, mode 600"
    )


def key_id(key: bytes) -> str:
    """A short public name of ``key`` (16 hex digits; it reveals nothing of the key)."""
    return hashlib.sha256(_KEY_ID_DOMAIN + key).hexdigest()[:16]


def _mac(key: bytes, body: Mapping[str, Any]) -> str:
    payload = _DOMAIN + canonical_json(body).encode("utf-8", "surrogatepass")
    return hmac.new(key, payload, hashlib.sha256).hexdigest()


def _is_hex(value: object, length: int) -> bool:
    return isinstance(value, str) and len(value) == length and all(c in "0123456789abcdef" for c in value)


def _read_key(path: Path) -> bytes | None:
    """The key in ``path`` (None when there is no file); refuses what others could read or write."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return None
    except OSError as exc:
        if path.is_symlink():
            raise StateKeyError(
                f"state key {path} is a symlink; a key must be a regular file of this user: replace the link with "
                "the file it points to (chmod 600)"
            ) from None
        if isinstance(exc, PermissionError) and os.name != "nt":
            raise StateKeyError(
                f"state key {path} cannot be read by this user (uid {os.geteuid()}: {exc.strerror or exc}); a key must "
                "be a file of the user tooldeck runs as: chown it to that user, chmod 600"
            ) from None
        raise StateKeyError(f"state key {path} cannot be read ({exc.strerror or exc})") from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        _check_key_file(path, info)
        raw = handle.read(4096)
    text = raw.decode("ascii", "replace").strip()
    if len(text) != 2 * _KEY_BYTES or not _is_hex(text, 2 * _KEY_BYTES):
        raise StateKeyError(
            f"state key {path} is damaged (expected {2 * _KEY_BYTES} hex digits); remove it and a new key is made "
            "on the next pause (states saved with the old key can then no longer be resumed)"
        )
    return bytes.fromhex(text)


def _check_key_file(path: Path, info: os.stat_result) -> None:
    if not stat.S_ISREG(info.st_mode):
        raise StateKeyError(f"state key {path} is not a regular file; remove it")
    if os.name == "nt":  # pragma: no cover - POSIX permissions only
        return
    if info.st_uid != os.geteuid():
        raise StateKeyError(
            f"state key {path} belongs to another user (uid {info.st_uid}); a key must be this user's own: remove it"
        )
    if info.st_mode & 0o077:
        raise StateKeyError(
            f"state key {path} can be read or written by other users (mode {info.st_mode & 0o777:o}), so they "
            f"could forge saved states; run: chmod 600 {path}"
        )


def _create_key(path: Path) -> bytes:
    """Make a new key file atomically; if another process made one first, use theirs."""
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = _temp_file(path)
    except OSError as exc:
        raise StateKeyError(f"cannot create the state key {path} ({exc.strerror or exc})") from None
    key = secrets.token_bytes(_KEY_BYTES)
    try:
        with os.fdopen(fd, "w", encoding="ascii") as handle:
            handle.write(key.hex() + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(tmp, path)  # fails if the key exists: never replaces one
        except FileExistsError:
            existing = _read_key(path)
            if existing is None:  # pragma: no cover - removed between link and read
                raise StateKeyError(f"the state key {path} vanished while it was being created; retry") from None
            return existing
        except OSError as exc:
            raise StateKeyError(f"cannot create the state key {path} ({exc.strerror or exc})") from None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    return key


def _temp_file(path: Path) -> tuple[int, str]:
    tmp = path.parent / f".{path.name}.{secrets.token_hex(8)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    os.fchmod(fd, 0o600)
    return fd, str(tmp)
