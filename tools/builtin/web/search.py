"""The web search side: :class:`SearchBackend` protocol and the :class:`SearchHit` record."""

from __future__ import annotations

from html import unescape
from html.parser import HTMLParser
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, Field

_MAX_TITLE_CHARS = 300
_MAX_SNIPPET_CHARS = 600
_MAX_URL_CHARS = 2_048


class SearchHit(BaseModel):
    """One web search result."""

    title: str = Field(description="Title of the result page.")
    url: str = Field(description="Address of the result page; pass it to action 'load' to read it.")
    snippet: str = Field(description="Short excerpt of the page that matched the query.")


@runtime_checkable
class SearchBackend(Protocol):
    """A web search service.

    Implementations raise :class:`~tools.errors.UpstreamError` (or
    :class:`~tools.errors.ToolTimeoutError`) when the service fails, with a message that
    never contains credentials, and return at most ``count`` hits.
    """

    @property
    def name(self) -> str:
        """Short backend name for results and logs (``"brave"``, ``"searxng"``)."""
        ...

    def search(self, query: str, *, count: int) -> list[SearchHit]:
        """Search the web for ``query``; at most ``count`` hits, best first."""
        ...


class _TextOnly(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def plain_text(value: object, limit: int = _MAX_SNIPPET_CHARS) -> str:
    """Markup-free, whitespace-collapsed text from an API field (``<strong>`` etc. removed).

    Non-string values give ``""``; the result is cut at ``limit`` characters.
    """
    if not isinstance(value, str):
        return ""
    parser = _TextOnly()
    try:
        parser.feed(value)
        parser.close()
        text = "".join(parser.parts)
    except (ValueError, AssertionError):
        text = unescape(value)
    return " ".join(text.split())[:limit]


def make_hit(title: object, url: object, snippet: object) -> SearchHit | None:
    """Build a hit from untrusted API fields; None when the URL is not an http(s) URL."""
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        return None
    if len(url) > _MAX_URL_CHARS:
        return None
    return SearchHit(
        title=plain_text(title, _MAX_TITLE_CHARS) or url,
        url=url,
        snippet=plain_text(snippet),
    )
