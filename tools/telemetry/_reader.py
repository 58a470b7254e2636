"""Reading a metrics file (snapshot + log) consistently, and keeping what was read.

Readers take no lock: a compaction replaces the snapshot by a rename, so a read that saw
the snapshot change while it read the log starts again (and, after a few tries, reads
under the lock). The parsed snapshot is kept while it is unchanged, and only the lines
appended to its log since the last read are parsed: a console polling a file of 10,000
tools parses it once. A compaction by this process hands over what it wrote, so its next
compaction reads only the log.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tools.metrics import BUCKETS, OVERFLOW_BUCKET, ToolStats
from tools.telemetry._batch import buckets_in
from tools.telemetry._buckets import merge_series
from tools.telemetry._file import Figures, MetricsFileError, move_aside, read_snapshot, snapshot_log
from tools.telemetry._log import read_log

logger = logging.getLogger("tools.telemetry.store")

_ATTEMPTS = 5
_StatKey = tuple[int, int, int]


class FileReader:
    """The figures of one metrics file, read consistently and kept between reads.

    Args:
        path: The snapshot.
        max_tools: Entries kept when folding the log in (the rest go to the overflow entry).
        locked: Enters the file lock (the last resort when compactions keep racing a read).
    """

    def __init__(self, path: Path, max_tools: int, locked: Callable[[], contextlib.AbstractContextManager[Any]]):
        self.path = path
        self._max_tools = max_tools
        self._locked = locked
        #: (snapshot stat, its log, offset read up to, snapshot + log up to there)
        self._cache: tuple[_StatKey, Path | None, int, Figures] | None = None

    def view(self) -> Figures:
        """The file's figures, shared: the caller copies what it hands out, never mutates.

        Raises:
            MetricsFileError: the snapshot or its log is corrupt, or from a newer tooldeck.
            OSError: a file cannot be read.
        """
        for _ in range(_ATTEMPTS):
            before = stat_key(self.path)
            if before is None:
                self._cache = None
                return Figures()
            figures = self._read(before, lenient=False)
            if stat_key(self.path) == before:
                return figures
            self._cache = None
        with self._locked():  # compactions kept racing the reads: read under the lock
            return self.take()

    def take(self) -> Figures:
        """The file's figures for a compaction (lock held), owned by the caller. A corrupt
        snapshot or log is moved aside with an ERROR and left out, never silently dropped."""
        before = stat_key(self.path)
        figures = Figures() if before is None else self._read(before, lenient=True)
        self._cache = None  # handed over: the caller changes it
        return figures

    def remember(self, figures: Figures, log: str) -> None:
        """A compaction just wrote ``figures`` to the snapshot, naming an empty ``log``."""
        key = stat_key(self.path)
        self._cache = None if key is None else (key, self.path.parent / log, 0, figures)

    def forget(self) -> None:
        """Read everything again next time."""
        self._cache = None

    def _read(self, key: _StatKey, *, lenient: bool) -> Figures:
        cache = self._cache
        if cache is not None and cache[0] == key:
            _, log, offset, figures = cache
        else:
            figures, name = self._snapshot(lenient)
            log, offset = (self.path.parent / name if name else None), 0
        if log is not None:
            try:
                lines, offset = read_log(log, offset)
            except MetricsFileError as exc:
                if not lenient:
                    raise
                aside = move_aside(log)
                logger.error("%s; moved it aside to %s", exc, aside)
                lines, log = [], None
            for line in lines:
                merge(figures, line, self._max_tools)
        self._cache = (key, log, offset, figures)
        return figures

    def _snapshot(self, lenient: bool) -> tuple[Figures, str | None]:
        try:
            return read_snapshot(self.path)
        except MetricsFileError as exc:
            if not lenient or exc.reason != "corrupt":
                raise
            referenced, _ = snapshot_log(self.path)
            aside = move_aside(self.path)
            logger.error("%s; moved it aside to %s and started a new file", exc, aside)
            if referenced is not None and (self.path.parent / referenced).exists():
                move_aside(self.path.parent / referenced)
            return Figures(), None


def merge(target: Figures, delta: Figures, max_tools: int) -> None:
    """Add ``delta`` to ``target``; tools past ``max_tools`` go to the overflow entry."""
    count = len(target.tools) - buckets_in(target.tools)
    for name, stats in delta.tools.items():
        key = name
        if name not in target.tools and name not in BUCKETS:
            if count >= max_tools:
                key = OVERFLOW_BUCKET
            else:
                count += 1
        target.tools.setdefault(key, ToolStats()).merge(stats)
        hours = delta.series.get(name)
        if hours:
            merge_series(target.series, {key: hours})


def stat_key(path: Path) -> _StatKey | None:
    """What changes when a file is replaced or written (None: it does not exist)."""
    try:
        info = path.stat()
    except FileNotFoundError:
        return None
    return (info.st_mtime_ns, info.st_size, info.st_ino)
