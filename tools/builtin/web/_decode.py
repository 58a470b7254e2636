"""Decode a page body sent with ``Content-Encoding`` (gzip, deflate, br), with bounded output.

:class:`BodyDecoder` pulls compressed bytes from a source and hands out decoded bytes, never
more than asked for per read, so a decompression bomb costs at most what the caller reads.
It counts the compressed bytes each read consumed, so the caller can tell a bomb (a ratio no
real page has) from a large page. Stacked encodings (``gzip, gzip``) are decoded layer by
layer, each layer bounded the same way.

- ``gzip`` (and its alias ``x-gzip``): every member of a multi-member stream is read;
  bytes after the last member that do not start another member are ignored.
- ``deflate``: a zlib stream as RFC 9110 says, or the raw deflate stream that some servers
  send instead (detected when the zlib reading fails before any output).
- ``br``: with the ``brotli`` package (1.2 or newer, for bounded output), part of the
  ``web`` extra; without it ``br`` is neither offered nor accepted.

A truncated stream (the server hung up) yields what was decoded so far, as browsers do.
"""

from __future__ import annotations

import importlib
import zlib
from collections.abc import Callable, Sequence
from typing import Any, Protocol

#: Content encodings stacked more deeply than this are refused before anything is decoded.
MAX_ENCODINGS = 3
_ALIASES = {"x-gzip": "gzip"}
_GZIP_MAGIC = b"\x1f\x8b"
#: Input held back while telling a zlib-wrapped deflate stream from a raw one.
_MAX_PROBE = 65_536
#: Brotli is fed this much input at a time, so consumed bytes are known to within a slice.
_BROTLI_SLICE = 1_024

Source = Callable[[int], bytes]


class ContentEncodingError(ValueError):
    """The body cannot be decoded: an unsupported encoding, too many layers, or corrupt data.

    Attributes:
        encoding: The content encoding concerned (the whole header for too many layers).
        reason: ``"unsupported"``, ``"too_many"`` or ``"corrupt"``.
    """

    def __init__(self, message: str, *, encoding: str, reason: str) -> None:
        super().__init__(message)
        self.encoding = encoding
        self.reason = reason


def load_brotli() -> Any | None:
    """The ``brotli`` module when it is installed and bounds its output (1.2+), else None."""
    try:
        module = importlib.import_module("brotli")
    except ImportError:
        return None
    return module if hasattr(module.Decompressor(), "can_accept_more_data") else None


def supported_encodings(brotli: Any | None) -> tuple[str, ...]:
    """The encodings a fetcher can decode (and offers in ``Accept-Encoding``), best last."""
    return ("gzip", "deflate", "br") if brotli is not None else ("gzip", "deflate")


def parse_content_encoding(header: str | None, supported: Sequence[str]) -> list[str]:
    """The encodings of a ``Content-Encoding`` header in the order they were applied.

    ``identity`` and empty entries are dropped; names are case-insensitive.

    Raises:
        ContentEncodingError: More than :data:`MAX_ENCODINGS` layers, or one not in
            ``supported``.
    """
    if not header:
        return []
    names = [_ALIASES.get(n, n) for n in (part.strip().lower() for part in header.split(","))]
    names = [n for n in names if n and n != "identity"]
    if len(names) > MAX_ENCODINGS:
        raise ContentEncodingError(
            f"{len(names)} content encodings stacked (at most {MAX_ENCODINGS} are decoded)",
            encoding=header[:200],
            reason="too_many",
        )
    for name in names:
        if name not in supported:
            raise ContentEncodingError(
                f"unsupported content encoding {name[:40]!r}", encoding=name[:40], reason="unsupported"
            )
    return names


class _Codec(Protocol):
    """One decoding layer; input it could not use yet is kept until the next call."""

    def decompress(self, data: bytes, limit: int) -> bytes:
        """Decode ``data`` (after the input kept from earlier); about ``limit`` bytes at most."""
        ...

    def pending(self) -> bool:
        """Whether output may come without new input."""
        ...

    def buffered(self) -> int:
        """Input bytes received but not consumed yet."""
        ...


class _ZlibCodec:
    """gzip (every member) or deflate (zlib-wrapped, else raw), output bounded per call."""

    def __init__(self, encoding: str) -> None:
        self._encoding = encoding
        self._gzip = encoding == "gzip"
        self._obj: Any = self._new()  # None between two gzip members
        self._tail = b""
        self._full = False
        self._done = False
        # deflate only: the input seen before the first output, to retry it as raw deflate
        self._probe: bytes | None = None if self._gzip else b""

    def _new(self, raw: bool = False) -> Any:
        if self._gzip:
            return zlib.decompressobj(16 + zlib.MAX_WBITS)
        return zlib.decompressobj(-zlib.MAX_WBITS if raw else zlib.MAX_WBITS)

    def pending(self) -> bool:
        return not self._done and self._obj is not None and (bool(self._tail) or self._full)

    def buffered(self) -> int:
        return len(self._tail)

    def decompress(self, data: bytes, limit: int) -> bytes:
        buf = self._tail + data if self._tail else data
        out = bytearray()
        while not self._done and len(out) < limit and (buf or self._full):
            if self._obj is None:  # after a gzip member: another one, or the end
                if len(buf) < len(_GZIP_MAGIC) and _GZIP_MAGIC.startswith(buf):
                    break  # too few bytes to tell: wait for more
                if not buf.startswith(_GZIP_MAGIC):
                    self._done, buf = True, b""  # trailing bytes that are not a member
                    break
                self._obj = self._new()
            want = limit - len(out)
            chunk = self._step(buf, want)
            out += chunk
            self._full = len(chunk) >= want
            if self._obj.eof:
                buf, self._full = self._obj.unused_data, False
                self._obj = None
                self._done = not self._gzip
                continue
            buf = self._obj.unconsumed_tail
            if not buf and not self._full:
                break
        self._tail = buf
        return bytes(out)

    def _step(self, buf: bytes, want: int) -> bytes:
        try:
            chunk: bytes = self._obj.decompress(buf, want)
        except zlib.error as exc:
            if self._probe is None:
                raise self._corrupt() from exc
            # Not a zlib stream: many servers send raw deflate for "deflate".
            seen, self._probe = self._probe + buf, None
            self._obj = self._new(raw=True)
            try:
                chunk = self._obj.decompress(seen, want)
            except zlib.error as raw_exc:
                raise self._corrupt() from raw_exc
            return chunk
        if self._probe is not None:
            self._probe = None if chunk or len(self._probe) + len(buf) > _MAX_PROBE else self._probe + buf
        return chunk

    def _corrupt(self) -> ContentEncodingError:
        return ContentEncodingError(f"corrupt {self._encoding} data", encoding=self._encoding, reason="corrupt")


class _BrotliCodec:
    """br via the ``brotli`` package, output bounded per call.

    A call that fills its output limit may leave output inside the decoder, which comes out
    of calls with empty input (``can_accept_more_data`` does not tell: it is about input).
    """

    def __init__(self, brotli: Any) -> None:
        self._brotli = brotli
        self._obj = brotli.Decompressor()
        self._tail = b""
        self._more = False

    def pending(self) -> bool:
        obj = self._obj
        return not obj.is_finished() and (bool(self._tail) or self._more or not obj.can_accept_more_data())

    def buffered(self) -> int:
        return len(self._tail)

    def decompress(self, data: bytes, limit: int) -> bytes:
        buf = self._tail + data if self._tail else data
        obj = self._obj
        out = bytearray()
        try:
            while len(out) < limit and not obj.is_finished():
                drain = self._more or not obj.can_accept_more_data()
                if drain:
                    feed = b""
                elif buf:
                    feed, buf = buf[:_BROTLI_SLICE], buf[_BROTLI_SLICE:]
                else:
                    break
                want = limit - len(out)
                piece = obj.process(feed, output_buffer_limit=want)
                out += piece
                self._more = len(piece) >= want
                if drain and not piece and not obj.can_accept_more_data():
                    break  # the decoder wants input it cannot take yet: try again later
        except self._brotli.error as exc:
            raise ContentEncodingError("corrupt br data", encoding="br", reason="corrupt") from exc
        self._tail = b"" if obj.is_finished() else buf
        return bytes(out)


class _Layer:
    """Pull decoded bytes of one codec from a source of encoded bytes."""

    def __init__(self, codec: _Codec, source: Source, chunk_size: int) -> None:
        self.codec = codec
        self._source = source
        self._chunk_size = chunk_size
        self._carry = b""
        self.received = 0

    def read(self, amount: int) -> bytes:
        """Up to ``amount`` decoded bytes; ``b""`` at the end of the stream."""
        if self._carry:
            out, self._carry = self._carry[:amount], self._carry[amount:]
            return out
        while True:
            if self.codec.pending():
                out = self.codec.decompress(b"", amount)
                if out:
                    return self._keep(out, amount)
            data = self._source(self._chunk_size)
            self.received += len(data)
            out = self.codec.decompress(data, amount)
            if out or not data:
                return self._keep(out, amount)

    def _keep(self, out: bytes, amount: int) -> bytes:
        if len(out) > amount:  # brotli may overshoot its output limit a little
            out, self._carry = out[:amount], out[amount:]
        return out


class BodyDecoder:
    """Decoded reads over a body sent with ``encodings`` (in the order they were applied).

    Args:
        encodings: From :func:`parse_content_encoding`; empty means the body as it is.
        source: ``source(n)`` returns up to ``n`` bytes of the body as sent, ``b""`` at its end.
        chunk_size: Encoded bytes asked of ``source`` per read.
        brotli: The ``brotli`` module (from :func:`load_brotli`) when ``br`` may occur.

    Raises:
        ContentEncodingError: From :meth:`read`, when the data is corrupt.
    """

    def __init__(self, encodings: Sequence[str], source: Source, *, chunk_size: int, brotli: Any | None = None) -> None:
        self._source = source
        self._first: _Layer | None = None
        reader: Source = source
        for encoding in reversed(encodings):  # the last applied is undone first
            codec: _Codec = _BrotliCodec(brotli) if encoding == "br" else _ZlibCodec(encoding)
            layer = _Layer(codec, reader, chunk_size)
            self._first = self._first or layer
            reader = layer.read
        self._read = reader
        self._passthrough = 0

    def read(self, amount: int) -> bytes:
        """Up to ``amount`` decoded bytes; ``b""`` at the end of the body."""
        out = self._read(amount)
        if self._first is None:
            self._passthrough += len(out)
        return out

    @property
    def consumed(self) -> int:
        """Encoded bytes the decoding has used so far (received minus those held back)."""
        if self._first is None:
            return self._passthrough
        return self._first.received - self._first.codec.buffered()
