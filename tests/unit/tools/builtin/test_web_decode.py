"""BodyDecoder: gzip/deflate/br decoding with bounded output, whatever the read sizes."""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Callable

import pytest

from tools.builtin.web._decode import (
    MAX_ENCODINGS,
    BodyDecoder,
    ContentEncodingError,
    load_brotli,
    parse_content_encoding,
    supported_encodings,
)

TEXT = b"".join(b"line %d: the quick brown fox jumps over the lazy dog\n" % i for i in range(5_000))
ALL = ("gzip", "deflate", "br")


def _raw_deflate(data: bytes) -> bytes:
    packer = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return packer.compress(data) + packer.flush()


def _source(data: bytes, step: int) -> Callable[[int], bytes]:
    """Serve ``data`` in reads of at most ``step`` bytes (1 = byte by byte)."""
    position = 0

    def read(amount: int) -> bytes:
        nonlocal position
        piece = data[position : position + min(amount, step)]
        position += len(piece)
        return piece

    return read


def _decode_all(encodings: list[str], data: bytes, *, step: int, amount: int) -> bytes:
    decoder = BodyDecoder(encodings, _source(data, step), chunk_size=4_096, brotli=load_brotli())
    parts = []
    while chunk := decoder.read(amount):
        assert len(chunk) <= amount
        parts.append(chunk)
    return b"".join(parts)


ENCODERS: dict[str, Callable[[bytes], bytes]] = {
    "gzip": lambda b: gzip.compress(b, mtime=0),
    "deflate-zlib": zlib.compress,
    "deflate-raw": _raw_deflate,
}


@pytest.mark.parametrize("kind", sorted(ENCODERS))
@pytest.mark.parametrize(("step", "amount"), [(1, 7), (1_000, 1), (100_000, 65_536), (3, 100_000)])
def test_round_trip_for_any_read_sizes(kind: str, step: int, amount: int) -> None:
    encoding = kind.split("-", maxsplit=1)[0]
    assert _decode_all([encoding], ENCODERS[kind](TEXT), step=step, amount=amount) == TEXT


def test_brotli_round_trip() -> None:
    brotli = pytest.importorskip("brotli")
    assert load_brotli() is not None
    data = brotli.compress(TEXT)
    for step, amount in [(1, 13), (50_000, 65_536), (7, 1), (1_000, 13), (100_000, 13)]:
        assert _decode_all(["br"], data, step=step, amount=amount) == TEXT


def test_stacked_encodings_are_undone_last_first() -> None:
    data = zlib.compress(gzip.compress(TEXT, mtime=0))  # gzip applied first, then deflate
    assert _decode_all(["gzip", "deflate"], data, step=333, amount=1_000) == TEXT


def test_gzip_members_split_anywhere_are_all_read() -> None:
    data = gzip.compress(b"one ", mtime=0) + gzip.compress(b"two ", mtime=0) + gzip.compress(b"three", mtime=0)
    for step in (1, 2, 5, 1_000):
        assert _decode_all(["gzip"], data, step=step, amount=3) == b"one two three"


def test_trailing_garbage_after_gzip_is_ignored() -> None:
    data = gzip.compress(b"body", mtime=0) + b"\x00\x00 junk"
    assert _decode_all(["gzip"], data, step=1, amount=10) == b"body"


def test_truncated_stream_gives_what_was_decoded() -> None:
    data = gzip.compress(TEXT, mtime=0)
    partial = _decode_all(["gzip"], data[: len(data) // 2], step=512, amount=4_096)
    assert 0 < len(partial) < len(TEXT)
    assert TEXT.startswith(partial)


@pytest.mark.parametrize(
    ("encoding", "data"),
    [
        ("gzip", b"not gzip at all"),
        ("deflate", b"\xff" * 64),
        ("gzip", gzip.compress(TEXT)[:20] + b"\xff" * 40 + gzip.compress(TEXT)[60:]),
    ],
)
def test_corrupt_data_raises(encoding: str, data: bytes) -> None:
    with pytest.raises(ContentEncodingError) as info:
        _decode_all([encoding], data, step=1_000, amount=1_000)
    assert (info.value.reason, info.value.encoding) == ("corrupt", encoding)


def test_corrupt_brotli_raises() -> None:
    pytest.importorskip("brotli")
    with pytest.raises(ContentEncodingError, match="corrupt br"):
        _decode_all(["br"], b"\xff" * 100, step=100, amount=1_000)


@pytest.mark.parametrize("encoding", ["gzip", "br"])
def test_a_bomb_is_decoded_only_as_far_as_it_is_read(encoding: str) -> None:
    zeros = b"\x00" * 20_000_000
    if encoding == "br":
        brotli = pytest.importorskip("brotli")
        data = brotli.compress(zeros)
    else:
        data = gzip.compress(zeros, mtime=0)
    decoder = BodyDecoder([encoding], _source(data, 65_536), chunk_size=65_536, brotli=load_brotli())
    out = decoder.read(100_000)
    while len(out) < 100_000:
        out += decoder.read(100_000 - len(out))
    assert len(out) == 100_000
    # the bytes consumed so far show the ratio: far more than any real page
    assert len(out) / decoder.consumed > 100


def test_consumed_counts_encoded_bytes_without_encoding_too() -> None:
    decoder = BodyDecoder([], _source(b"abcdef", 4), chunk_size=4)
    assert decoder.read(10) == b"abcd"
    assert decoder.consumed == 4


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (None, []),
        ("", []),
        ("identity", []),
        ("GZIP", ["gzip"]),
        ("x-gzip", ["gzip"]),
        ("gzip, gzip", ["gzip", "gzip"]),
        (" deflate ,identity,, br", ["deflate", "br"]),
    ],
)
def test_content_encoding_header_parsing(header: str | None, expected: list[str]) -> None:
    assert parse_content_encoding(header, ALL) == expected


@pytest.mark.parametrize(
    ("header", "reason", "encoding"),
    [
        ("compress", "unsupported", "compress"),
        ("zstd", "unsupported", "zstd"),
        ("br", "unsupported", "br"),  # when brotli is not installed
        ("gzip, " * MAX_ENCODINGS + "gzip", "too_many", "gzip, " * MAX_ENCODINGS + "gzip"),
        ("x" * 10_000, "unsupported", "x" * 40),
    ],
)
def test_bad_content_encoding_headers(header: str, reason: str, encoding: str) -> None:
    with pytest.raises(ContentEncodingError) as info:
        parse_content_encoding(header, ("gzip", "deflate"))
    assert (info.value.reason, info.value.encoding) == (reason, encoding)


def test_supported_encodings_follow_brotli() -> None:
    assert supported_encodings(None) == ("gzip", "deflate")
    assert supported_encodings(object()) == ALL
