"""Web tools: ``WebTool`` (actions ``search`` and ``load``), search backends, safe fetching.

Reading HTML needs the ``web`` extra (trafilatura): ``pip install -e '.[web]'`` in a
checkout.
"""

from tools.builtin.web._http import HttpOptions
from tools.builtin.web.address import AddressPolicy, Target, blocked_reason, parse_legacy_ipv4
from tools.builtin.web.brave import BraveSearchBackend
from tools.builtin.web.config import search_backend_from_env
from tools.builtin.web.extract import ExtractedPage, PageExtractor, PageLink, TrafilaturaExtractor
from tools.builtin.web.fetch import TEXT_CONTENT_TYPES, FetchedPage, FetchLimits, PageFetcher
from tools.builtin.web.search import SearchBackend, SearchHit
from tools.builtin.web.searxng import SearxngSearchBackend
from tools.builtin.web.tool import (
    WebLoadAction,
    WebLoadRequest,
    WebPage,
    WebSearchAction,
    WebSearchRequest,
    WebSearchResponse,
    WebTool,
)

__all__ = [
    "TEXT_CONTENT_TYPES",
    "AddressPolicy",
    "BraveSearchBackend",
    "ExtractedPage",
    "FetchLimits",
    "FetchedPage",
    "HttpOptions",
    "PageExtractor",
    "PageFetcher",
    "PageLink",
    "SearchBackend",
    "SearchHit",
    "SearxngSearchBackend",
    "Target",
    "TrafilaturaExtractor",
    "WebLoadAction",
    "WebLoadRequest",
    "WebPage",
    "WebSearchAction",
    "WebSearchRequest",
    "WebSearchResponse",
    "WebTool",
    "blocked_reason",
    "parse_legacy_ipv4",
    "search_backend_from_env",
]
