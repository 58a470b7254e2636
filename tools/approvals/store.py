"""``ApprovalsStore``: the freedom level and the per-tool approvals, in one JSON file.

* Default file ``~/.config/tooldeck/approvals.json`` (``$XDG_CONFIG_HOME/tooldeck/approvals.json``
  when set, via :meth:`ApprovalsStore.from_env`). A missing file means "no level set, nothing
  approved".
* Each approval is bound to the tool's version hash (:func:`~tools.approvals.tool_version_hash`):
  it counts only while the tool hashes the same, so a tool whose configuration or schema
  changed must be approved again.
* Writes take a file lock (``approvals.json.lock``, the ``filelock`` library), read the file
  afresh, change it and replace it atomically, so concurrent writers (several CLIs, an
  orchestrator) lose nothing and a crash leaves the old file or the new one.
* An unreadable, oversized, non-JSON or invalid file is an :class:`ApprovalsFileError` naming
  the file and the problem, and is never overwritten. So is a file every user may write
  (anyone could approve tools with it). A symlink is followed: reads and writes go to the
  file it points to, and the link stays.

Example file::

    {
      "version": 1,
      "freedom": "medium",
      "approvals": {
        "weather": {"version_hash": "9f2c...64 hex...", "approved_at": "2026-05-01T10:00:00Z", "risk": "moderate"}
      }
    }
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from tools._datafile import parse_document, read_text
from tools._files import atomic_write_text
from tools._names import TOOL_NAME_RULE, is_tool_name
from tools.approvals.errors import ApprovalError, ApprovalsFileError, InvalidApprovalIdError
from tools.approvals.levels import FreedomLevel
from tools.manual import RiskLevel

APPROVALS_FILE = "approvals.json"
#: Schema version of approvals files this code writes (and the newest it reads).
APPROVALS_VERSION = 1
#: Larger files are refused unread (10,000 approvals take about 2 MB).
MAX_APPROVALS_BYTES = 5_000_000
_HASH_RULE = r"^[0-9a-f]{64}$"


class ToolApproval(BaseModel):
    """One stored approval: the tool may run without asking while it hashes ``version_hash``.

    Attributes:
        version_hash: The tool's :func:`~tools.approvals.tool_version_hash` when approved.
        approved_at: When (UTC).
        risk: The risk of the call or tool approved: the approval covers calls up to it
            (None, from older files: every call of that version).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    version_hash: str = Field(pattern=_HASH_RULE)
    approved_at: datetime
    risk: RiskLevel | None = None


class ApprovalsFile(BaseModel):
    """The content of an approvals file: schema version, freedom level, approvals by tool.

    Attributes:
        version: The file's schema version.
        freedom: The stored freedom level (None: not set; the policy's default applies).
        approvals: Approvals by tool name.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    version: int = Field(default=APPROVALS_VERSION, ge=1, le=APPROVALS_VERSION)
    freedom: FreedomLevel | None = None
    approvals: dict[str, ToolApproval] = Field(default_factory=dict)

    @field_validator("approvals")
    @classmethod
    def _tool_names(cls, value: dict[str, ToolApproval]) -> dict[str, ToolApproval]:
        for key in value:
            if not is_tool_name(key):
                raise ValueError(f"{key[:80]!r} is not a tool name (names match {TOOL_NAME_RULE})")
        return value

    def to_json_text(self) -> str:
        """Human-readable JSON (indent 2, tools sorted) with a trailing newline."""
        doc: dict[str, Any] = {"version": self.version}
        if self.freedom is not None:
            doc["freedom"] = self.freedom.value
        doc["approvals"] = {
            key: self.approvals[key].model_dump(mode="json", exclude_none=True) for key in sorted(self.approvals)
        }
        return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def check_approval_id(tool_id: object) -> str:
    """``tool_id`` when it is a tool name, else :class:`InvalidApprovalIdError`."""
    if is_tool_name(tool_id):
        return tool_id  # type: ignore[return-value]
    raise InvalidApprovalIdError(
        f"approval id {str(tool_id)[:80]!r} is not a tool name; approve a tool by the name it is "
        f"registered under (names match {TOOL_NAME_RULE}; see `tooldeck list`)"
    )


def _utc_now() -> datetime:
    return datetime.now(timezone.utc)


class ApprovalsStore:
    """The approvals file: the stored freedom level and the per-tool approvals.

    Reads are fresh (a changed file is re-read; an unchanged one is served from memory after
    one ``stat``); writes are locked and atomic.

    Args:
        path: The file (default ``~/.config/tooldeck/approvals.json``; use :meth:`from_env`
            to honour ``XDG_CONFIG_HOME``).
        lock_timeout: Seconds a write waits for another writer's lock.
        clock: Current time, for ``approved_at`` (injectable for tests).
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        lock_timeout: float = 30.0,
        clock: Callable[[], datetime] = _utc_now,
    ) -> None:
        self.path = Path(path) if path is not None else Path.home() / ".config" / "tooldeck" / APPROVALS_FILE
        self._lock_timeout = lock_timeout
        self._clock = clock
        self._cache: tuple[tuple[int, ...] | None, ApprovalsFile] | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> ApprovalsStore:
        """The user's approvals file for environment ``env`` (``XDG_CONFIG_HOME``, ``HOME``)."""
        from tools.store.registry_store import user_config_dir

        return cls(user_config_dir(env) / APPROVALS_FILE)

    def __repr__(self) -> str:
        return f"ApprovalsStore({str(self.path)!r})"

    @property
    def location(self) -> str:
        """The file's path, for people (see :class:`~tools.approvals.ApprovalsBackend`)."""
        return str(self.path)

    # ------------------------------------------------------------------ reading

    def load(self) -> ApprovalsFile:
        """The file's content now (an empty one when the file does not exist).

        Raises:
            ApprovalsFileError: the file is unreadable, too large, not JSON, invalid, not a
                regular file, or writable by every user.
        """
        target = self._target()
        key = _stat_key(target, self.path)
        cached = self._cache
        if cached is not None and key is not None and cached[0] == key:
            return cached[1]
        content = ApprovalsFile() if key is None else _read(target, self.path)
        self._cache = (key, content)
        return content

    def freedom(self) -> FreedomLevel | None:
        """The stored freedom level, or None when the file sets none."""
        return self.load().freedom

    def get(self, tool_id: str) -> ToolApproval | None:
        """The stored approval of ``tool_id`` (whatever its version), or None."""
        return self.load().approvals.get(tool_id)

    def approvals(self) -> dict[str, ToolApproval]:
        """Every stored approval by tool name (a fresh dict, sorted by name)."""
        stored = self.load().approvals
        return {key: stored[key] for key in sorted(stored)}

    def is_approved(self, tool_id: str, version_hash: str) -> bool:
        """True when ``tool_id`` is approved for exactly ``version_hash``."""
        approval = self.get(tool_id)
        return approval is not None and approval.version_hash == version_hash

    # ------------------------------------------------------------------ writing

    def approve(self, tool_id: str, version_hash: str, *, risk: RiskLevel | None = None) -> ToolApproval:
        """Store (or replace) the approval of ``tool_id`` for ``version_hash``.

        Raises:
            InvalidApprovalIdError: ``tool_id`` is not a tool name.
            ApprovalError: ``version_hash`` is not a SHA-256 hex digest, or the lock timed out.
            ApprovalsFileError: the existing file is unusable (nothing is written).
        """
        check_approval_id(tool_id)
        try:
            approval = ToolApproval(version_hash=version_hash, approved_at=self._clock(), risk=risk)
        except ValidationError:
            raise ApprovalError(
                f"version hash {str(version_hash)[:80]!r} of tool {tool_id!r} is not a SHA-256 hex digest "
                "(64 characters 0-9a-f); take it from the refusal's details or from tool_version_hash(tool)"
            ) from None
        self.update(
            lambda old: old.model_copy(update={"approvals": {**old.approvals, tool_id: approval}}),
        )
        return approval

    def revoke(self, tool_id: str) -> ToolApproval | None:
        """Remove the approval of ``tool_id``; returns it, or None when there was none.

        Raises:
            InvalidApprovalIdError: ``tool_id`` is not a tool name.
            ApprovalsFileError: the existing file is unusable (nothing is written).
        """
        check_approval_id(tool_id)
        removed: list[ToolApproval] = []

        def change(old: ApprovalsFile) -> ApprovalsFile:
            if tool_id not in old.approvals:
                return old
            removed.append(old.approvals[tool_id])
            return old.model_copy(update={"approvals": {k: v for k, v in old.approvals.items() if k != tool_id}})

        self.update(change)
        return removed[0] if removed else None

    def set_freedom(self, level: FreedomLevel | str | None) -> FreedomLevel | None:
        """Store the freedom level (None removes it); returns the level stored.

        Raises:
            InvalidFreedomLevelError: ``level`` is not ``low``, ``medium`` or ``high``.
            ApprovalsFileError: the existing file is unusable (nothing is written).
        """
        parsed = None if level is None else FreedomLevel.parse(level)
        self.update(lambda old: old.model_copy(update={"freedom": parsed}))
        return parsed

    def update(self, change: Callable[[ApprovalsFile], ApprovalsFile]) -> ApprovalsFile:
        """Read the file under its lock, apply ``change``, write the result atomically.

        Nothing is written when ``change`` returns its argument unchanged.

        Raises:
            ApprovalsFileError: the existing file is unusable (nothing is written).
            ApprovalError: another writer held the lock for longer than ``lock_timeout``.
        """
        target = self._target()
        target.parent.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(target) + ".lock", timeout=self._lock_timeout)
        try:
            with lock:
                key = _stat_key(target, self.path)
                old = ApprovalsFile() if key is None else _read(target, self.path)
                new = change(old)
                if new is not old:
                    atomic_write_text(target, new.to_json_text())
        except Timeout:
            raise ApprovalError(
                f"approvals file {self.path}: another tooldeck process held its lock for {self._lock_timeout:g} s; "
                f"retry, or remove {target}.lock if no tooldeck process is running"
            ) from None
        except OSError as exc:
            raise ApprovalsFileError(self.path, f"cannot be written ({exc.strerror or exc})") from None
        self._cache = None
        return new

    def _target(self) -> Path:
        """The file reads and writes go to: the path, or the file a symlink points to."""
        path = self.path
        if not path.is_symlink():
            return path
        target = Path(os.path.realpath(path))
        if not target.exists():
            raise ApprovalsFileError(
                path, f"is a symlink to {target}, which does not exist; create that file or remove the link"
            )
        return target


def _stat_key(target: Path, shown: Path) -> tuple[int, ...] | None:
    """A fingerprint of the file (None when missing); refuses what must not be read."""
    try:
        info = os.stat(target)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ApprovalsFileError(shown, f"cannot be read ({exc.strerror or exc})") from None
    if stat.S_ISDIR(info.st_mode):
        raise ApprovalsFileError(shown, "is a directory, not a file")
    if not stat.S_ISREG(info.st_mode):
        raise ApprovalsFileError(shown, "is not a regular file (a pipe, socket or device)")
    if os.name != "nt" and info.st_mode & stat.S_IWOTH:
        raise ApprovalsFileError(
            shown,
            f"is writable by every user (mode {info.st_mode & 0o777:o}), so anyone could approve tools; "
            f"run: chmod o-w {target}",
        )
    if info.st_size > MAX_APPROVALS_BYTES:
        raise ApprovalsFileError(shown, f"is larger than {MAX_APPROVALS_BYTES} bytes ({info.st_size})")
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def _read(target: Path, shown: Path) -> ApprovalsFile:
    """Parse the approvals file at ``target`` (``shown`` is the path named in errors)."""
    text = read_text(
        target,
        error=ApprovalsFileError,
        max_bytes=MAX_APPROVALS_BYTES,
        empty_example='{"version": 1, "approvals": {}}',
        shown=shown,
    )
    if text is None:
        return ApprovalsFile()
    return parse_document(text, shown, ApprovalsFile, error=ApprovalsFileError, newest=APPROVALS_VERSION)
