"""``RegistryStore``: the user and project registry files, read and written safely.

* ``~/.config/tooldeck/registry.json`` (user; ``$XDG_CONFIG_HOME/tooldeck/registry.json`` when
  set) and ``.tooldeck/registry.json`` (project). The project's entries win over the user's
  with the same id.
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

from tools._datafile import invalid, parse_json, read_text
from tools._files import atomic_write_text
from tools.store.config import REGISTRY_VERSION, Registry
from tools.store.errors import RegistryFileError, StoreError

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
    """

    def __init__(
        self,
        user_path: str | os.PathLike[str] | None = None,
        project_path: str | os.PathLike[str] | None = None,
        *,
        lock_timeout: float = 30.0,
    ) -> None:
        self.user_path = Path(user_path) if user_path is not None else Path.home() / ".config/tooldeck" / REGISTRY_FILE
        self.project_path = Path(project_path) if project_path is not None else Path.cwd() / PROJECT_DIR / REGISTRY_FILE
        self._lock_timeout = lock_timeout

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
        """The project registry (empty when the file does not exist).

        Raises:
            RegistryFileError: the file is unreadable, not JSON or invalid.
        """
        return load_registry_file(self.project_path)

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

        Returns:
            The registry written.

        Raises:
            RegistryFileError: the existing file is corrupt (nothing is written).
            StoreError: the lock could not be taken in time.
        """
        return self._update(self.project_path, change)

    def update_user(self, change: Callable[[Registry], Registry]) -> Registry:
        """Like :meth:`update_project`, for the user registry."""
        return self._update(self.user_path, change)

    def _update(self, path: Path, change: Callable[[Registry], Registry]) -> Registry:
        path.parent.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(path) + ".lock", timeout=self._lock_timeout)
        try:
            with lock:
                new = change(load_registry_file(path))
                atomic_write_text(path, new.to_json_text(), mode=0o644)
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
    text = read_text(
        path, error=RegistryFileError, max_bytes=MAX_REGISTRY_BYTES, empty_example='{"version": 1, "tools": {}}'
    )
    if text is None:
        return Registry()
    try:
        return Registry.model_validate_json(text)  # the fast path: files tooldeck wrote
    except ValidationError:
        pass
    data = parse_json(text, path, error=RegistryFileError, newest=REGISTRY_VERSION)
    try:
        return Registry.from_data(data)  # hand-written entries without "id"
    except ValidationError as exc:
        raise invalid(exc, text, path, error=RegistryFileError) from None
    except RecursionError:
        raise RegistryFileError(path, "is nested too deeply") from None
