"""The metrics files: the snapshot's JSON format, reading it strictly, moving a bad one aside.

The snapshot (``metrics.json``, ``version`` 2) holds every tool's figures and hourly buckets
as of its last compaction, and names the append log that continues it::

    {"version": 2, "log": "metrics.json.9f3a2c1d0b7e4a65.log", "updated_at": "2026-01-01T12:00:00+00:00",
     "tools": {"weather": {"calls": 12, "successes": 11, "failures": 1,
                           "total_duration_ms": 130.2, "success_duration_ms": 120.0,
                           "error_types": {"timeout": 1}, "last_success": "...",
                           "last_failure": "...", "last_error": "...",
                           "last_error_type": "timeout",
                           "success_rate": 0.9167, "avg_duration_ms": 10.909}},
     "series": {"weather": {"2026-01-01T11": {"calls": 12, "failures": 1, "duration_ms": 130.2,
                                             "max_ms": 40.1, "error_types": {"timeout": 1},
                                             "histogram": [0, 0, 3, 8, 0, 1, 0, ...]}}}}

``success_rate`` and ``avg_duration_ms`` are written for people reading the file and
ignored when it is read back. Version 1 files (no ``log``, no ``series``) are read too; the
first flush rewrites them as version 2. Each line of the log is one flush's deltas in the
same shapes: ``{"tools": {...}, "series": {...}}``.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError, field_validator
from pydantic_core import to_json

from tools.errors import TooldeckError
from tools.metrics import ToolStats
from tools.telemetry._buckets import Bucket, Series
from tools.telemetry.series import HISTOGRAM_SLOTS

FORMAT_VERSION = 2
#: The start of a version-2 snapshot as written (the log's name is read from it cheaply).
_HEAD = re.compile(rb'^\{\s*"version":\s*(\d+),\s*"log":\s*"([^"\\]{1,300})"')


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


@dataclass
class Figures:
    """Every tool's all-time figures and hourly buckets."""

    tools: dict[str, ToolStats] = field(default_factory=dict)
    series: Series = field(default_factory=dict)


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


class _Bucket(BaseModel):
    model_config = ConfigDict(extra="ignore", defer_build=True)

    calls: int = Field(0, ge=0)
    failures: int = Field(0, ge=0)
    duration_ms: float = Field(0.0, ge=0, allow_inf_nan=False)
    max_ms: float = Field(0.0, ge=0, allow_inf_nan=False)
    error_types: dict[str, Annotated[int, Field(ge=0)]] = Field(default_factory=dict)
    histogram: list[Annotated[int, Field(ge=0)]] = Field(default_factory=lambda: [0] * HISTOGRAM_SLOTS)

    @field_validator("histogram")
    @classmethod
    def _slots(cls, value: list[int]) -> list[int]:
        if len(value) != HISTOGRAM_SLOTS:
            raise ValueError(f"a latency histogram has {HISTOGRAM_SLOTS} slots, not {len(value)}")
        return value


_Hour = Annotated[str, StringConstraints(pattern=r"^\d{4}-\d\d-\d\dT\d\d$")]


class _Delta(BaseModel):
    """One flush's deltas (a line of the log)."""

    model_config = ConfigDict(extra="ignore", defer_build=True)

    tools: dict[str, _Entry] = Field(default_factory=dict)
    series: dict[str, dict[_Hour, _Bucket]] = Field(default_factory=dict)


class _Document(_Delta):
    """The snapshot."""

    version: int
    tools: dict[str, _Entry]
    log: str | None = None


def read_snapshot(path: Path) -> tuple[Figures, str | None]:
    """The snapshot's figures and the name of its log (None: no log yet, a version-1 file).

    Raises:
        MetricsFileError: not valid metrics JSON (``corrupt``), a newer format (``newer``),
            or a log name that is not one of ours (``corrupt``: never followed).
        OSError: the file exists but cannot be read.
    """
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return Figures(), None
    try:
        document = _Document.model_validate_json(raw)
    except ValidationError as exc:
        _raise_newer(path, raw)
        raise _invalid(path, exc) from None
    if document.version > FORMAT_VERSION:
        raise _newer(path, document.version)
    if document.log is not None and not is_log_name(path, document.log):
        raise _corrupt(path, f"names a log {document.log[:80]!r} that is not one of its own")
    return _figures(document), document.log


def _raise_newer(path: Path, raw: bytes) -> None:
    """A file that does not validate may be a newer format: say so rather than "corrupt"."""
    try:
        parsed = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return
    if isinstance(parsed, dict) and isinstance(parsed.get("version"), int) and parsed["version"] > FORMAT_VERSION:
        raise _newer(path, parsed["version"])


def snapshot_log(path: Path) -> tuple[str | None, bool]:
    """The log named at the start of the snapshot as written, without reading all of it,
    and whether the snapshot exists. None when it names none (a version-1 file, or not
    ours: a full read says which).

    Raises:
        MetricsFileError: the snapshot is from a newer format.
        OSError: it exists but cannot be read.
    """
    try:
        with path.open("rb") as handle:
            head = handle.read(512)
    except FileNotFoundError:
        return None, False
    match = _HEAD.match(head)
    if match is None:
        return None, True
    if int(match.group(1)) > FORMAT_VERSION:
        raise _newer(path, int(match.group(1)))
    name = match.group(2).decode("utf-8", "replace")
    return (name if is_log_name(path, name) else None), True


def is_log_name(path: Path, name: str) -> bool:
    """Whether ``name`` is a log of ``path`` (``<name>.<16 hex>.log``, in its directory)."""
    return re.fullmatch(re.escape(path.name) + r"\.[0-9a-f]{16}\.log", name) is not None


def parse_delta(path: Path, line: bytes) -> Figures:
    """One log line's figures.

    Raises:
        MetricsFileError: the line is not a valid delta (``corrupt``).
    """
    try:
        return _figures(_Delta.model_validate_json(line))
    except ValidationError as exc:
        raise _invalid(path, exc) from None


def _invalid(path: Path, exc: ValidationError) -> MetricsFileError:
    first = exc.errors(include_url=False)[0]
    if first["type"] == "json_invalid":
        return _corrupt(path, f"is not valid JSON ({first['msg']})")
    where = ".".join(str(part) for part in first["loc"]) or "(top level)"
    return _corrupt(path, f"is not a metrics file: {where}: {first['msg']} ({exc.error_count()} problem(s))")


def _figures(document: _Delta) -> Figures:
    series: Series = {}
    for tool, hours in document.series.items():
        series[tool] = {hour: Bucket.from_json(bucket) for hour, bucket in hours.items()}
    return Figures({name: _stats(entry) for name, entry in document.tools.items()}, series)


def _corrupt(path: Path, problem: str) -> MetricsFileError:
    return MetricsFileError(f"metrics file {path} {problem}", path=path, reason="corrupt")


def _newer(path: Path, version: int) -> MetricsFileError:
    return MetricsFileError(
        f"metrics file {path} has format version {version}, newer than this tooldeck's "
        f"({FORMAT_VERSION}); upgrade tooldeck or point MetricsStore at another file",
        path=path,
        reason="newer",
    )


def _stats(entry: _Entry) -> ToolStats:
    errors: Counter[str] = Counter()
    dict.update(errors, {k: v for k, v in entry.error_types.items() if v > 0})  # Counter's own update is slow
    return ToolStats(
        calls=entry.calls,
        successes=entry.successes,
        failures=entry.failures,
        total_duration_ms=entry.total_duration_ms,
        error_types=errors,
        success_duration_ms=entry.success_duration_ms,
        last_success=entry.last_success,
        last_failure=entry.last_failure,
        last_error=entry.last_error,
        last_error_type=entry.last_error_type,
    )


def _entry(figures: ToolStats, *, readable: bool) -> dict[str, Any]:
    entry: dict[str, Any] = {
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
    }
    if readable:
        entry["success_rate"] = round(figures.success_rate, 4)
        entry["avg_duration_ms"] = round(figures.avg_duration_ms, 3)
    return entry


def _series_json(series: Series) -> dict[str, Any]:
    return {
        tool: {hour: series[tool][hour].to_json() for hour in sorted(series[tool])}
        for tool in sorted(series)
        if series[tool]
    }


def dump_snapshot(figures: Figures, log: str) -> str:
    """The snapshot's text (sorted, indented, one stable layout; ``log`` comes second so
    that :func:`snapshot_log` finds it in the first bytes)."""
    tools = {name: _entry(figures.tools[name], readable=True) for name in sorted(figures.tools)}
    document = {
        "version": FORMAT_VERSION,
        "log": log,
        "updated_at": _now(),
        "tools": tools,
        "series": _series_json(figures.series),
    }
    return to_json(document, indent=1).decode("utf-8") + "\n"  # pydantic's Rust encoder: 20x json's with indent


def dump_delta(figures: Figures) -> bytes:
    """One log line (compact JSON and a newline) for one flush's deltas."""
    document = {
        "tools": {name: _entry(stats, readable=False) for name, stats in figures.tools.items()},
        "series": _series_json(figures.series),
    }
    return to_json(document) + b"\n"


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
    import glob

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
