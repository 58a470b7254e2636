"""Where oversized tool results are kept for the model to read in parts: :class:`ArtifactStore`.

An artifact is one JSON file ``<handle>.json`` (``{"tool", "created_at", "text"}``) in the
store's directory, written atomically with mode 0600 in a 0700 directory. Its handle is
``art_`` plus 32 hex digits from :func:`secrets.token_hex`: unguessable, and nothing but a
handle of exactly that shape is ever turned into a path, so a handle cannot name a file
outside the directory (``../``, absolute paths, NUL bytes, symlinks are refused before the
filesystem is touched). Artifacts are bounded by count and age (oldest first, checked on
every write and on read), and by size (longer text is cut with a note). Text is passed
through the redactor's credential shapes (``Bearer ...``, ``api_key=...``, URL passwords,
provider token prefixes, JWTs; and an optional known-secrets redactor) before it is
written: an artifact never holds what the redactor knows to be a secret. Its catch-all for
long opaque strings is not applied: that would erase the very data the model stores an
artifact to read (a number of thousands of digits, a hash, base64).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tools._files import atomic_write_text
from tools.errors import InvalidArgumentsError, ToolError

logger = logging.getLogger(__name__)

_HANDLE = re.compile(r"art_[0-9a-f]{32}")
_FILE = re.compile(r"art_[0-9a-f]{32}\.json")
#: Longest text one artifact keeps; the rest is cut with a note.
MAX_ARTIFACT_CHARS = 5_000_000


class ArtifactNotFoundError(ToolError):
    """No artifact by that handle: it expired, was pruned, or never existed."""


@dataclass(frozen=True)
class Artifact:
    """One stored artifact.

    Attributes:
        handle: Its handle (``art_`` and 32 hex digits).
        tool: The tool whose result it holds.
        created_at: When it was stored (seconds since the epoch).
        text: Its text (redacted).
    """

    handle: str
    tool: str
    created_at: float
    text: str


class ArtifactStore:
    """Oversized results as files under one directory, bounded by count and age.

    Args:
        directory: Where artifacts live (created 0700 on first write), e.g.
            ``<data dir>/artifacts``.
        max_count: Most artifacts kept; the oldest go first.
        max_age: Seconds an artifact is kept (and readable).
        redact: An extra redaction step run before the secret-shape redactor, e.g. one that
            masks known secret values.
        clock: Seconds since the epoch (injectable for tests).

    Raises:
        ValueError: ``max_count`` < 1 or ``max_age`` <= 0.
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        *,
        max_count: int = 200,
        max_age: float = 7 * 24 * 3600.0,
        redact: Callable[[str], str] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if max_count < 1 or max_age <= 0:
            raise ValueError("ArtifactStore: max_count must be >= 1 and max_age > 0 seconds")
        self.directory = Path(directory)
        self.max_count = max_count
        self.max_age = max_age
        self._redact = redact
        self._clock = clock

    def __repr__(self) -> str:
        return f"ArtifactStore({str(self.directory)!r}, max_count={self.max_count}, max_age={self.max_age:g})"

    def put(self, text: str, *, tool: str) -> Artifact:
        """Store ``text`` (redacted, cut to :data:`MAX_ARTIFACT_CHARS`) and return it with its handle.

        Raises:
            OSError: the directory cannot be written (the caller falls back to cutting).
        """
        from tools.telemetry._redaction import redact_text

        if self._redact is not None:
            text = self._redact(text)
        text = redact_text(text, opaque=False)  # credential shapes; data (digits, hashes) stays
        if len(text) > MAX_ARTIFACT_CHARS:
            text = f"{text[:MAX_ARTIFACT_CHARS]}\n[cut: {len(text) - MAX_ARTIFACT_CHARS} more characters not kept]"
        artifact = Artifact(f"art_{secrets.token_hex(16)}", tool, self._clock(), text)
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        payload = {"tool": artifact.tool, "created_at": artifact.created_at, "text": artifact.text}
        path = self._path(artifact.handle)
        # ASCII JSON: a lone surrogate in a tool's text is kept (escaped), never a write error.
        atomic_write_text(path, json.dumps(payload), mode=0o600)
        # The file's time is the store's clock, so age and order checks agree with it.
        os.utime(path, (artifact.created_at, artifact.created_at))
        self.prune()
        return artifact

    def get(self, handle: object) -> Artifact:
        """The artifact of ``handle``.

        Raises:
            InvalidArgumentsError: ``handle`` is not of the handle's shape.
            ArtifactNotFoundError: no such artifact, or it expired (it is then removed).
        """
        path = self._path(check_handle(handle))
        try:
            raw = json.loads(_read_no_follow(path))
            artifact = Artifact(str(handle), str(raw["tool"]), float(raw["created_at"]), str(raw["text"]))
        except FileNotFoundError:
            raise _not_found(str(handle)) from None
        except (OSError, ValueError, KeyError, TypeError) as exc:
            logger.warning("artifact %s is unreadable (%s)", handle, type(exc).__name__)
            raise _not_found(str(handle)) from None
        if self._clock() - artifact.created_at > self.max_age:
            self._remove(path)
            raise _not_found(str(handle), expired=True)
        return artifact

    def prune(self) -> int:
        """Remove expired artifacts and the oldest beyond ``max_count``; returns how many."""
        now = self._clock()
        entries: list[tuple[float, Path]] = []
        with contextlib.suppress(FileNotFoundError):
            for entry in os.scandir(self.directory):
                if _FILE.fullmatch(entry.name) and entry.is_file(follow_symlinks=False):
                    with contextlib.suppress(FileNotFoundError):
                        entries.append((entry.stat(follow_symlinks=False).st_mtime, Path(entry.path)))
        entries.sort()
        removed = 0
        for index, (mtime, path) in enumerate(entries):
            if now - mtime > self.max_age or len(entries) - index > self.max_count:
                removed += self._remove(path)
        return removed

    def _path(self, handle: str) -> Path:
        return self.directory / f"{handle}.json"

    @staticmethod
    def _remove(path: Path) -> int:
        try:
            path.unlink()
        except FileNotFoundError:
            return 0
        return 1


def _read_no_follow(path: Path) -> str:
    """The file's text; a symlink planted under a handle's name is refused (ELOOP)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, encoding="utf-8") as handle:
        return handle.read()


def check_handle(handle: object) -> str:
    """``handle`` if it has the shape of an artifact handle.

    Raises:
        InvalidArgumentsError: anything else (a path, a forged shape), for the model to fix.
    """
    if isinstance(handle, str) and _HANDLE.fullmatch(handle):
        return handle
    shown = repr(handle)[:60]
    raise InvalidArgumentsError(
        f"{shown} is not an artifact handle; use the handle a tool result gave you, "
        "e.g. 'art_0123456789abcdef0123456789abcdef'."
    )


def _not_found(handle: str, *, expired: bool = False) -> ArtifactNotFoundError:
    why = "expired and was removed" if expired else "does not exist (it expired, or the handle is wrong)"
    return ArtifactNotFoundError(
        f"The artifact {handle} {why}; call the tool that produced it again for a fresh result."
    )
