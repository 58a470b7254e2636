"""The metrics file: its JSON format, reading it strictly, and moving a corrupt one aside.

Format (``version`` 1)::

    {"version": 1, "updated_at": "2026-01-01T12:00:00+00:00",
     "tools": {"weather": {"calls": 12, "successes": 11, "failures": 1,
                           "total_duration_ms": 130.2, "success_duration_ms": 120.0,
                           "error_types": {"timeout": 1}, "last_success": "...",
                           "last_failure": "...", "last_error": "...",
                           "last_error_type": "timeout",
                           "success_rate": 0.9167, "avg_duration_ms": 10.909}}}

``success_rate`` and ``avg_duration_ms`` are written for people reading the file and
ignored when it is read back.
"""

from __future__ import annotations

import glob
import json
import os
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tools.errors import TooldeckError
from tools.metrics import ToolStats

FORMAT_VERSION = 1


class MetricsFileError(TooldeckError):
    """The metrics file cannot be used: corrupt, from a newer tooldeck, or locked too long.

    Attributes:
        path: The file concerned.
        reason: ``"corrupt"`` (not valid metrics JSON), ``"newer"`` (a newer format
            version: never overwritten) or ``"locked"`` (the lock was held too long).
    """

    def __init__(self, message: str, *, path: Path, reason: Literal["corrupt", "newer", "locked"]) -> None:
        super().__init__(message)
        self.path = path
        self.reason = reason


class _Entry(BaseModel):
    model_config = ConfigDict(extra="ignore", defer_build=True)

    calls: int = Field(0, ge=0)
    successes: int = Field(0, ge=0)
    failures: int = Field(0, ge=0)
    total_duration_ms: float = Field(0.0, ge=0, allow_inf_nan=False)
    success_duration_ms: float = Field(0.0, ge=0, allow_inf_nan=False)
    error_types: dict[str, int] = Field(default_factory=dict)
    last_success: str | None = None
    last_failure: str | None = None
    last_error: str | None = None
    last_error_type: str | None = None


class _Document(BaseModel):
    model_config = ConfigDict(extra="ignore", defer_build=True)

    version: int
    tools: dict[str, _Entry]


def read_metrics(path: Path) -> dict[str, ToolStats]:
    """Every entry of the file at ``path`` (empty when there is no file).

    Raises:
        MetricsFileError: The file is not valid metrics JSON, or was written by a newer
            format version.
        OSError: The file exists but cannot be read.
    """
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}
    try:
        parsed = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise MetricsFileError(f"metrics file {path} is not valid JSON ({exc})", path=path, reason="corrupt") from None
    if isinstance(parsed, dict) and isinstance(parsed.get("version"), int) and parsed["version"] > FORMAT_VERSION:
        raise MetricsFileError(
            f"metrics file {path} has format version {parsed['version']}, newer than this tooldeck's "
            f"({FORMAT_VERSION}); upgrade tooldeck or point MetricsStore at another file",
            path=path,
            reason="newer",
        )
    try:
        document = _Document.model_validate(parsed)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(top level)"
        raise MetricsFileError(
            f"metrics file {path} is not a metrics file: {where}: {first['msg']} ({exc.error_count()} problem(s))",
            path=path,
            reason="corrupt",
        ) from None
    return {name: _stats(entry) for name, entry in document.tools.items()}


def _stats(entry: _Entry) -> ToolStats:
    return ToolStats(
        calls=entry.calls,
        successes=entry.successes,
        failures=entry.failures,
        total_duration_ms=entry.total_duration_ms,
        error_types=Counter({k: v for k, v in entry.error_types.items() if v > 0}),
        success_duration_ms=entry.success_duration_ms,
        last_success=entry.last_success,
        last_failure=entry.last_failure,
        last_error=entry.last_error,
        last_error_type=entry.last_error_type,
    )


def dump_metrics(stats: dict[str, ToolStats]) -> str:
    """The file's text for ``stats`` (sorted, indented, one stable layout)."""
    tools: dict[str, Any] = {}
    for name in sorted(stats):
        figures = stats[name]
        tools[name] = {
            "calls": figures.calls,
            "successes": figures.successes,
            "failures": figures.failures,
            "total_duration_ms": round(figures.total_duration_ms, 6),
            "success_duration_ms": round(figures.success_duration_ms, 6),
            "error_types": dict(sorted(figures.error_types.items())),
            "last_success": figures.last_success,
            "last_failure": figures.last_failure,
            "last_error": figures.last_error,
            "last_error_type": figures.last_error_type,
            "success_rate": round(figures.success_rate, 4),
            "avg_duration_ms": round(figures.avg_duration_ms, 3),
        }
    document = {"version": FORMAT_VERSION, "updated_at": _now(), "tools": tools}
    return json.dumps(document, indent=1, ensure_ascii=False, allow_nan=False) + "\n"


def move_aside(path: Path) -> Path:
    """Rename a corrupt file to ``<name>.corrupt-<UTC time>-<pid>`` beside it; returns the new path."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
    aside = path.with_name(f"{path.name}.corrupt-{stamp}-{os.getpid()}")
    os.replace(path, aside)
    return aside


def remove_stale_temp_files(path: Path) -> None:
    """Delete temp files that a writer killed mid-write left beside ``path``.

    Call only while holding the file's lock: every writer of ``path`` holds it while its
    temp file exists, so any temp file seen then belongs to a writer that died.
    """
    try:
        leftovers = list(path.parent.glob(f".{glob.escape(path.name)}.*.tmp"))
    except OSError:
        return
    for leftover in leftovers:
        try:
            leftover.unlink()
        except OSError:
            continue


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")
