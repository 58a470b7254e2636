"""Brave and SearXNG backends against a loopback server replaying their real JSON shapes."""

from __future__ import annotations

import json
import logging
import socket
from typing import Any

import pytest

from tools.builtin.web import (
    BraveSearchBackend,
    HttpOptions,
    SearchHit,
    SearxngSearchBackend,
    WebTool,
)
from tools.errors import ToolTimeoutError, UpstreamError

LocalServer = Any  # the conftest's LocalServer (conftest modules are not importable)
SECRET = "BSA-secret-token-0123456789"
FAST = HttpOptions(max_attempts=3, initial_wait=0.01, max_wait=0.05, read_timeout=2.0)


class Sleeps:
    """Records back-off sleeps instead of sleeping."""

    def __init__(self) -> None:
        self.calls: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


def _brave(server: LocalServer, sleeps: Sleeps | None = None, **kw: Any) -> BraveSearchBackend:
    return BraveSearchBackend(
        SECRET,
        endpoint=server.url("/res/v1/web/search"),
        options=FAST,
        sleep=sleeps or Sleeps(),
        **kw,
    )


def _searxng(server: LocalServer, sleeps: Sleeps | None = None) -> SearxngSearchBackend:
    return SearxngSearchBackend(server.base_url + "/", options=FAST, sleep=sleeps or Sleeps())


def test_brave_results_are_parsed_cleaned_and_filtered(local_server: LocalServer) -> None:
    hits = _brave(local_server).search("how do solar panels work", count=10)
    assert hits == [
        SearchHit(
            title="How Do Solar Panels Work? | Department of Energy",
            url="https://www.energy.gov/eere/solar/how-does-solar-work",
            snippet="Learn the basics of how solar energy technology works & how panels "
            "convert sunlight into electricity.",
        ),
        SearchHit(
            title="Solar panel - Wikipedia",
            url="https://en.wikipedia.org/wiki/Solar_panel",
            snippet="A solar panel is a device that converts sunlight into electricity by "
            "using photovoltaic (PV) cells.",
        ),
        SearchHit(
            title="How Solar Cells Work | HowStuffWorks",
            url="https://science.howstuffworks.com/environmental/energy/solar-cell.htm",
            snippet="Solar cells are made of semiconductors such as silicon.",
        ),
    ]


def test_brave_request_carries_key_header_and_parameters(local_server: LocalServer) -> None:
    _brave(local_server, country="pt", search_lang="en").search("solar", count=50)
    seen = local_server.recorder.requests[-1]
    assert seen["headers"]["x-subscription-token"] == SECRET
    assert seen["headers"]["accept"] == "application/json"
    assert seen["query"]["q"] == ["solar"]
    assert seen["query"]["count"] == ["20"]  # clamped to Brave's maximum
    assert seen["query"]["country"] == ["pt"]
    assert seen["query"]["search_lang"] == ["en"]
    assert seen["query"]["text_decorations"] == ["false"]


def test_brave_count_limits_the_hits(local_server: LocalServer) -> None:
    assert len(_brave(local_server).search("solar", count=2)) == 2


def test_brave_retries_429_honouring_retry_after(local_server: LocalServer) -> None:
    path = "/res/v1/web/search"
    local_server.scripted.push(path, 429, b'{"type":"ErrorResponse"}', {"Retry-After": "0.03"})
    local_server.scripted.push(path, 503, b"busy")
    sleeps = Sleeps()
    hits = _brave(local_server, sleeps).search("solar", count=1)
    assert [hit.url for hit in hits] == ["https://www.energy.gov/eere/solar/how-does-solar-work"]
    assert len(local_server.recorder.requests) == 3
    assert sleeps.calls[0] == pytest.approx(0.03)
    assert len(sleeps.calls) == 2


def test_brave_gives_up_after_max_attempts(local_server: LocalServer) -> None:
    for _ in range(3):
        local_server.scripted.push("/res/v1/web/search", 502, b"bad gateway")
    with pytest.raises(UpstreamError, match=r"Brave Search failed \(HTTP 502\)") as info:
        _brave(local_server).search("solar", count=3)
    assert info.value.retryable is True
    assert len(local_server.recorder.requests) == 3


def test_brave_rejected_key_is_not_retried_and_not_leaked(
    local_server: LocalServer, caplog: pytest.LogCaptureFixture
) -> None:
    local_server.scripted.push("/res/v1/web/search", 401, b'{"type":"ErrorResponse"}')
    caplog.set_level(logging.DEBUG)
    backend = _brave(local_server)
    with pytest.raises(UpstreamError, match="rejected the API key") as info:
        backend.search("solar", count=3)
    assert info.value.retryable is False
    assert len(local_server.recorder.requests) == 1
    assert SECRET not in str(info.value)
    assert SECRET not in repr(backend)
    assert SECRET not in caplog.text


def test_brave_garbage_body_is_an_upstream_error(local_server: LocalServer) -> None:
    local_server.scripted.push("/res/v1/web/search", 200, b"<html>oops</html>")
    with pytest.raises(UpstreamError, match="not JSON"):
        _brave(local_server).search("solar", count=3)
    local_server.scripted.push("/res/v1/web/search", 200, b"[1, 2, 3]")
    with pytest.raises(UpstreamError, match="unexpected document"):
        _brave(local_server).search("solar", count=3)
    local_server.scripted.push("/res/v1/web/search", 200, b'{"web": {"results": "nope"}}')
    assert _brave(local_server).search("solar", count=3) == []


def test_oversized_body_is_refused(local_server: LocalServer) -> None:
    big = json.dumps({"web": {"results": [], "pad": "x" * 5_000}}).encode()
    local_server.scripted.push("/res/v1/web/search", 200, big)
    backend = BraveSearchBackend(
        SECRET,
        endpoint=local_server.url("/res/v1/web/search"),
        options=HttpOptions(max_bytes=1_000, max_attempts=1),
    )
    with pytest.raises(UpstreamError, match="larger than 1000 bytes"):
        backend.search("solar", count=3)


def test_unreachable_service_is_retried_then_reported() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    sleeps = Sleeps()
    backend = SearxngSearchBackend(f"http://127.0.0.1:{port}", options=FAST, sleep=sleeps)
    with pytest.raises(UpstreamError, match="SearXNG could not be reached"):
        backend.search("solar", count=3)
    assert len(sleeps.calls) == 2


def test_timeout_is_reported_as_timeout(local_server: LocalServer) -> None:
    # The slow-drip route sends headers at once, then one byte per 20 ms: a read timeout
    # of 10 ms expires while the body is read.
    sleeps = Sleeps()
    backend = SearxngSearchBackend(
        local_server.url("/slow"),
        options=HttpOptions(read_timeout=0.01, max_attempts=2, initial_wait=0.0, max_wait=0.0),
        sleep=sleeps,
    )
    with pytest.raises(ToolTimeoutError, match="SearXNG did not answer in time"):
        backend.search("solar", count=3)
    assert len(sleeps.calls) == 1


def test_searxng_results_are_parsed_and_deduplicated(local_server: LocalServer) -> None:
    hits = _searxng(local_server).search("how do solar panels work", count=10)
    assert [hit.url for hit in hits] == [
        "https://www.energy.gov/eere/solar/how-does-solar-work",
        "https://en.wikipedia.org/wiki/Solar_panel",
        "https://www.nationalgrid.com/stories/energy-explained/how-does-solar-power-work",
    ]
    assert hits[0].snippet.startswith("Learn the basics of how solar energy technology works &")
    seen = local_server.recorder.requests[-1]
    assert seen["path"] == "/search"
    assert seen["query"]["format"] == ["json"]
    assert seen["query"]["q"] == ["how do solar panels work"]


def test_searxng_without_json_format_explains_the_setting(local_server: LocalServer) -> None:
    local_server.scripted.push("/search", 403, b"Forbidden", {"Content-Type": "text/html"})
    with pytest.raises(UpstreamError, match=r"search\.formats") as info:
        _searxng(local_server).search("solar", count=3)
    assert info.value.retryable is False


def test_web_tool_search_end_to_end(local_server: LocalServer) -> None:
    tool = WebTool(search_backend=_searxng(local_server))
    result = tool(action="search", query="solar panels", count=2)
    assert result["status"] == "success"
    assert result["data"]["backend"] == "searxng"
    assert result["data"]["query"] == "solar panels"
    assert len(result["data"]["results"]) == 2
    assert set(result["data"]["results"][0]) == {"title", "url", "snippet"}


def test_web_tool_reports_upstream_failure(local_server: LocalServer) -> None:
    local_server.scripted.push("/res/v1/web/search", 401, b"{}")
    result = WebTool(search_backend=_brave(local_server))(action="search", query="solar")
    assert result["status"] == "error"
    assert result["error_type"] == "upstream_error"
    assert SECRET not in json.dumps(result)


def test_old_name_web_search_with_its_old_arguments(local_server: LocalServer) -> None:
    from tools.builtin.legacy import legacy_tools

    web = WebTool(search_backend=_brave(local_server))
    (web_search,) = [t for t in legacy_tools(web=web) if t.name == "web_search"]
    result = web_search(query="solar", num_results=1)
    assert result["status"] == "success"
    assert result["data"]["backend"] == "brave"
    assert len(result["data"]["results"]) == 1
