"""The frames between the host and a module worker: length-prefixed JSON, read with a size cap
and a deadline; anything malformed ends the conversation instead of being guessed at."""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from shared.module_worker.protocol import FrameReader, FrameTimeout, ProtocolError, encode_frame, write_frame


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    read_fd, write_fd = os.pipe()
    yield read_fd, write_fd
    for fd in (read_fd, write_fd):
        with contextlib.suppress(OSError):
            os.close(fd)


def test_frames_round_trip_in_order(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe
    messages: list[dict[str, Any]] = [
        {"op": "hello", "n": 1},
        {"op": "call", "args": {"text": "é" * 3, "list": [1, 2.5, None]}},
    ]
    for message in messages:
        write_frame(write_fd, message)
    os.close(write_fd)
    reader = FrameReader(read_fd)
    assert [reader.read(5), reader.read(5), reader.read(5)] == [*messages, None]


def test_a_frame_split_across_writes_is_reassembled(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe
    data = encode_frame({"op": "result", "value": "x" * 100_000})
    reader = FrameReader(read_fd)
    writer = threading.Thread(target=lambda: [os.write(write_fd, data[i : i + 777]) for i in range(0, len(data), 777)])
    writer.start()
    frame = reader.read(30)
    writer.join()
    assert frame == {"op": "result", "value": "x" * 100_000}


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        ((10**6).to_bytes(4, "big"), "larger than"),
        (b"\x00\x00\x00\x03abc", "not valid JSON"),
        (b"\x00\x00\x00\x02[]", "not an object"),
        (b'\x00\x00\x00\x08{"a": 1}', "not an object with an 'op'"),
        (len(b"[" * 100_000).to_bytes(4, "big") + b"[" * 100_000, "not valid JSON"),
        (b'\x00\x00\x00\x10{"op"', "ended inside a frame"),
    ],
)
def test_malformed_frames_are_protocol_errors(pipe: tuple[int, int], raw: bytes, problem: str) -> None:
    read_fd, write_fd = pipe
    if len(raw) < 60_000:
        os.write(write_fd, raw)
    else:  # more than a pipe holds: written while the reader reads
        threading.Thread(target=os.write, args=(write_fd, raw), daemon=True).start()
    if problem == "ended inside a frame":
        os.close(write_fd)
    with pytest.raises(ProtocolError, match=problem):
        FrameReader(read_fd, max_bytes=1000 if problem == "larger than" else 1 << 20).read(30)


def test_reading_waits_at_most_until_the_deadline(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe
    os.write(write_fd, encode_frame({"op": "x"})[:6])  # half a frame, then nothing
    with pytest.raises(FrameTimeout):
        FrameReader(read_fd).read(0.05)


def test_writing_to_a_reader_that_never_reads_stops_at_the_deadline(pipe: tuple[int, int]) -> None:
    _, write_fd = pipe
    os.set_blocking(write_fd, False)
    with pytest.raises(FrameTimeout):
        write_frame(write_fd, {"op": "call", "args": "x" * 1_000_000}, deadline=time.monotonic() + 0.05)


def test_values_that_are_not_json_cannot_be_framed() -> None:
    with pytest.raises(ValueError):
        encode_frame({"op": "x", "value": float("nan")})
    with pytest.raises(TypeError):
        encode_frame({"op": "x", "value": object()})
    assert json.loads(encode_frame({"op": "x"})[4:]) == {"op": "x"}
