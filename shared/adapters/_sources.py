"""Reading user-owned files safely, and pointing at the line a problem is on."""

from __future__ import annotations

import os
from collections.abc import Hashable
from pathlib import Path

from shared.adapters.base import AdapterError

#: Largest file an adapter reads (bytes); larger files are an error, not a hang.
MAX_FILE_BYTES = 50 * 1024 * 1024


def read_file_bytes(path: str, *, max_bytes: int = MAX_FILE_BYTES) -> bytes:
    """Read ``path`` whole; missing, unreadable or oversized files raise :class:`AdapterError`."""
    name = Path(path).name
    try:
        size = os.stat(path).st_size
        if size > max_bytes:
            raise AdapterError(
                f"file is larger than {max_bytes // (1024 * 1024)} MiB ({size} bytes)",
                source=name,
            )
        with open(path, "rb") as handle:
            return handle.read(max_bytes + 1)
    except FileNotFoundError:
        raise AdapterError("file not found", source=name) from None
    except IsADirectoryError:
        raise AdapterError("is a directory, not a file", source=name) from None
    except PermissionError:
        raise AdapterError("permission denied", source=name) from None
    except OSError as exc:
        raise AdapterError(f"cannot read file ({exc.strerror or type(exc).__name__})", source=name) from None


def file_token(path: str) -> Hashable | None:
    """``(mtime_ns, size)`` of ``path``: changes when the file changes; None if unreadable."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_mtime_ns, info.st_size)


def decode_text(data: bytes, *, source: str, encoding: str = "utf-8") -> str:
    """Decode ``data`` (a UTF-8 BOM is dropped); undecodable bytes raise with the line."""
    try:
        return data.decode("utf-8-sig" if encoding.lower().replace("_", "-") == "utf-8" else encoding)
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise AdapterError(f"not valid {encoding} text", source=source, line=line) from None
    except LookupError:
        raise AdapterError(f"unknown encoding {encoding!r}", source=source) from None


def find_line(text: str, needle: str) -> int | None:
    """1-based number of the first line of ``text`` containing ``needle``, or None."""
    needle = needle.strip()
    if not needle:
        return None
    for number, line in enumerate(text.splitlines(), start=1):
        if needle in line:
            return number
    return None
