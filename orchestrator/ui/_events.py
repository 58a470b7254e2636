"""Live updates: what changed in the stores, told to open pages as server-sent events.

The stores are files other processes write too (a ``python -m orchestrator`` run records
itself, ``tooldeck approve`` changes the approvals), so changes are noticed by fingerprint:
each topic has a probe (cheap: a few ``stat`` calls) and a version that moves on when the
probe's answer changes. The console's own changes (a resume it ran) move a topic on at once
(:meth:`Changes.bump`). The event stream sends ``{"topic": ..., "version": ...}`` when a
version moves; the page's script then reloads the parts of the page marked with that topic.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import threading
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

__all__ = ["Changes", "event_stream", "path_fingerprint"]

logger = logging.getLogger(__name__)

#: Topics the pages listen to.
TOPICS: tuple[str, ...] = ("runs", "approvals", "metrics", "settings", "tools")


def path_fingerprint(paths: Iterable[Path]) -> tuple[Any, ...]:
    """A value that changes when any of ``paths`` (files or directories) is written, created
    or removed (a directory changes when an entry is added, removed or replaced)."""
    out: list[Any] = []
    for path in paths:
        try:
            info = os.stat(path)
        except OSError:
            out.append(None)
            continue
        out.append((info.st_mtime_ns, info.st_size, info.st_ino))
    return tuple(out)


class Changes:
    """The version of each topic, moved on by probes and by the console itself (thread-safe).

    Args:
        probes: Topic -> a function returning a fingerprint of what the topic shows.
        extras: Topic -> a function whose JSON-able answer goes with the topic's events
            (e.g. the number of pending approvals for the navigation badge).
    """

    def __init__(
        self,
        probes: Mapping[str, Callable[[], object]],
        extras: Mapping[str, Callable[[], object]] | None = None,
    ) -> None:
        self._probes = dict(probes)
        self._extras = dict(extras or {})
        self._lock = threading.Lock()
        self._versions = dict.fromkeys(TOPICS, 0)
        self._seen: dict[str, object] = {}

    def bump(self, topic: str) -> None:
        """Move ``topic`` on now (the console changed it)."""
        with self._lock:
            self._versions[topic] = self._versions.get(topic, 0) + 1

    def probe(self) -> dict[str, int]:
        """Run every probe; topics whose fingerprint changed move on. Returns the versions."""
        for topic, probe in self._probes.items():
            try:
                seen = probe()
            except Exception as exc:  # a store that cannot be read now: no change to report
                logger.debug("console: probing %s failed: %s", topic, exc)
                continue
            with self._lock:
                if topic in self._seen and self._seen[topic] != seen:
                    self._versions[topic] = self._versions.get(topic, 0) + 1
                self._seen[topic] = seen
        return self.versions()

    def versions(self) -> dict[str, int]:
        """The current version of every topic."""
        with self._lock:
            return dict(self._versions)

    def extra(self, topic: str) -> object:
        """What goes with ``topic``'s events (None when nothing does, or it failed)."""
        extra = self._extras.get(topic)
        if extra is None:
            return None
        try:
            return extra()
        except Exception:
            return None


async def event_stream(
    changes: Changes,
    *,
    disconnected: Callable[[], Any],
    interval: float = 0.5,
    keepalive: float = 15.0,
) -> AsyncIterator[str]:
    """Server-sent events: every topic's state once, then each change as it is noticed.

    Args:
        changes: The versions to follow.
        disconnected: An awaitable-returning check that the client left (the stream ends).
        interval: Seconds between probes.
        keepalive: Seconds between comment lines that keep proxies from closing the stream.
    """
    versions = await asyncio.to_thread(changes.probe)
    for topic, version in versions.items():
        yield _event(topic, version, await asyncio.to_thread(changes.extra, topic))
    quiet = 0.0
    while not await disconnected():
        await asyncio.sleep(interval)
        now = await asyncio.to_thread(changes.probe)
        moved = [topic for topic, version in now.items() if versions.get(topic) != version]
        for topic in moved:
            yield _event(topic, now[topic], await asyncio.to_thread(changes.extra, topic))
        versions = now
        quiet = 0.0 if moved else quiet + interval
        if quiet >= keepalive:
            quiet = 0.0
            yield ": keepalive\n\n"


def _event(topic: str, version: int, extra: object) -> str:
    data: dict[str, object] = {"topic": topic, "version": version}
    if extra is not None:
        data["extra"] = extra
    return f"event: change\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"
