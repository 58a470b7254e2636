"""``WebTool`` (name ``web``): search the web and read pages, as one two-action tool.

``WebSearchTool`` (``web_search``) and ``WebLoadTool`` (``load_web_page``) expose the same
actions as single-purpose tools for the old function names.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, Field

from tools.builtin.web.address import AddressPolicy, IPNetwork
from tools.builtin.web.config import BRAVE_API_KEY_VAR, SEARXNG_URL_VAR
from tools.builtin.web.extract import PageExtractor, TrafilaturaExtractor
from tools.builtin.web.fetch import PageFetcher
from tools.builtin.web.search import SearchBackend, SearchHit
from tools.composite import ActionStrategy, CompositeTool
from tools.errors import ToolError
from tools.manual import ToolCategory, ToolManual

SEARCH_NOT_CONFIGURED = (
    "Web search is not configured, so action 'search' is unavailable. Use action 'load' "
    "with a URL you already know instead. (To enable search, the application sets "
    f"{BRAVE_API_KEY_VAR} for Brave Search or {SEARXNG_URL_VAR} for a SearXNG instance, or "
    "constructs WebTool(search_backend=BraveSearchBackend(api_key=...)) or "
    "WebTool(search_backend=SearxngSearchBackend(base_url=...)).)"
)


_MAX_CHARS = 100_000


class WebSearchRequest(BaseModel):
    """A web search query."""

    query: str = Field(
        min_length=1,
        max_length=400,
        description="What to search the web for, in a few key words, e.g. 'python 3.13 release notes'.",
    )
    count: int = Field(default=5, ge=1, le=20, description="How many results to return (1-20).")


class WebLoadRequest(BaseModel):
    """A web page to read."""

    url: str = Field(
        min_length=1,
        max_length=2_048,
        description="Absolute http:// or https:// URL of the page to read, e.g. a search result's url.",
    )
    max_chars: int = Field(
        default=20_000,
        ge=500,
        le=_MAX_CHARS,
        description="Longest text to return, in characters; longer pages are cut with a note.",
    )
    include_links: bool = Field(default=False, description="Also return the page's links (text and URL, up to 100).")


class WebSearchResponse(BaseModel):
    """Results of a web search."""

    query: str
    backend: str
    results: list[SearchHit]
    note: str | None = None


class WebLink(BaseModel):
    """A link on a loaded page."""

    text: str
    url: str


class WebPage(BaseModel):
    """The readable content of a loaded page."""

    url: str
    final_url: str
    title: str | None = None
    content_type: str
    text: str
    truncated: bool
    note: str | None = None
    links: list[WebLink] | None = None


class WebSearchAction(ActionStrategy[WebSearchRequest]):
    """Action ``search``: ask the configured search backend.

    Args:
        backend: The search service; None makes the action explain how to configure one.
    """

    action_name = "search"
    risk = "moderate"
    mutating = False
    description = "Search the web; returns title, url and snippet for each result."

    def __init__(self, backend: SearchBackend | None) -> None:
        self._backend = backend

    def execute(self, request: WebSearchRequest) -> dict[str, Any]:
        """Run the search; a missing backend or a failing service is a clear ToolError."""
        if self._backend is None:
            raise ToolError(SEARCH_NOT_CONFIGURED, retryable=False)
        hits = self._backend.search(request.query, count=request.count)
        note = None if hits else "No results. Try fewer or different words."
        response = WebSearchResponse(query=request.query, backend=self._backend.name, results=hits, note=note)
        return response.model_dump(mode="json", exclude_none=True)


class WebLoadAction(ActionStrategy[WebLoadRequest]):
    """Action ``load``: fetch one page safely and return its main text.

    Args:
        fetcher: Loads pages within the address policy and limits.
        extractor: Turns the page into readable text.
    """

    action_name = "load"
    risk = "moderate"
    mutating = False
    description = "Read one web page by URL; returns its main text (and links if asked)."

    def __init__(self, fetcher: PageFetcher, extractor: PageExtractor) -> None:
        self._fetcher = fetcher
        self._extractor = extractor

    def execute(self, request: WebLoadRequest) -> dict[str, Any]:
        """Load and extract; refusals, limits, HTTP failures and empty pages are clear ToolErrors.

        All of them are about the URL asked for, so none trips the circuit breaker.
        """
        page = self._fetcher.fetch(request.url)
        extracted = self._extractor.extract(page, include_links=request.include_links)
        if not extracted.text:
            raise ToolError(
                f"{page.final_url} has no readable text (the page is empty, or builds its content "
                "with JavaScript, which is not run). Load another page, or search for the information.",
                details={"final_url": page.final_url, "content_type": page.content_type},
            )
        notes: list[str] = []
        if page.truncated:
            notes.append(
                f"The page is larger than the {self._fetcher.limits.max_bytes:,}-byte download "
                "limit; only its beginning was read."
            )
        text = extracted.text
        cut = len(text) > request.max_chars
        if cut:
            text = _cut(text, request.max_chars)
            hint = (
                f" Call again with a larger max_chars (up to {_MAX_CHARS}) to read more."
                if request.max_chars < _MAX_CHARS
                else ""
            )
            notes.append(f"Text cut at {len(text):,} of {len(extracted.text):,} characters.{hint}")
        links = [WebLink(text=link.text, url=link.url) for link in extracted.links] if request.include_links else None
        result = WebPage(
            url=page.url,
            final_url=page.final_url,
            title=extracted.title,
            content_type=page.content_type,
            text=text,
            truncated=page.truncated or cut,
            note=" ".join(notes) or None,
            links=links,
        )
        return result.model_dump(mode="json", exclude_none=True)


def _cut(text: str, limit: int) -> str:
    """Cut at ``limit`` characters, at a whitespace boundary when one is near."""
    head = text[:limit]
    boundary = head.rfind(" ", max(0, limit - 200))
    return (head[:boundary] if boundary > 0 else head).rstrip()


def _default_fetcher(allow_hosts: Iterable[str], allow_networks: Iterable[str | IPNetwork]) -> PageFetcher:
    policy = AddressPolicy.build(allow_hosts=allow_hosts, allow_networks=allow_networks)
    return PageFetcher(policy=policy)


def _check_fetcher_args(
    fetcher: PageFetcher | None,
    allow_hosts: Iterable[str],
    allow_networks: Iterable[str | IPNetwork],
) -> PageFetcher:
    if fetcher is None:
        return _default_fetcher(allow_hosts, allow_networks)
    if bool(tuple(allow_hosts)) or bool(tuple(allow_networks)):
        raise ValueError(
            "Pass allow_hosts/allow_networks either to WebTool or to the PageFetcher's AddressPolicy, not both."
        )
    return fetcher


class WebTool(CompositeTool):
    """Search the web and read pages: actions ``search`` and ``load``.

    Hostile input never escapes as an exception: arguments outside the schema are a
    ``validation_error``; URLs to non-public addresses (also via redirects, numeric IPv4
    spellings or DNS) are ``permission_denied``; oversized pages are cut at the byte limit
    and long texts at ``max_chars``, both with a note; slow servers end in ``timeout``;
    binary content is refused. See :class:`~tools.builtin.web.fetch.PageFetcher`.

    Args:
        search_backend: The search service (Brave, SearXNG, ...); without one, ``search``
            answers with an error explaining how to configure it and ``load`` still works.
        fetcher: Page loader with its address policy and limits (default: public addresses
            only, 2 MB, 20 s, 5 redirects).
        extractor: Readable-text extractor (default: trafilatura, the ``web`` extra).
        allow_hosts: Host names the default fetcher may load even on private addresses.
        allow_networks: Networks (CIDR) the default fetcher may load (tests, intranets).

    Raises:
        ValueError: When ``allow_hosts``/``allow_networks`` are given with a ``fetcher``, or
            a network is not valid CIDR notation.
    """

    name = "web"
    description = (
        "Search the web and read web pages. Use action 'search' with a query to find pages "
        "(title, url, snippet), then action 'load' with a url to read a page's main text."
    )
    version = "1.0.0"
    manual = ToolManual(
        name="web",
        display_name="Web",
        description=(
            "Searches the web and reads public pages: it changes nothing, but its queries and URLs "
            "reach other parties, so it is moderate (asks at freedom level medium)."
        ),
        category=ToolCategory.WEB,
        risk="moderate",
        mutating=False,
        token_cost="high",  # noqa: S106 - a cost level, not a secret
        capabilities=("web_search", "read_web_page", "fetch_url"),
    )

    def __init__(
        self,
        *,
        search_backend: SearchBackend | None = None,
        fetcher: PageFetcher | None = None,
        extractor: PageExtractor | None = None,
        allow_hosts: Iterable[str] = (),
        allow_networks: Iterable[str | IPNetwork] = (),
    ) -> None:
        page_fetcher = _check_fetcher_args(fetcher, allow_hosts, allow_networks)
        super().__init__(
            [
                WebSearchAction(search_backend),
                WebLoadAction(page_fetcher, extractor or TrafilaturaExtractor()),
            ]
        )
