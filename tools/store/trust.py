"""``TrustStore``: which project registry files (``.tooldeck/registry.json``) the user trusts.

A project's registry file can declare tools that run programs, and it comes with whatever
directory one happens to be in: a cloned repository, a downloaded archive. Like
``direnv allow``, tooldeck uses such a file only after the user says so (``tooldeck trust``),
and only as it was then: the trust is the SHA-256 of the file's bytes, kept in the user's
configuration (``trusted-projects.json`` beside the user registry, mode 0600). Any change to
the file (a ``git pull``, an edit) ends the trust until it is given again.

Example file::

    {
      "version": 1,
      "projects": {
        "/home/ana/src/app/.tooldeck/registry.json": {"sha256": "9f2c...", "trusted_at": "2026-05-01T10:00:00Z"}
      }
    }

Keys are the file's real path (symlinks resolved). Writes take a lock and replace the file
atomically; a file other users may write is refused (anyone could trust a project with it).
"""

from __future__ import annotations

import hashlib
import os
import shlex
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from filelock import FileLock, Timeout
from pydantic import BaseModel, ConfigDict, Field

from tools._datafile import parse_document, read_text
from tools._files import atomic_write_text
from tools.store.errors import RegistryFileError, StoreError

if TYPE_CHECKING:
    from tools.store.config import ToolConfig

TRUST_FILE = "trusted-projects.json"
TRUST_VERSION = 1
_MAX_TRUST_BYTES = 5_000_000
_HASH_RULE = r"^[0-9a-f]{64}$"

TrustStatus = Literal["absent", "own", "trusted", "untrusted", "changed"]


class TrustFileError(RegistryFileError):
    """The trusted-projects file cannot be used; it is left untouched."""

    kind = "trusted-projects file"


class TrustedProject(BaseModel):
    """One trusted project registry file, as it was when trusted."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    sha256: str = Field(pattern=_HASH_RULE)
    trusted_at: datetime


class TrustFile(BaseModel):
    """The content of the trusted-projects file."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    version: int = Field(default=TRUST_VERSION, ge=1, le=TRUST_VERSION)
    projects: dict[str, TrustedProject] = Field(default_factory=dict)


@dataclass(frozen=True)
class ProjectTrust:
    """Whether a project registry file may be used, and why.

    Attributes:
        path: The project registry file.
        status: ``absent`` (no file), ``own`` (it is the user's registry file), ``trusted``
            (its bytes hash as when trusted), ``untrusted`` (never trusted) or ``changed``
            (trusted once, edited since).
        sha256: The file's hash now (None when absent).
        trusted_at: When it was trusted (``trusted`` and ``changed``).
    """

    path: Path
    status: TrustStatus
    sha256: str | None = None
    trusted_at: datetime | None = None

    @property
    def usable(self) -> bool:
        """True when the file's tools may be listed, started and offered to a model."""
        return self.status in ("absent", "own", "trusted")

    def notice(self, command: str = "tooldeck trust") -> str | None:
        """What to tell a person about a file that is not used (None when it is used)."""
        if self.usable:
            return None
        ignored = "so none of its tools is listed, started or offered to a model"
        if self.status == "changed":
            when = f" on {self.trusted_at:%Y-%m-%d}" if self.trusted_at is not None else ""
            why = f"{self.path} changed since you trusted it{when}, {ignored}"
        else:
            why = f"{self.path} is not trusted, {ignored}"
        return f"{why}. Review it, then run `{command}` to use it (`{command} --revoke` withdraws trust)."


def file_sha256(data: bytes) -> str:
    """SHA-256 (hex) of a file's bytes."""
    return hashlib.sha256(data).hexdigest()


def _utc_now() -> datetime:
    return datetime.now(timezone.utc)


class TrustStore:
    """The user's trusted project registry files.

    Args:
        path: The trusted-projects file (``~/.config/tooldeck/trusted-projects.json``).
        lock_timeout: Seconds a write waits for another writer.
        clock: Current time, for ``trusted_at``.
    """

    def __init__(
        self, path: str | os.PathLike[str], *, lock_timeout: float = 30.0, clock: Callable[[], datetime] = _utc_now
    ) -> None:
        self.path = Path(path)
        self._lock_timeout = lock_timeout
        self._clock = clock
        self._cache: tuple[tuple[int, ...], TrustFile] | None = None

    def __repr__(self) -> str:
        return f"TrustStore({str(self.path)!r})"

    def load(self) -> TrustFile:
        """The file's content now (empty when it does not exist).

        Raises:
            TrustFileError: unreadable, invalid, or writable by every user.
        """
        key = _stat_key(self.path)
        if key is None:
            return TrustFile()
        cached = self._cache
        if cached is not None and cached[0] == key:
            return cached[1]
        content = _read(self.path)
        self._cache = (key, content)
        return content

    def get(self, project_file: Path) -> TrustedProject | None:
        """The trust recorded for ``project_file`` (any hash), or None."""
        return self.load().projects.get(_key(project_file))

    def trust(self, project_file: Path, sha256: str) -> TrustedProject:
        """Record that ``project_file`` is trusted as long as its bytes hash to ``sha256``."""
        record = TrustedProject(sha256=sha256, trusted_at=self._clock())
        self._update(lambda old: {**old, _key(project_file): record})
        return record

    def revoke(self, project_file: Path) -> TrustedProject | None:
        """Withdraw the trust of ``project_file``; returns what was recorded, if anything."""
        key = _key(project_file)
        removed: list[TrustedProject] = []

        def change(old: dict[str, TrustedProject]) -> dict[str, TrustedProject]:
            if key in old:
                removed.append(old[key])
            return {k: v for k, v in old.items() if k != key}

        self._update(change)
        return removed[0] if removed else None

    def _update(self, change: Callable[[dict[str, TrustedProject]], dict[str, TrustedProject]]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            with FileLock(str(self.path) + ".lock", timeout=self._lock_timeout):
                old = TrustFile() if _stat_key(self.path) is None else _read(self.path)
                new = TrustFile(projects=dict(sorted(change(dict(old.projects)).items())))
                atomic_write_text(self.path, new.model_dump_json(indent=2) + "\n", mode=0o600)
        except Timeout:
            raise StoreError(
                f"{self.path}: another tooldeck process held its lock for {self._lock_timeout:g} s; retry, or remove "
                f"{self.path}.lock if no tooldeck process is running"
            ) from None
        except OSError as exc:
            raise TrustFileError(self.path, f"cannot be written ({exc.strerror or exc})") from None
        self._cache = None


def _key(project_file: Path) -> str:
    return os.path.realpath(project_file)


def _stat_key(path: Path) -> tuple[int, ...] | None:
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise TrustFileError(path, f"cannot be read ({exc.strerror or exc})") from None
    if not stat.S_ISREG(info.st_mode):
        raise TrustFileError(path, "is not a regular file")
    if os.name != "nt" and info.st_mode & stat.S_IWOTH:
        raise TrustFileError(
            path,
            f"is writable by every user (mode {info.st_mode & 0o777:o}), so anyone could trust a project with it; "
            f"run: chmod 600 {path}",
        )
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def _read(path: Path) -> TrustFile:
    text = read_text(
        path, error=TrustFileError, max_bytes=_MAX_TRUST_BYTES, empty_example='{"version": 1, "projects": {}}'
    )
    if text is None:
        return TrustFile()
    return parse_document(text, path, TrustFile, error=TrustFileError, newest=TRUST_VERSION)


def trust_of(project_file: Path, data: bytes | None, store: TrustStore, *, own: Path | None = None) -> ProjectTrust:
    """The trust of ``project_file`` whose bytes are ``data`` (None: the file does not exist).

    Args:
        project_file: The project registry file.
        data: Its bytes, read once by the caller (the same bytes it will parse).
        store: The user's trusted projects.
        own: The user's own registry file: a project file that is that file is trusted.
    """
    if data is None:
        return ProjectTrust(project_file, "absent")
    digest = file_sha256(data)
    if own is not None and _key(project_file) == _key(own):
        return ProjectTrust(project_file, "own", digest)
    record = store.get(project_file)
    if record is None:
        return ProjectTrust(project_file, "untrusted", digest)
    status: TrustStatus = "trusted" if record.sha256 == digest else "changed"
    return ProjectTrust(project_file, status, digest, record.trusted_at)


def what_it_runs(config: ToolConfig) -> str:
    """What a person reviews of one tool before trusting its file: the program it runs, the
    server it starts or the address it calls (e.g. ``runs git log``)."""
    if config.cli is not None:
        return "runs " + shlex.join(config.cli.command)
    if config.binary is not None:
        return "runs " + config.binary.path
    if config.mcp is not None:
        return "starts " + shlex.join(config.mcp.command) if config.mcp.command else f"connects to {config.mcp.url}"
    if config.http is not None:
        return f"calls {config.http.base_url}"
    return "?"  # pragma: no cover - a config has exactly one adapter


def describe(trust: ProjectTrust) -> Mapping[str, Any]:
    """The trust as JSON-ready data (for ``--json``)."""
    return {
        "file": str(trust.path),
        "status": trust.status,
        "sha256": trust.sha256,
        "trusted_at": trust.trusted_at.isoformat() if trust.trusted_at is not None else None,
        "used": trust.usable,
    }
