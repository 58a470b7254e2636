"""WebTool through the entry the model uses; extraction and search helpers without network."""

from __future__ import annotations

from typing import Any

import pytest

from tools import LocalToolRegistry
from tools.builtin.web import (
    BraveSearchBackend,
    FetchedPage,
    FetchLimits,
    SearchHit,
    SearxngSearchBackend,
    TrafilaturaExtractor,
    WebTool,
    search_backend_from_env,
)
from tools.builtin.web.search import plain_text


class FakeBackend:
    """A hand-written search backend."""

    name = "fake"

    def __init__(self, hits: list[SearchHit]) -> None:
        self.hits = hits
        self.calls: list[tuple[str, int]] = []

    def search(self, query: str, *, count: int) -> list[SearchHit]:
        self.calls.append((query, count))
        return self.hits[:count]


def _page(body: str | bytes, content_type: str = "text/html", charset: str | None = None) -> FetchedPage:
    raw = body.encode() if isinstance(body, str) else body
    return FetchedPage(
        url="https://example.com/a",
        final_url="https://example.com/a",
        status_code=200,
        content_type=content_type,
        charset=charset,
        body=raw,
        truncated=False,
    )


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/",
        "http://169.254.169.254/",
        "http://localhost/",
        "http://[::1]/",
        "http://2130706433/",
        "http://0x7f.1/",
        "http://[::ffff:169.254.169.254]/",
    ],
)
def test_default_policy_refuses_internal_urls(url: str) -> None:
    result = WebTool()(action="load", url=url)
    assert result["status"] == "error"
    assert result["error_type"] == "permission_denied"
    assert result["error"].startswith(f"Refused to load {url}")
    assert result["retryable"] is False


def test_search_without_backend_explains_configuration() -> None:
    result = WebTool()(action="search", query="solar panels")
    assert result["status"] == "error"
    assert result["error_type"] == "execution_error"
    assert "BRAVE_API_KEY" in result["error"]
    assert "SEARXNG_URL" in result["error"]
    assert "action 'load'" in result["error"]


def test_search_with_a_backend_returns_hits_and_a_note_when_empty() -> None:
    hit = SearchHit(title="T", url="https://example.com/", snippet="S")
    backend = FakeBackend([hit, hit, hit])
    data = WebTool(search_backend=backend)(action="search", query="q", count=2)["data"]
    assert data == {
        "query": "q",
        "backend": "fake",
        "results": [hit.model_dump(), hit.model_dump()],
    }
    assert backend.calls == [("q", 2)]
    empty = WebTool(search_backend=FakeBackend([]))(action="search", query="q")["data"]
    assert empty["results"] == []
    assert "No results" in empty["note"]


@pytest.mark.parametrize(
    ("arguments", "fragment"),
    [
        ({"action": "search", "query": ""}, "query"),
        ({"action": "search", "query": "q", "count": 50}, "count"),
        ({"action": "load", "url": "https://example.com", "max_chars": 10}, "max_chars"),
        ({"action": "load", "url": "https://example.com", "query": "x"}, "query"),
        ({"action": "load"}, "url"),
    ],
)
def test_bad_arguments_are_validation_errors(arguments: dict[str, Any], fragment: str) -> None:
    result = WebTool()(**arguments)
    assert result["error_type"] == "validation_error"
    assert fragment in result["error"]


def test_unknown_action_lists_the_actions() -> None:
    result = WebTool()(action="browse", url="https://example.com")
    assert result["error_type"] == "unknown_action"
    assert "search" in result["error"]
    assert "load" in result["error"]


def test_schema_exports_in_strict_mode_with_both_actions() -> None:
    registry = LocalToolRegistry()
    registry.register(WebTool())
    [tool] = registry.to_openai_tools(strict=True)
    function = tool["function"]
    assert function["name"] == "web"
    assert function["strict"] is True
    params = function["parameters"]
    assert params["properties"]["action"]["enum"] == ["search", "load"]
    assert set(params["properties"]) == {
        "action",
        "query",
        "count",
        "url",
        "max_chars",
        "include_links",
    }


def test_allow_lists_and_fetcher_are_exclusive() -> None:
    from tools.builtin.web import PageFetcher

    with pytest.raises(ValueError, match="not both"):
        WebTool(fetcher=PageFetcher(), allow_networks=["127.0.0.1/32"])


def test_fetch_limits_are_validated() -> None:
    with pytest.raises(ValueError, match="max_bytes"):
        FetchLimits(max_bytes=0)
    with pytest.raises(ValueError, match="timeouts"):
        FetchLimits(total_timeout=0)
    with pytest.raises(ValueError, match="max_compression_ratio"):
        FetchLimits(max_compression_ratio=0.5)
    with pytest.raises(ValueError, match="max_compression_ratio"):
        FetchLimits(max_compression_ratio=float("nan"))


def test_extractor_keeps_main_text_and_finds_title_and_links() -> None:
    pytest.importorskip("trafilatura")
    html = (
        "<html><head><title> A  Title </title><base href='https://cdn.example.com/x/'></head>"
        "<body><nav><a href='/home'>Home</a></nav><article><p>"
        + "Photosynthesis converts light energy into chemical energy in plants. "
        * 5
        + "</p><a href='page#frag'>Next page</a><a href='mailto:a@b.c'>Mail</a>"
        "<a href='javascript:alert(1)'>JS</a><a href='page'>Same</a></article></body></html>"
    )
    page = TrafilaturaExtractor().extract(_page(html), include_links=True)
    assert page.title == "A Title"
    assert "Photosynthesis converts light energy" in page.text
    assert [(link.text, link.url) for link in page.links] == [
        ("Home", "https://cdn.example.com/home"),
        ("Next page", "https://cdn.example.com/x/page"),
    ]


@pytest.mark.parametrize(
    "html",
    [
        "",
        "<<<>>>",
        "<html><body><div>" * 1_500,
        "<a href='http://[::1'>broken</a><title>unterminated",
        "\x00\x01\x02 binary-ish",
    ],
)
def test_extractor_survives_hostile_markup(html: str) -> None:
    pytest.importorskip("trafilatura")
    page = TrafilaturaExtractor().extract(_page(html), include_links=True)
    assert isinstance(page.text, str)


def test_non_html_is_returned_as_text_and_charset_is_honoured() -> None:
    extractor = TrafilaturaExtractor()
    body = "Grüße aus Köln".encode("latin-1")
    assert extractor.extract(_page(body, "text/plain", "latin-1"), include_links=True).text == ("Grüße aus Köln")
    unknown = extractor.extract(_page(body, "text/plain", "no-such-charset"), include_links=False)
    assert unknown.text.startswith("Gr")
    assert extractor.extract(_page('{"a": 1}', "application/json"), include_links=False).links == ()


def test_body_cut_inside_a_multibyte_character_still_decodes() -> None:
    body = "naïve café".encode()[:-1]
    assert _page(body, "text/plain").text() == "naïve caf\ufffd"


def test_plain_text_strips_markup_and_bounds_length() -> None:
    assert plain_text("A <strong>bold</strong> &amp; <em>brave</em>  move") == "A bold & brave move"
    assert plain_text(None) == ""
    assert plain_text(["list"]) == ""
    assert len(plain_text("x " * 1_000)) == 600


def test_search_backend_from_env() -> None:
    assert search_backend_from_env({}) is None
    assert search_backend_from_env({"BRAVE_API_KEY": "  "}) is None
    brave = search_backend_from_env({"BRAVE_API_KEY": "k", "SEARXNG_URL": "http://s:8080"})
    assert isinstance(brave, BraveSearchBackend)
    assert "k'" not in repr(brave)
    searx = search_backend_from_env({"SEARXNG_URL": "http://searxng:8080/"})
    assert isinstance(searx, SearxngSearchBackend)
    with pytest.raises(ValueError, match="http"):
        search_backend_from_env({"SEARXNG_URL": "searxng:8080"})


def test_brave_backend_needs_a_key() -> None:
    with pytest.raises(ValueError, match="api_key"):
        BraveSearchBackend("")


def test_public_names_are_importable_from_the_package() -> None:
    import tools.builtin.web as web

    assert sorted(web.__all__) == sorted(set(web.__all__))
    for name in web.__all__:
        assert getattr(web, name) is not None
