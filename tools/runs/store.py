"""Where run records live: the `RunStore` interface and its file implementation.

`RunStore` is four methods (``save``, ``get``, ``list``, ``prune``). `FileRunStore`, the
default, keeps one JSON file per run under ``<data dir>/runs/`` (``TOOLDECK_DATA_DIR``, else
``$XDG_DATA_HOME/tooldeck``, else ``~/.local/share/tooldeck``), each written atomically
(a reader never sees half a record) with mode 0600, bounded by count and by age.
`~tools.runs.PostgresRunStore` (``TOOLDECK_DATABASE_URL``, for several machines) keeps the
same contract:

* ``save`` replaces the record with the same id (a paused run resumed is one record whose
  status moves on); it stores what it is given, so redact first (`redacted`).
* ``get`` returns None for an unknown id, raises `RunStoreError` for a record it cannot read.
* ``list`` returns records newest first (by ``updated_at``), optionally of one status, at
  most ``limit`` (None: all); unreadable records are skipped with a warning.
* ``prune`` removes records past the store's bounds and returns how many.
"""

from __future__ import annotations

import builtins
import contextlib
import json
import logging
import os
import re
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from pydantic import ValidationError

from tools._files import atomic_write_text
from tools.errors import TooldeckError
from tools.runs.model import FORMAT_VERSION, RunRecord, RunStatus

if TYPE_CHECKING:
    from tools.postgres import Database

__all__ = [
    "DEFAULT_MAX_AGE",
    "DEFAULT_MAX_RUNS",
    "FileRunStore",
    "RunStore",
    "RunStoreError",
    "data_dir_from_env",
    "run_store_from_env",
]

logger = logging.getLogger(__name__)

DEFAULT_MAX_RUNS = 500
DEFAULT_MAX_AGE = timedelta(days=30)
#: Largest record file read back (records are bounded far below this).
MAX_RECORD_BYTES = 20_000_000
_ID = re.compile(r"^[A-Za-z0-9_-]{1,80}$")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _escaped(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


class RunStoreError(TooldeckError):
    """A run record cannot be read or written; the message names the file and the fix."""


@runtime_checkable
class RunStore(Protocol):
    """Keeps run records (see the module docstring for the contract)."""

    def save(self, record: RunRecord) -> None:
        """Store ``record``, replacing the one with its id.

        Raises:
            RunStoreError: it could not be stored.
        """
        ...

    def get(self, run_id: str) -> RunRecord | None:
        """The record of ``run_id``, or None.

        Raises:
            RunStoreError: the record exists but cannot be read.
        """
        ...

    def list(self, *, status: RunStatus | None = None, limit: int | None = 50) -> list[RunRecord]:
        """Records newest first, of ``status`` only when given, at most ``limit``."""
        ...

    def prune(self) -> int:
        """Remove records past the store's bounds; how many were removed."""
        ...


def data_dir_from_env(env: Mapping[str, str]) -> Path:
    """tooldeck's data directory: ``TOOLDECK_DATA_DIR``, else ``$XDG_DATA_HOME/tooldeck``,
    else ``~/.local/share/tooldeck`` (the orchestrator's knowledge, paused runs and runs)."""
    given = env.get("TOOLDECK_DATA_DIR", "").strip()
    if given:
        return Path(given).expanduser()
    xdg = env.get("XDG_DATA_HOME", "").strip()
    if xdg:
        return Path(xdg) / "tooldeck"
    home = env.get("HOME", "").strip()
    return (Path(home) if home else Path.home()) / ".local" / "share" / "tooldeck"


def run_store_from_env(
    env: Mapping[str, str],
    data_dir: Path | None = None,
    *,
    database_url: str | None = None,
    database: Database | None = None,
) -> RunStore:
    """The run store an entry point uses: the table ``tooldeck_runs`` of the PostgreSQL
    database of ``database_url`` (else ``TOOLDECK_DATABASE_URL`` in ``env``) or ``database``,
    so every replica sees every run; else the files under ``<data dir>/runs`` (``data_dir``
    when given, else `data_dir_from_env`). The one place that picks a `RunStore` for the
    CLIs (``python -m orchestrator``, ``tooldeck runs``).

    Raises:
        RunStoreError: ``TOOLDECK_DATABASE_URL`` is set but not a ``postgresql://`` URL.
    """
    from tools.postgres import DATABASE_URL_VARIABLE, check_database_url

    url = database_url or env.get(DATABASE_URL_VARIABLE, "").strip() or None
    if database is not None or url is not None:
        from tools.runs.postgres_store import PostgresRunStore

        try:
            return PostgresRunStore(None if database is not None else check_database_url(url), database=database)
        except ValueError as exc:
            raise RunStoreError(str(exc)) from None
    return FileRunStore((data_dir if data_dir is not None else data_dir_from_env(env)) / "runs")


class FileRunStore:
    """Run records as JSON files in one directory.

    Args:
        directory: Where the files go (created on the first save).
        max_runs: Most records kept; the oldest go first (records of paused runs last).
        max_age: Records not updated for longer are removed.
        now: The current UTC time (injectable for tests).
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        *,
        max_runs: int = DEFAULT_MAX_RUNS,
        max_age: timedelta = DEFAULT_MAX_AGE,
        now: Callable[[], datetime] = lambda: datetime.now(timezone.utc),
    ) -> None:
        if max_runs < 1:
            raise ValueError(f"max_runs must be at least 1, got {max_runs}")
        self.directory = Path(directory)
        self.max_runs = max_runs
        self.max_age = max_age
        self._now = now

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> FileRunStore:
        """The store in ``<data dir>/runs`` (see `data_dir_from_env`)."""
        return cls(data_dir_from_env(env) / "runs")

    def __repr__(self) -> str:
        return f"FileRunStore({str(self.directory)!r})"

    def _path(self, run_id: str) -> Path:
        return self.directory / f"{check_run_id(run_id)}.json"

    def save(self, record: RunRecord) -> None:
        """Write ``record`` atomically (mode 0600), then prune."""
        path = self._path(record.id)
        try:
            atomic_write_text(path, record_text(record), mode=0o600)
        except OSError as exc:
            raise RunStoreError(
                f"cannot write the run record {path} ({exc.strerror or exc}); set TOOLDECK_DATA_DIR to a writable "
                "directory, or turn recording off (--no-record)"
            ) from None
        self.prune()

    def get(self, run_id: str) -> RunRecord | None:
        """The record of ``run_id`` (None when there is none)."""
        path = self._path(run_id)
        try:
            raw = _read(path)
        except FileNotFoundError:
            return None
        return _parse(path, raw)

    def list(self, *, status: RunStatus | None = None, limit: int | None = 50) -> list[RunRecord]:
        """Records newest first (see `RunStore.list`)."""
        records: list[RunRecord] = []
        for path in self._files():
            try:
                record = _parse(path, _read(path))
            except (OSError, RunStoreError) as exc:
                logger.warning("skipping run record %s: %s", path.name, exc)
                continue
            if status is None or record.status == status:
                records.append(record)
        records.sort(key=lambda r: r.updated_at, reverse=True)
        return records if limit is None else records[:limit]

    def prune(self) -> int:
        """Remove records older than ``max_age``, then the oldest past ``max_runs``."""
        entries: list[tuple[float, Path]] = []
        for path in self._files():
            with contextlib.suppress(OSError):
                entries.append((path.stat().st_mtime, path))
        cutoff = (self._now() - self.max_age).timestamp()
        doomed = [path for mtime, path in entries if mtime < cutoff]
        kept = [entry for entry in entries if entry[0] >= cutoff]
        excess = len(kept) - self.max_runs
        if excess > 0:  # finished runs go first, oldest first; paused ones wait for a person
            ranked = sorted(kept, key=lambda entry: (_looks_paused(entry[1]), entry[0]))
            doomed += [path for _, path in ranked[:excess]]
        removed = 0
        for path in doomed:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
                removed += 1
        return removed

    def _files(self) -> builtins.list[Path]:
        try:
            return [p for p in self.directory.iterdir() if p.suffix == ".json" and not p.name.startswith(".")]
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise RunStoreError(f"cannot list the run records in {self.directory} ({exc.strerror or exc})") from None


def _read(path: Path) -> bytes:
    with path.open("rb") as handle:
        raw = handle.read(MAX_RECORD_BYTES + 1)
    if len(raw) > MAX_RECORD_BYTES:
        raise RunStoreError(f"run record {path} is larger than {MAX_RECORD_BYTES} bytes; not a record tooldeck wrote")
    return raw


def _parse(path: Path, raw: bytes) -> RunRecord:
    return parse_record(raw, where=f"run record {path}", run_id=path.stem)


def check_run_id(run_id: str) -> str:
    """``run_id`` when it is a run id (a file name: letters, digits, ``_`` and ``-``), else
    `RunStoreError` (shared by the run stores)."""
    if not isinstance(run_id, str) or not _ID.match(run_id):
        raise RunStoreError(f"{str(run_id)[:100]!r} is not a run id (letters, digits, _ and - only)")
    return run_id


def record_text(record: RunRecord) -> str:
    """The stored form of ``record``: indented JSON text, lone surrogates as JSON escapes (UTF-8
    cannot carry them; the escape reads back the same), NUL and other controls escaped."""
    text = json.dumps(record.model_dump(mode="json"), ensure_ascii=False, indent=1) + "\n"
    return _SURROGATE.sub(_escaped, text)


def parse_record(raw: bytes | str, *, where: str, run_id: str) -> RunRecord:
    """The record `record_text` wrote, checked: JSON, not from a newer tooldeck, a valid
    record, of run ``run_id``.

    Args:
        raw: The stored text.
        where: How errors name it (``run record /data/runs/run_x.json``).
        run_id: The run it is stored as.

    Raises:
        RunStoreError: any of the checks fails (the message names ``where`` and the fix).
    """
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise RunStoreError(f"{where} is not valid JSON ({exc}); delete it or restore it") from None
    if isinstance(data, dict) and isinstance(data.get("version"), int) and data["version"] > FORMAT_VERSION:
        raise RunStoreError(
            f"{where} has format version {data['version']}, newer than this tooldeck's ({FORMAT_VERSION}); "
            "upgrade tooldeck to read it"
        )
    try:
        record = RunRecord.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "(top level)"
        raise RunStoreError(f"{where} is not a run record: {field}: {first['msg']}") from None
    if record.id != run_id:
        raise RunStoreError(f"{where} holds run {record.id!r}, not the one its name says")
    return record


def _looks_paused(path: Path) -> bool:
    """Whether a record file is of a paused run, from its first bytes (no full parse)."""
    try:
        with path.open("rb") as handle:
            head = handle.read(512)
    except OSError:
        return False
    return b'"status": "paused"' in head
