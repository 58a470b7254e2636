"""The on-disk cache of ``--schema`` answers, keyed by (path, size, mtime), written atomically."""

from __future__ import annotations

import json
import logging
import threading
from typing import Any

from tools._files import atomic_write_text
from tools.external._binary_contract import Probe

logger = logging.getLogger(__name__)

#: 2: probes carry the binary's ``tags``; older files are ignored (every binary is asked again).
CACHE_FORMAT = 2
Key = tuple[int, int]  # (size, mtime_ns)


class SchemaCache:
    """Probes by absolute path, valid while the file's size and mtime are unchanged.

    Args:
        path: JSON file to load at start and save after changes; None keeps it in memory.
            A corrupt or foreign file is ignored (logged) and overwritten on the next save.
    """

    def __init__(self, path: str | None = None) -> None:
        self._path = path
        self._lock = threading.Lock()
        self._entries: dict[str, tuple[Key, Probe]] = {}
        self._dirty = False

    def load(self) -> int:
        """Read the cache file; returns how many entries were loaded."""
        if self._path is None:
            return 0
        try:
            with open(self._path, encoding="utf-8") as handle:
                raw = json.load(handle)
        except FileNotFoundError:
            return 0
        except (OSError, ValueError) as exc:
            logger.warning("schema cache %s unreadable, ignoring it: %s", self._path, exc)
            return 0
        version = raw.get("format") if isinstance(raw, dict) else None
        if isinstance(version, int) and 0 < version < CACHE_FORMAT:
            logger.info("schema cache %s is from an older version; asking every binary again", self._path)
            return 0
        if not isinstance(raw, dict) or version != CACHE_FORMAT:
            logger.warning("schema cache %s has an unknown format, ignoring it", self._path)
            return 0
        loaded: dict[str, tuple[Key, Probe]] = {}
        for path, item in (raw.get("entries") or {}).items():
            try:
                key = (int(item["size"]), int(item["mtime_ns"]))
                loaded[str(path)] = (key, Probe.from_json(item["probe"]))
            except (KeyError, TypeError, ValueError):
                continue
        with self._lock:
            self._entries.update(loaded)
        return len(loaded)

    def get(self, path: str, key: Key) -> Probe | None:
        """The cached probe of ``path`` if its size and mtime still match ``key``."""
        with self._lock:
            hit = self._entries.get(path)
        return hit[1] if hit is not None and hit[0] == key else None

    def put(self, path: str, key: Key, probe: Probe) -> None:
        """Remember ``probe`` for ``path`` at ``key``."""
        with self._lock:
            self._entries[path] = (key, probe)
            self._dirty = True

    def drop(self, path: str) -> None:
        """Forget ``path``."""
        with self._lock:
            if self._entries.pop(path, None) is not None:
                self._dirty = True

    def save(self) -> None:
        """Write the cache file atomically (temporary file + ``os.replace``) if it changed."""
        with self._lock:
            if self._path is None or not self._dirty:
                return
            doc: dict[str, Any] = {
                "format": CACHE_FORMAT,
                "entries": {
                    p: {"size": k[0], "mtime_ns": k[1], "probe": pr.to_json()} for p, (k, pr) in self._entries.items()
                },
            }
            self._dirty = False
        try:
            atomic_write_text(self._path, json.dumps(doc))
        except OSError as exc:
            logger.warning("cannot write schema cache %s: %s", self._path, exc)
