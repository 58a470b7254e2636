"""A real loopback HTTP server with pages, redirects, huge and slow bodies, and search APIs."""

from __future__ import annotations

import functools
import gzip
import importlib
import json
import random
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

FIXTURES = Path(__file__).parent / "fixtures"

ARTICLE_HTML = """<!DOCTYPE html>
<html><head><title>Solar  Panels &amp; You</title></head>
<body>
<nav><a href="/">Home</a> | <a href="/about">About</a> | <a href="/contact">Contact</a></nav>
<article>
<h1>How solar panels work</h1>
<p>Solar panels turn sunlight into electricity using photovoltaic cells made of silicon.
Each cell creates an electric field that pushes freed electrons into a circuit.</p>
<p>Modern panels reach an efficiency of about twenty-two percent, and their output falls
slowly over decades. Installers usually promise eighty percent of the rated power after
twenty-five years of service on a typical roof.</p>
<p>Read the <a href="/guide#part2">installation guide</a> or the
<a href="https://example.org/faq">external FAQ</a>.</p>
</article>
<footer>Copyright 2026 Example Energy. All rights reserved.</footer>
<script>document.write("should never appear")</script>
</body></html>
"""

GIGABYTE = 1_000_000_000
#: Decoded size of the decompression bomb (about 50 kB gzipped: a ratio near 1000:1).
BOMB_BYTES = 50_000_000


def encode(body: bytes, encoding: str) -> bytes:
    """``body`` compressed as a server would send it for ``Content-Encoding: encoding``."""
    if encoding == "gzip":
        return gzip.compress(body, mtime=0)
    if encoding == "deflate-zlib":  # RFC 9110 deflate: a zlib stream
        return zlib.compress(body)
    if encoding == "deflate-raw":  # what some servers send instead: raw deflate
        packer = zlib.compressobj(wbits=-zlib.MAX_WBITS)
        return packer.compress(body) + packer.flush()
    if encoding == "br":
        brotli = importlib.import_module("brotli")  # optional: the br tests skip without it
        return bytes(brotli.compress(body))
    raise ValueError(encoding)


@functools.cache
def bomb() -> bytes:
    """A gzip body that decodes to :data:`BOMB_BYTES` of the letter A (built once)."""
    packer = zlib.compressobj(9, wbits=16 + zlib.MAX_WBITS)
    block = b"A" * 1_000_000
    parts = [packer.compress(block) for _ in range(BOMB_BYTES // len(block))]
    return b"".join(parts) + packer.flush()


@functools.cache
def varied_text(size: int) -> bytes:
    """Deterministic prose-like text that compresses about as well as a real page."""
    rng = random.Random(size)
    vocabulary = ["sun", "panel", "cell", "wind", "grid", "power", "roof", "volt", "amp", "watt", "light"]
    words = (rng.choice(vocabulary) + str(rng.randrange(1000)) for _ in range(size // 4))
    return " ".join(words).encode()[:size]


@dataclass
class Recorder:
    """What the server saw, for assertions."""

    requests: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, entry: dict[str, Any]) -> None:
        with self.lock:
            self.requests.append(entry)


@dataclass
class Scripted:
    """Responses queued per path (status, headers, body), consumed in order."""

    queues: dict[str, list[tuple[int, dict[str, str], bytes]]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def push(self, path: str, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        with self.lock:
            self.queues.setdefault(path, []).append((status, headers or {}, body))

    def pop(self, path: str) -> tuple[int, dict[str, str], bytes] | None:
        with self.lock:
            queue = self.queues.get(path)
            return queue.pop(0) if queue else None


@dataclass
class LocalServer:
    """The running server: its base URL and its request log."""

    base_url: str
    port: int
    recorder: Recorder
    scripted: Scripted
    stop_event: threading.Event

    def url(self, path: str) -> str:
        return self.base_url + path


def _make_handler(recorder: Recorder, scripted: Scripted, stop_event: threading.Event) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # silence stderr
            return

        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            recorder.add(
                {
                    "path": parts.path,
                    "query": parse_qs(parts.query),
                    "headers": {k.lower(): v for k, v in self.headers.items()},
                }
            )
            queued = scripted.pop(parts.path)
            if queued is not None:
                status, headers, body = queued
                self._send(status, body, headers.pop("Content-Type", "application/json"), headers)
                return
            route = ROUTES.get(parts.path)
            if route is None:
                self._send(404, b"not found", "text/plain")
                return
            route(self)

        def _send(
            self,
            status: int,
            body: bytes,
            content_type: str,
            extra: dict[str, str] | None = None,
        ) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            for key, value in (extra or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(body)

        # -- routes ---------------------------------------------------------------------

        def article(self) -> None:
            self._send(200, ARTICLE_HTML.encode(), "text/html; charset=utf-8")

        def long_article(self) -> None:
            paragraphs = "".join(
                f"<p>Paragraph {i}: wind turbines convert the kinetic energy of moving air "
                "into electricity through a generator in the nacelle.</p>"
                for i in range(60)
            )
            body = f"<html><head><title>Wind</title></head><body><article>{paragraphs}</article>"
            self._send(200, (body + "</body></html>").encode(), "text/html; charset=utf-8")

        def plain(self) -> None:
            self._send(200, "Plain text with ünïcode.\nLine two.".encode(), "text/plain; charset=utf-8")

        def latin1(self) -> None:
            body = "<html><head><title>Café</title></head><body><p>Crème brûlée à Paris, "
            body += "un dessert français très apprécié des visiteurs.</p></body></html>"
            self._send(200, body.encode("latin-1"), "text/html; charset=iso-8859-1")

        def json_doc(self) -> None:
            self._send(200, b'{"answer": 42}', "application/json")

        def binary(self) -> None:
            self._send(200, b"\x89PNG\r\n\x1a\n" + bytes(256), "image/png")

        def no_type(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", "5")
            self.end_headers()
            self.wfile.write(b"hello")

        def redirect_local(self) -> None:
            self._send(302, b"", "text/plain", {"Location": "/article"})

        def redirect_private(self) -> None:
            self._send(302, b"", "text/plain", {"Location": "http://10.0.0.7/admin"})

        def redirect_metadata(self) -> None:
            self._send(301, b"", "text/plain", {"Location": "http://169.254.169.254/latest/meta-data/"})

        def redirect_loop(self) -> None:
            self._send(302, b"", "text/plain", {"Location": "/redirect-loop"})

        def redirect_file(self) -> None:
            self._send(302, b"", "text/plain", {"Location": "file:///etc/passwd"})

        def server_error(self) -> None:
            self._send(503, b"down", "text/plain")

        def huge(self) -> None:
            # A 1 GB body, generated lazily; the client must stop long before the end.
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(GIGABYTE))
            self.end_headers()
            chunk = b"all work and no play makes jack a dull boy\n" * 1_500
            sent = 0
            try:
                while sent < GIGABYTE and not stop_event.is_set():
                    self.wfile.write(chunk)
                    sent += len(chunk)
            except OSError:
                return

        def slow_drip(self) -> None:
            # One byte every 20 ms forever (until the client leaves): never a read timeout.
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", "100000000")
            self.end_headers()
            try:
                while not stop_event.is_set():
                    self.wfile.write(b"x")
                    self.wfile.flush()
                    time.sleep(0.02)
            except OSError:
                return

        def _send_encoded(self, body: bytes, encoding: str, content_type: str = "text/html; charset=utf-8") -> None:
            self._send(200, body, content_type, {"Content-Encoding": encoding})

        def gzip_page(self) -> None:
            self._send_encoded(encode(ARTICLE_HTML.encode(), "gzip"), "gzip")

        def deflate_zlib_page(self) -> None:
            self._send_encoded(encode(ARTICLE_HTML.encode(), "deflate-zlib"), "deflate")

        def deflate_raw_page(self) -> None:
            self._send_encoded(encode(ARTICLE_HTML.encode(), "deflate-raw"), "deflate")

        def br_page(self) -> None:
            self._send_encoded(encode(ARTICLE_HTML.encode(), "br"), "br")

        def gzip_gzip_page(self) -> None:
            twice = encode(encode(ARTICLE_HTML.encode(), "gzip"), "gzip")
            self._send_encoded(twice, "gzip, gzip")

        def gzip_members(self) -> None:
            # Two gzip members back to back (what concatenating .gz files gives): both count.
            body = encode(b"first member. ", "gzip") + encode(b"second member.", "gzip")
            self._send_encoded(body, "gzip", "text/plain; charset=utf-8")

        def chunked_gzip(self) -> None:
            # Transfer-Encoding: chunked, the compressed body split across small chunks.
            body = encode(ARTICLE_HTML.encode(), "gzip")
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Encoding", "gzip")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for start in range(0, len(body), 97):
                piece = body[start : start + 97]
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")

        def gzip_bomb(self) -> None:
            self._send_encoded(bomb(), "gzip", "text/plain; charset=utf-8")

        def gzip_large(self) -> None:
            self._send_encoded(encode(varied_text(600_000), "gzip"), "gzip", "text/plain; charset=utf-8")

        def gzip_corrupt(self) -> None:
            body = encode(ARTICLE_HTML.encode(), "gzip")
            self._send_encoded(body[:20] + b"\xff" * 40 + body[60:], "gzip")

        def unknown_encoding(self) -> None:
            self._send_encoded(b"(*&^%$#@!", "x-snappy-framed")

        def gzip_claimed_plain_sent(self) -> None:
            self._send_encoded(b"this is not gzip at all", "gzip", "text/plain")

        def script_only(self) -> None:
            body = b"<html><head><title>App</title></head><body><script>render()</script></body></html>"
            self._send(200, body, "text/html; charset=utf-8")

        def brave(self) -> None:
            body = (FIXTURES / "brave_web_search.json").read_bytes()
            self._send(200, body, "application/json")

        def searxng(self) -> None:
            body = (FIXTURES / "searxng_search.json").read_bytes()
            self._send(200, body, "application/json")

    ROUTES: dict[str, Callable[[Handler], None]] = {
        "/article": Handler.article,
        "/long": Handler.long_article,
        "/plain": Handler.plain,
        "/latin1": Handler.latin1,
        "/json": Handler.json_doc,
        "/binary": Handler.binary,
        "/no-type": Handler.no_type,
        "/redirect-local": Handler.redirect_local,
        "/redirect-private": Handler.redirect_private,
        "/redirect-metadata": Handler.redirect_metadata,
        "/redirect-loop": Handler.redirect_loop,
        "/redirect-file": Handler.redirect_file,
        "/server-error": Handler.server_error,
        "/huge": Handler.huge,
        "/slow-drip": Handler.slow_drip,
        "/slow/search": Handler.slow_drip,
        "/gzip": Handler.gzip_page,
        "/deflate-zlib": Handler.deflate_zlib_page,
        "/deflate-raw": Handler.deflate_raw_page,
        "/br": Handler.br_page,
        "/gzip-gzip": Handler.gzip_gzip_page,
        "/gzip-members": Handler.gzip_members,
        "/chunked-gzip": Handler.chunked_gzip,
        "/bomb": Handler.gzip_bomb,
        "/gzip-large": Handler.gzip_large,
        "/gzip-corrupt": Handler.gzip_corrupt,
        "/unknown-encoding": Handler.unknown_encoding,
        "/gzip-not-gzip": Handler.gzip_claimed_plain_sent,
        "/script-only": Handler.script_only,
        "/res/v1/web/search": Handler.brave,
        "/search": Handler.searxng,
    }
    return Handler


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients that hang up (size limits, deadlines, keep-alive) are expected here.
        return


@pytest.fixture
def local_server() -> Iterator[LocalServer]:
    """A ThreadingHTTPServer on 127.0.0.1 with a fresh request log."""
    recorder, scripted, stop_event = Recorder(), Scripted(), threading.Event()
    server = _QuietServer(("127.0.0.1", 0), _make_handler(recorder, scripted, stop_event))
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    port = server.server_address[1]
    try:
        yield LocalServer(f"http://127.0.0.1:{port}", port, recorder, scripted, stop_event)
    finally:
        stop_event.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def json_bytes(value: Any) -> bytes:
    return json.dumps(value).encode()
