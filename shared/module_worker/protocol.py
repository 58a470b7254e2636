"""The pipe protocol between the host and a module worker: length-prefixed JSON frames.

A frame is a 4-byte big-endian length, then that many bytes of UTF-8 JSON holding one
object with an ``op`` key. Both sides read with a size cap and treat a malformed frame as
the end of the conversation; the host checks every field it reads, because the worker
runs model-written code and may send anything.

Messages:

- worker -> host ``hello`` ``{protocol, pid, uid}``: the worker started.
- host -> worker ``init`` ``{module_id, version_id, source, adapter_class, http_timeout,
  max_attempts}``; the worker answers ``ready`` ``{overrides}`` (the adapter hooks the
  module defines itself) or ``load_error`` ``{reason}``.
- host -> worker ``call`` ``{id, method, args}``; the worker answers ``result`` ``{id,
  value}`` or ``{id, error: {type, message?, shape?}}``. Meanwhile it may send ``http``
  ``{id, method, url, headers, body, timeout}`` requests, each answered by ``http_reply``
  ``{id, status, reason, url, headers, body}`` or ``{id, error: {kind, message}}``.

Bodies travel base64-encoded. Stdlib only: the worker imports this before anything else.
"""

from __future__ import annotations

import json
import os
import select
import time
from typing import Any

__all__ = [
    "MAX_FRAME_BYTES",
    "PROTOCOL_VERSION",
    "FrameReader",
    "FrameTimeout",
    "ProtocolError",
    "encode_frame",
    "write_frame",
]

PROTOCOL_VERSION = 1
#: Largest frame either side accepts (a 20 MiB response body is ~27 MiB in base64).
MAX_FRAME_BYTES = 48 * 1024 * 1024
_HEADER = 4
_CHUNK = 1 << 20


class ProtocolError(Exception):
    """The other side sent something that is not a well-formed frame."""


class FrameTimeout(Exception):
    """No (complete) frame arrived, or a frame could not be written, before the deadline."""


def encode_frame(message: dict[str, Any]) -> bytes:
    """``message`` as one frame (length prefix and JSON).

    Raises:
        ValueError: ``message`` is not JSON-serialisable or is larger than the cap.
    """
    payload = json.dumps(message, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")
    if len(payload) > MAX_FRAME_BYTES:
        raise ValueError(f"a frame of {len(payload)} bytes is larger than {MAX_FRAME_BYTES}")
    return len(payload).to_bytes(_HEADER, "big") + payload


def write_frame(fd: int, message: dict[str, Any], *, deadline: float | None = None) -> None:
    """Write ``message`` as one frame to ``fd``.

    Args:
        fd: A pipe. With a ``deadline`` it must be non-blocking.
        message: The JSON object.
        deadline: ``time.monotonic()`` value after which the write gives up (None: block).

    Raises:
        FrameTimeout: The reader did not take the frame before ``deadline``.
        BrokenPipeError: The reader is gone.
        ValueError: ``message`` cannot be encoded.
    """
    data = memoryview(encode_frame(message))
    poller = None
    if deadline is not None:
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
    while data:
        if poller is not None and deadline is not None:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not poller.poll(remaining * 1000):
                raise FrameTimeout("the frame could not be written in time")
        try:
            written = os.write(fd, data)
        except BlockingIOError:
            continue
        data = data[written:]


class FrameReader:
    """Reads frames from a pipe, with a deadline per frame and a size cap.

    Args:
        fd: The pipe to read (blocking or not; reads wait with ``poll``).
        max_bytes: Largest frame accepted.
    """

    def __init__(self, fd: int, *, max_bytes: int = MAX_FRAME_BYTES) -> None:
        self._fd = fd
        self._max = max_bytes
        self._buffer = bytearray()
        self._poller = select.poll()
        self._poller.register(fd, select.POLLIN)

    def read(self, timeout: float | None = None) -> dict[str, Any] | None:
        """The next frame, or None at the end of the stream.

        Args:
            timeout: Seconds to wait for a complete frame (None: no limit).

        Raises:
            FrameTimeout: No complete frame within ``timeout``.
            ProtocolError: Oversized, truncated or malformed frame.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            frame = self._take()
            if frame is not None:
                return frame
            if deadline is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not self._poller.poll(remaining * 1000):
                    raise FrameTimeout("no frame before the deadline")
            try:
                chunk = os.read(self._fd, _CHUNK)
            except BlockingIOError:
                continue
            if not chunk:
                if self._buffer:
                    raise ProtocolError("the stream ended inside a frame")
                return None
            self._buffer += chunk

    def _take(self) -> dict[str, Any] | None:
        if len(self._buffer) < _HEADER:
            return None
        size = int.from_bytes(self._buffer[:_HEADER], "big")
        if size > self._max:
            raise ProtocolError(f"a frame of {size} bytes is larger than {self._max}")
        if len(self._buffer) < _HEADER + size:
            return None
        payload = bytes(self._buffer[_HEADER : _HEADER + size])
        del self._buffer[: _HEADER + size]
        try:
            message = json.loads(payload)
        except (ValueError, RecursionError):
            raise ProtocolError("a frame is not valid JSON") from None
        if not isinstance(message, dict) or not isinstance(message.get("op"), str):
            raise ProtocolError("a frame is not an object with an 'op'")
        return message
