"""``CredentialStore``: a module's credentials, encrypted at rest, never read back here.

Credentials are sealed with the store's Fernet key (:class:`~shared.modules.CredentialVault`)
into ``credentials/<module_id>.token`` (``0600``). This class can store, list the *names*
of, and delete credentials; it has no method that returns their values. Only the context
service's module loader decrypts them, for the one fetch that needs them.
"""

from __future__ import annotations

from collections.abc import Mapping

from shared.modules import CredentialError, CredentialVault, ModuleLayout
from tools._files import atomic_write_text
from tools.builtin.modules.store import ModuleStore
from tools.errors import InvalidArgumentsError, ToolError

__all__ = ["CredentialStore"]

MAX_CREDENTIALS = 20
MAX_VALUE_CHARS = 4096


class CredentialStore:
    """Stores module credentials encrypted; reveals names only.

    Args:
        store: The module store (its lock and layout).
        vault: Encrypts with the store's credentials key.
    """

    def __init__(self, *, store: ModuleStore, vault: CredentialVault) -> None:
        self._store = store
        self._vault = vault

    def __repr__(self) -> str:
        return f"CredentialStore({str(self._store.layout.root)!r})"

    @property
    def layout(self) -> ModuleLayout:
        """The store's layout."""
        return self._store.layout

    def store(self, module_id: str, values: Mapping[str, str]) -> list[str]:
        """Replace the module's credentials with ``values``; returns their names.

        Raises:
            InvalidArgumentsError: No values, too many, or a value that is not a short
                string (the message never shows a value).
        """
        if not values:
            raise InvalidArgumentsError("Give at least one credential.")
        if len(values) > MAX_CREDENTIALS:
            raise InvalidArgumentsError(f"Give at most {MAX_CREDENTIALS} credentials.")
        for name, value in values.items():
            if not isinstance(value, str) or not value or len(value) > MAX_VALUE_CHARS:
                raise InvalidArgumentsError(
                    f"The credential {name[:40]!r} must be a non-empty string of at most {MAX_VALUE_CHARS} "
                    "characters (its value is not shown)."
                )
        token = self._vault.seal(values)
        path = self.layout.credential_path(module_id)
        with self._store.locked():
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            atomic_write_text(path, token + "\n", mode=0o600)
        return sorted(values)

    def names(self, module_id: str) -> list[str]:
        """The names of the stored credentials (empty when none).

        Raises:
            ToolError: They cannot be decrypted (another key, or damaged).
        """
        path = self.layout.credential_path(module_id)
        try:
            token = path.read_text(encoding="ascii").strip()
        except FileNotFoundError:
            return []
        except (OSError, UnicodeError):
            raise ToolError(f"The stored credentials of {module_id!r} cannot be read; store them again.") from None
        try:
            return sorted(self._vault.open(token))
        except CredentialError as exc:
            raise ToolError(f"Module {module_id!r}: {exc}.") from None

    def has(self, module_id: str) -> bool:
        """Whether credentials are stored for the module."""
        return self.layout.credential_path(module_id).is_file()

    def delete(self, module_id: str) -> bool:
        """Delete the module's credentials; returns whether there were any."""
        with self._store.locked():
            path = self.layout.credential_path(module_id)
            existed = path.is_file()
            path.unlink(missing_ok=True)
            return existed
