"""``RegistryStore``: the user and project registry files, read and written safely.

* ``~/.config/tooldeck/registry.json`` (user; ``$XDG_CONFIG_HOME/tooldeck/registry.json`` when
  set) and ``.tooldeck/registry.json`` (project). The project's entries win over the user's
  with the same id.
* The project file is used only while the user trusts it (``tooldeck trust``: the SHA-256 of
  its bytes, kept in the user's configuration, see :mod:`tools.store.trust`). Until then, and
  after any change to it, :meth:`RegistryStore.load_project` is empty: its tools are neither
  listed, started nor offered to a model; :meth:`RegistryStore.project_trust` says why. A
  project file tooldeck itself writes (``adopt``, ``remove``) stays trusted if it was (or did
  not exist); one that was not trusted stays untrusted.
* A missing file is an empty registry. An unreadable, non-JSON or invalid file is a
  :class:`~tools.store.errors.RegistryFileError` naming the file, the line and the problem;
  such a file is never replaced.
* Writes take a file lock (``registry.json.lock``, the ``filelock`` library), read the file
  afresh, change it and replace it atomically (temp file, fsync, rename), so concurrent
  writers lose no entry and a crash leaves the old file or the new one, never a torn one.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path

from filelock import FileLock, Timeout
from pydantic import ValidationError

from tools._datafile import invalid, parse_json
from tools._files import atomic_write_text
from tools.store.config import REGISTRY_VERSION, Registry
from tools.store.errors import RegistryFileError, StoreError
from tools.store.trust import TRUST_FILE, ProjectTrust, TrustedProject, TrustStore, file_sha256, trust_of

REGISTRY_FILE = "registry.json"
PROJECT_DIR = ".tooldeck"
#: Larger registry files are refused (a registry of 10,000 tools is well under this).
MAX_REGISTRY_BYTES = 50_000_000


def user_config_dir(env: Mapping[str, str]) -> Path:
    """tooldeck's user configuration directory for the environment ``env``.

    ``$XDG_CONFIG_HOME/tooldeck`` when set (and absolute), else ``$HOME/.config/tooldeck``.
    """
    xdg = env.get("XDG_CONFIG_HOME", "").strip()
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / "tooldeck"
    home = env.get("HOME", "").strip()
    return (Path(home) if home else Path.home()) / ".config" / "tooldeck"


class RegistryStore:
    """The user and project registry files.

    Args:
        user_path: The user registry (default ``~/.config/tooldeck/registry.json``; use
            :meth:`from_env` to honour ``XDG_CONFIG_HOME``).
        project_path: The project registry (default ``./.tooldeck/registry.json``).
        lock_timeout: Seconds a write waits for another writer's lock.
        trust: The user's trusted project files (default: ``trusted-projects.json`` beside
            the user registry).
    """

    def __init__(
        self,
        user_path: str | os.PathLike[str] | None = None,
        project_path: str | os.PathLike[str] | None = None,
        *,
        lock_timeout: float = 30.0,
        trust: TrustStore | None = None,
    ) -> None:
        self.user_path = Path(user_path) if user_path is not None else Path.home() / ".config/tooldeck" / REGISTRY_FILE
        self.project_path = Path(project_path) if project_path is not None else Path.cwd() / PROJECT_DIR / REGISTRY_FILE
        self._lock_timeout = lock_timeout
        self.trust = trust if trust is not None else TrustStore(self.user_path.parent / TRUST_FILE)

    @classmethod
    def from_env(cls, env: Mapping[str, str], project_dir: str | os.PathLike[str] | None = None) -> RegistryStore:
        """The store for environment ``env`` and project directory ``project_dir`` (default: cwd)."""
        project = Path(project_dir) if project_dir is not None else Path.cwd()
        return cls(user_config_dir(env) / REGISTRY_FILE, project / PROJECT_DIR / REGISTRY_FILE)

    def __repr__(self) -> str:
        return f"RegistryStore(user_path={str(self.user_path)!r}, project_path={str(self.project_path)!r})"

    # ------------------------------------------------------------------ reading

    def load_user(self) -> Registry:
        """The user registry (empty when the file does not exist).

        Raises:
            RegistryFileError: the file is unreadable, not JSON or invalid.
        """
        return load_registry_file(self.user_path)

    def load_project(self) -> Registry:
        """The project registry: empty when the file does not exist or is not trusted (see
        :meth:`project_trust`).

        Raises:
            RegistryFileError: the trusted file is unreadable, not JSON or invalid.
            TrustFileError: the trusted-projects file is unusable (nothing is trusted then).
        """
        data = _read_bytes(self.project_path)
        if not self._trust_of(data).usable:
            return Registry()
        return _registry_from_bytes(data, self.project_path)

    def load_project_unchecked(self) -> Registry:
        """The project registry whether or not it is trusted: for a person to review it
        (``tooldeck trust``), never to run its tools.

        Raises:
            RegistryFileError: the file is unreadable, not JSON or invalid.
        """
        return load_registry_file(self.project_path)

    def project_trust(self) -> ProjectTrust:
        """Whether the project file is used, and why not when it is not.

        Raises:
            RegistryFileError: the file cannot be read.
            TrustFileError: the trusted-projects file is unusable.
        """
        return self._trust_of(_read_bytes(self.project_path))

    def trust_project(self) -> tuple[ProjectTrust, Registry]:
        """Trust the project file as it is now (``tooldeck trust``); returns the trust and
        the registry trusted.

        Raises:
            StoreError: there is no project file.
            RegistryFileError: the file is not a valid registry (nothing is trusted).
        """
        data = _read_bytes(self.project_path)
        if data is None:
            raise StoreError(f"there is no project registry at {self.project_path}: nothing to trust")
        registry = _registry_from_bytes(data, self.project_path)  # the bytes checked are the bytes trusted
        record = self.trust.trust(self.project_path, file_sha256(data))
        return ProjectTrust(self.project_path, "trusted", record.sha256, record.trusted_at), registry

    def revoke_project_trust(self) -> TrustedProject | None:
        """Withdraw the trust of the project file; returns what was recorded, if anything."""
        return self.trust.revoke(self.project_path)

    def _trust_of(self, data: bytes | None) -> ProjectTrust:
        return trust_of(self.project_path, data, self.trust, own=self.user_path)

    def load_merged(self) -> Registry:
        """User entries overridden by project entries with the same id.

        Raises:
            RegistryFileError: either file is unreadable, not JSON or invalid.
        """
        user, project = self.load_user(), self.load_project()
        if not user.tools:
            return project
        return Registry(tools={**user.tools, **project.tools})

    def scope_of(self, tool_id: str) -> str | None:
        """``"project"``, ``"user"`` or None: which file the merged entry of ``tool_id`` comes from."""
        if tool_id in self.load_project().tools:
            return "project"
        return "user" if tool_id in self.load_user().tools else None

    # ------------------------------------------------------------------ writing

    def save_project(self, registry: Registry) -> None:
        """Replace the project registry with ``registry`` (locked, atomic).

        Raises:
            RegistryFileError: the existing file is corrupt (it is left as it is).
            StoreError: another writer held the lock for longer than ``lock_timeout``.
        """
        self.update_project(lambda _old: registry)

    def update_project(self, change: Callable[[Registry], Registry]) -> Registry:
        """Read the project registry under the lock, apply ``change``, write the result.

        A file that was trusted (or did not exist) is trusted as written; one that was not
        trusted stays untrusted.

        Returns:
            The registry written.

        Raises:
            RegistryFileError: the existing file is corrupt (nothing is written).
            StoreError: the lock could not be taken in time.
        """
        return self._update(self.project_path, change, project=True)

    def update_user(self, change: Callable[[Registry], Registry]) -> Registry:
        """Like :meth:`update_project`, for the user registry."""
        return self._update(self.user_path, change)

    def _update(self, path: Path, change: Callable[[Registry], Registry], *, project: bool = False) -> Registry:
        path.parent.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(path) + ".lock", timeout=self._lock_timeout)
        try:
            with lock:
                data = _read_bytes(path)
                keep_trust = project and self._trust_of(data).usable
                new = change(_registry_from_bytes(data, path))
                text = new.to_json_text()
                atomic_write_text(path, text, mode=0o644)
                if keep_trust:
                    self.trust.trust(path, file_sha256(text.encode("utf-8")))
        except Timeout:
            raise StoreError(
                f"registry file {path}: another tooldeck process held its lock for {self._lock_timeout:g} s; "
                f"retry, or remove {path}.lock if no tooldeck process is running"
            ) from None
        return new


def load_registry_file(path: Path) -> Registry:
    """Read one registry file; a missing file is an empty registry.

    Raises:
        RegistryFileError: unreadable, too large, empty, not JSON, or not a valid registry.
    """
    return _registry_from_bytes(_read_bytes(path), path)


def _read_bytes(path: Path) -> bytes | None:
    """The file's bytes (None when it does not exist), read once."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_REGISTRY_BYTES + 1)
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise RegistryFileError(path, "is a directory, not a file") from None
    except OSError as exc:
        raise RegistryFileError(path, f"cannot be read ({exc.strerror or exc})") from None
    if len(data) > MAX_REGISTRY_BYTES:
        raise RegistryFileError(path, f"is larger than {MAX_REGISTRY_BYTES} bytes")
    return data


def _registry_from_bytes(data: bytes | None, path: Path) -> Registry:
    """The registry in ``data``, the bytes of ``path`` (None: no file, an empty registry)."""
    if data is None:
        return Registry()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RegistryFileError(path, "is not UTF-8 text", line=data[: exc.start].count(b"\n") + 1) from None
    if not text.strip():
        raise RegistryFileError(path, 'is empty; an empty one is {"version": 1, "tools": {}}', line=1)
    try:
        return Registry.model_validate_json(text)  # the fast path: files tooldeck wrote
    except ValidationError:
        pass
    parsed = parse_json(text, path, error=RegistryFileError, newest=REGISTRY_VERSION)
    try:
        return Registry.from_data(parsed)  # hand-written entries without "id"
    except ValidationError as exc:
        raise invalid(exc, text, path, error=RegistryFileError) from None
    except RecursionError:
        raise RegistryFileError(path, "is nested too deeply") from None
