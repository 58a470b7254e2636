"""The circuit breaker judges the web tool, not the URLs it is given (real loopback server)."""

from __future__ import annotations

import socket
from typing import Any

import pytest

from tools import LocalToolRegistry
from tools.builtin.web import (
    AddressPolicy,
    BraveSearchBackend,
    FetchLimits,
    HttpOptions,
    PageFetcher,
    SearxngSearchBackend,
    WebTool,
)

pytest.importorskip("trafilatura")

LocalServer = Any  # the conftest's LocalServer (conftest modules are not importable)
NO_RETRY = HttpOptions(max_attempts=1, read_timeout=2.0)


def _free_port() -> int:
    with socket.socket() as probe:  # free a moment ago, nothing listens now
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _registry(tool: WebTool) -> LocalToolRegistry:
    registry = LocalToolRegistry(failure_threshold=2)
    registry.register(tool, retry=None)
    return registry


def _fetcher(limits: FetchLimits | None = None) -> PageFetcher:
    return PageFetcher(policy=AddressPolicy.build(allow_networks=["127.0.0.1/32"]), limits=limits)


def test_broken_urls_in_a_row_leave_the_breaker_closed(local_server: LocalServer) -> None:
    # 3 s: long enough for every other page on a loaded machine, short enough for the slow drip.
    registry = _registry(WebTool(fetcher=_fetcher(FetchLimits(total_timeout=3.0))))
    broken = {
        local_server.url("/nope"): "execution_error",  # 404
        local_server.url("/server-error"): "upstream_error",  # 503
        f"http://127.0.0.1:{_free_port()}/": "upstream_error",  # connection refused
        "http://10.0.0.7/admin": "permission_denied",  # the SSRF policy
        local_server.url("/script-only"): "execution_error",  # no readable text
        local_server.url("/bomb"): "execution_error",  # too large: a decompression bomb
        local_server.url("/unknown-encoding"): "execution_error",
        local_server.url("/binary"): "execution_error",
        local_server.url("/slow-drip"): "timeout",  # this page is slow, not the tool
    }
    for url, error_type in broken.items():
        result = registry("web", action="load", url=url)
        assert (result["status"], result["error_type"]) == ("error", error_type), (url, result)
    assert registry.breaker("web", action="load").state == "closed"  # type: ignore[union-attr]
    ok = registry("web", action="load", url=local_server.url("/article"))
    assert ok["status"] == "success", ok


def test_a_page_with_no_readable_text_is_an_error_for_the_model(local_server: LocalServer) -> None:
    result = WebTool(fetcher=_fetcher())(action="load", url=local_server.url("/script-only"))
    assert result["status"] == "error"
    assert result["error_type"] == "execution_error"
    assert "no readable text" in result["error"]
    assert "another page" in result["error"]
    assert result["retryable"] is False


def test_a_dead_search_backend_opens_the_breaker() -> None:
    backend = SearxngSearchBackend(f"http://127.0.0.1:{_free_port()}", options=NO_RETRY)
    registry = _registry(WebTool(search_backend=backend))
    for _ in range(2):
        assert registry("web", action="search", query="solar")["error_type"] == "upstream_error"
    assert registry.breaker("web", action="search").state == "open"  # type: ignore[union-attr]
    assert registry("web", action="search", query="solar")["error_type"] == "circuit_open"
    # One breaker per action: a dead search backend does not stop page loading.
    assert registry.breaker("web", action="load").state == "closed"  # type: ignore[union-attr]


def test_rate_limited_search_backend_opens_the_breaker(local_server: LocalServer) -> None:
    for _ in range(2):
        local_server.scripted.push("/search", 429, b"slow down", {"Retry-After": "0"})
    registry = _registry(WebTool(search_backend=SearxngSearchBackend(local_server.base_url, options=NO_RETRY)))
    for _ in range(2):
        assert registry("web", action="search", query="solar")["error_type"] == "upstream_error"
    assert registry.breaker("web", action="search").state == "open"  # type: ignore[union-attr]


def test_a_query_the_backend_refuses_does_not_trip(local_server: LocalServer) -> None:
    for _ in range(3):
        local_server.scripted.push("/search", 400, b"bad query")
    registry = _registry(WebTool(search_backend=SearxngSearchBackend(local_server.base_url, options=NO_RETRY)))
    for _ in range(3):
        result = registry("web", action="search", query="solar")
        assert result["error_type"] == "upstream_error"
        assert "HTTP 400" in result["error"]
    assert registry.breaker("web", action="search").state == "closed"  # type: ignore[union-attr]


def test_brave_refusing_a_query_does_not_trip_but_a_rejected_key_does(local_server: LocalServer) -> None:
    path = "/res/v1/web/search"
    backend = BraveSearchBackend("BSA-key-0123456789", endpoint=local_server.url(path), options=NO_RETRY)
    registry = _registry(WebTool(search_backend=backend))
    for _ in range(3):
        local_server.scripted.push(path, 422, b'{"type": "ErrorResponse"}')
        assert "shorter, simpler query" in registry("web", action="search", query="q")["error"]
    assert registry.breaker("web", action="search").state == "closed"  # type: ignore[union-attr]
    for _ in range(2):
        local_server.scripted.push(path, 401, b'{"type": "ErrorResponse"}')
        assert "rejected the API key" in registry("web", action="search", query="q")["error"]
    assert registry.breaker("web", action="search").state == "open"  # type: ignore[union-attr]
