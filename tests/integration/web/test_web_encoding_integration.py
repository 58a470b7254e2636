"""Compressed pages (``Content-Encoding``) from a real loopback server: decoded, bounded, refused."""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest

from tools.builtin.web import AddressPolicy, FetchLimits, PageFetcher, WebTool

pytest.importorskip("trafilatura")

LocalServer = Any  # the conftest's LocalServer (conftest modules are not importable)


def _fetcher(limits: FetchLimits | None = None) -> PageFetcher:
    return PageFetcher(policy=AddressPolicy.build(allow_networks=["127.0.0.1/32"]), limits=limits)


def _load(server: LocalServer, path: str, limits: FetchLimits | None = None, **kwargs: Any) -> dict[str, Any]:
    return WebTool(fetcher=_fetcher(limits))(action="load", url=server.url(path), **kwargs)


@pytest.mark.parametrize("path", ["/gzip", "/deflate-zlib", "/deflate-raw", "/gzip-gzip", "/chunked-gzip"])
def test_compressed_pages_are_decoded(local_server: LocalServer, path: str) -> None:
    result = _load(local_server, path)
    assert result["status"] == "success", result
    data = result["data"]
    assert data["title"] == "Solar Panels & You"
    assert "photovoltaic cells made of silicon" in data["text"]
    assert data["truncated"] is False
    assert "note" not in data


def test_brotli_page_is_decoded(local_server: LocalServer) -> None:
    pytest.importorskip("brotli")
    result = _load(local_server, "/br")
    assert result["status"] == "success", result
    assert "photovoltaic cells made of silicon" in result["data"]["text"]


def test_the_fetcher_asks_for_the_encodings_it_can_decode(local_server: LocalServer) -> None:
    _load(local_server, "/plain")
    offered = [e.strip() for e in local_server.recorder.requests[-1]["headers"]["accept-encoding"].split(",")]
    if importlib.util.find_spec("brotli") is None:
        assert offered == ["gzip", "deflate"]
    else:
        assert offered == ["gzip", "deflate", "br"]


def test_every_gzip_member_is_read(local_server: LocalServer) -> None:
    page = _fetcher().fetch(local_server.url("/gzip-members"))
    assert page.body == b"first member. second member."


def test_max_bytes_applies_to_the_decoded_body(local_server: LocalServer) -> None:
    # 600 kB of text, about 185 kB gzipped: the limit counts decoded bytes, and an ordinary
    # page over it is cut (with a note), not refused.
    page = _fetcher(FetchLimits(max_bytes=250_000)).fetch(local_server.url("/gzip-large"))
    assert page.truncated is True
    assert len(page.body) == 250_000
    assert all(word.isalnum() for word in page.body.split()[:-1])  # decoded text, not gzip
    result = _load(local_server, "/gzip-large", FetchLimits(max_bytes=250_000))
    assert result["status"] == "success", result
    assert "250,000-byte download limit" in result["data"]["note"]


def test_exact_fit_is_not_flagged_truncated(local_server: LocalServer) -> None:
    page = _fetcher(FetchLimits(max_bytes=600_000)).fetch(local_server.url("/gzip-large"))
    assert (len(page.body), page.truncated) == (600_000, False)


def test_decompression_bomb_is_refused(local_server: LocalServer) -> None:
    # 50 MB of "A" in 49 kB of gzip: refused once the decoded bytes pass max_bytes at a
    # compression ratio no real page has; never decoded past the limit.
    result = _load(local_server, "/bomb", FetchLimits(max_bytes=1_000_000))
    assert result["status"] == "error", result
    assert result["error_type"] == "execution_error"
    assert "decompression bomb" in result["error"]
    assert result["retryable"] is False
    assert result["details"]["max_bytes"] == 1_000_000


def test_bomb_is_refused_with_the_default_limits(local_server: LocalServer) -> None:
    result = _load(local_server, "/bomb")
    assert result["status"] == "error"
    assert "decompression bomb" in result["error"]


def test_unknown_encoding_is_a_clear_error(local_server: LocalServer) -> None:
    result = _load(local_server, "/unknown-encoding")
    assert result["status"] == "error"
    assert result["error_type"] == "execution_error"
    assert "x-snappy-framed" in result["error"]
    assert "gzip, deflate" in result["error"]
    assert result["details"]["content_encoding"] == "x-snappy-framed"


@pytest.mark.parametrize("path", ["/gzip-corrupt", "/gzip-not-gzip"])
def test_corrupt_compressed_data_is_a_clear_error(local_server: LocalServer, path: str) -> None:
    result = _load(local_server, path)
    assert result["status"] == "error"
    assert result["error_type"] == "execution_error"
    assert "could not be decoded" in result["error"]
    assert "gzip" in result["error"]


def test_hostile_encoding_headers(local_server: LocalServer) -> None:
    body = b"plain words"
    # identity and empty entries are no encoding at all
    local_server.scripted.push("/enc", 200, body, {"Content-Type": "text/plain", "Content-Encoding": "identity, "})
    assert _fetcher().fetch(local_server.url("/enc")).body == body
    # a long stack of encodings is refused before anything is decoded
    stacked = ", ".join(["gzip"] * 50)
    local_server.scripted.push("/enc", 200, body, {"Content-Type": "text/plain", "Content-Encoding": stacked})
    result = WebTool(fetcher=_fetcher())(action="load", url=local_server.url("/enc"))
    assert result["status"] == "error"
    assert "50 content encodings" in result["error"]
