"""Web part of ``scripts/bench_builtins.py``: loading a compressed page (also runnable alone).

Run: ``python scripts/_bench_web.py [--runs 50]``. A loopback server sends a 300 kB HTML page
as it is and gzipped; prints the median ms of ``PageFetcher.fetch`` for each, against a plain
``requests.get`` of the same URLs (which decodes gzip too) measured in the same run, and the
median of a whole ``web`` load (fetch + extraction) of the gzipped page. No assertions.
"""

from __future__ import annotations

import argparse
import gzip
import statistics
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tools.builtin.web import AddressPolicy, PageFetcher, WebTool  # noqa: E402

PAGE = (
    "<html><head><title>Bench</title></head><body><article>"
    + "".join(f"<p>Paragraph {i}: solar cells turn light into current; panels age slowly.</p>" for i in range(4_000))
    + "</article></body></html>"
).encode()
PAGE_GZ = gzip.compress(PAGE)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        body, extra = (PAGE_GZ, {"Content-Encoding": "gzip"}) if self.path == "/gz" else (PAGE, {})
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        for key, value in extra.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)


def _median_ms(func: Callable[[], object], runs: int) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        func()
        samples.append((time.perf_counter() - start) * 1000.0)
    return statistics.median(samples)


def run(runs: int = 50) -> dict[str, Any]:
    """Median ms of fetching the plain and gzipped page, with ``requests.get`` baselines."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    fetcher = PageFetcher(policy=AddressPolicy.build(allow_networks=["127.0.0.1/32"]))
    tool = WebTool(fetcher=fetcher)
    try:
        if fetcher.fetch(base + "/gz").body != PAGE:
            raise SystemExit("the gzipped page was not decoded")
        figures = {
            "requests_plain_ms": _median_ms(lambda: requests.get(base + "/plain", timeout=10).content, runs),
            "fetch_plain_ms": _median_ms(lambda: fetcher.fetch(base + "/plain"), runs),
            "requests_gzip_ms": _median_ms(lambda: requests.get(base + "/gz", timeout=10).content, runs),
            "fetch_gzip_ms": _median_ms(lambda: fetcher.fetch(base + "/gz"), runs),
            "web_load_gzip_ms": _median_ms(lambda: tool(action="load", url=base + "/gz"), max(3, runs // 5)),
        }
    finally:
        server.shutdown()
        server.server_close()
    figures = {key: round(value, 2) for key, value in figures.items()}
    figures["ratio_plain"] = round(figures["fetch_plain_ms"] / figures["requests_plain_ms"], 2)
    figures["ratio_gzip"] = round(figures["fetch_gzip_ms"] / figures["requests_gzip_ms"], 2)
    print(f"web: {len(PAGE) // 1000} kB page ({len(PAGE_GZ) // 1000} kB gzipped), median of {runs}")
    for kind in ("plain", "gzip"):
        ours, theirs = figures[f"fetch_{kind}_ms"], figures[f"requests_{kind}_ms"]
        ratio = figures[f"ratio_{kind}"]
        print(f"  PageFetcher.fetch {kind:5}  {ours:8.2f} ms   requests.get {theirs:8.2f} ms   ratio {ratio}")
    print(f"  web load (gzip, with extraction) {figures['web_load_gzip_ms']:.2f} ms")
    return figures


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=50)
    run(parser.parse_args().runs)
