"""Turn a fetched page into readable text: the :class:`PageExtractor` protocol.

The default, :class:`TrafilaturaExtractor`, uses trafilatura (the ``web`` extra) to keep the
main content of HTML pages and drop navigation, ads and boilerplate. Title and links come
from a small pass with the standard library's HTML parser. Plain text, Markdown and JSON are
returned as they are.
"""

from __future__ import annotations

from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Literal, Protocol
from urllib.parse import urldefrag, urljoin

from tools.builtin.web.fetch import FetchedPage
from tools.errors import ToolError

HTML_CONTENT_TYPES: frozenset[str] = frozenset({"text/html", "application/xhtml+xml"})
_MAX_TITLE_CHARS = 300
_MAX_LINK_TEXT_CHARS = 200


@dataclass(frozen=True, slots=True)
class PageLink:
    """A link found on a page.

    Attributes:
        text: The visible link text (whitespace collapsed, may be empty).
        url: The absolute http(s) URL, without fragment.
    """

    text: str
    url: str


@dataclass(frozen=True, slots=True)
class ExtractedPage:
    """Readable content of a page.

    Attributes:
        title: The document title, if any.
        text: The main text.
        links: Links found on the page (only when asked for).
    """

    title: str | None
    text: str
    links: tuple[PageLink, ...] = ()


class PageExtractor(Protocol):
    """Extracts readable text (and optionally links) from a fetched page."""

    def extract(self, page: FetchedPage, *, include_links: bool) -> ExtractedPage:
        """Return the page's readable content; never raises for malformed markup."""
        ...


class TrafilaturaExtractor:
    """Main-content extraction with trafilatura (needs the ``web`` extra).

    Args:
        output_format: ``"markdown"`` (headings, lists and tables kept) or ``"txt"``.
        max_links: Links returned at most when links are asked for.
    """

    def __init__(self, *, output_format: Literal["markdown", "txt"] = "markdown", max_links: int = 100) -> None:
        self._output_format = output_format
        self._max_links = max_links

    def extract(self, page: FetchedPage, *, include_links: bool) -> ExtractedPage:
        """Extract the page; malformed, truncated or empty HTML gives whatever text it holds.

        Raises:
            ToolError: When trafilatura is not installed (``pip install -e '.[web]'`` in a checkout).
        """
        if page.content_type not in HTML_CONTENT_TYPES:
            return ExtractedPage(title=None, text=page.text().strip())
        html = page.text()
        text = self._main_text(html, page.final_url)
        scan = _scan_html(html, page.final_url, self._max_links if include_links else 0)
        return ExtractedPage(title=scan.title, text=text, links=tuple(scan.links))

    def _main_text(self, html: str, url: str) -> str:
        try:
            import trafilatura
        except ImportError as exc:
            raise ToolError(
                "Reading HTML pages is not available: the 'web' extra is not installed "
                "(pip install -e '.[web]' in a tooldeck checkout). Plain-text and JSON URLs still work.",
            ) from exc
        if not html.strip():
            return ""
        text = trafilatura.extract(
            html,
            url=url,
            output_format=self._output_format,
            include_comments=False,
            include_tables=True,
            favor_recall=True,
        )
        if not text:
            text = trafilatura.html2txt(html)
        return str(text or "").strip()


class _HtmlScan(HTMLParser):
    """One pass over the markup collecting the title and links (no scripts run)."""

    def __init__(self, base_url: str, max_links: int) -> None:
        super().__init__(convert_charrefs=True)
        self.base_url = base_url
        self.max_links = max_links
        self.title: str | None = None
        self.links: list[PageLink] = []
        self._seen: set[str] = set()
        self._in_title = False
        self._title_parts: list[str] = []
        self._href: str | None = None
        self._link_parts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title" and self.title is None:
            self._in_title = True
        elif tag == "base":
            href = dict(attrs).get("href")
            if href:
                self.base_url = urljoin(self.base_url, href.strip())
        elif tag == "a" and len(self.links) < self.max_links:
            href = dict(attrs).get("href")
            self._href = href.strip() if href else None
            self._link_parts = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "title" and self._in_title:
            self._in_title = False
            title = " ".join("".join(self._title_parts).split())
            self.title = title[:_MAX_TITLE_CHARS] or None
        elif tag == "a" and self._href is not None:
            self._add_link(self._href, " ".join("".join(self._link_parts).split()))
            self._href = None

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self._title_parts.append(data)
        if self._href is not None:
            self._link_parts.append(data)

    def _add_link(self, href: str, text: str) -> None:
        url, _fragment = urldefrag(urljoin(self.base_url, href))
        if not url.startswith(("http://", "https://")) or url in self._seen:
            return
        self._seen.add(url)
        if len(self.links) < self.max_links:
            self.links.append(PageLink(text=text[:_MAX_LINK_TEXT_CHARS], url=url))


def _scan_html(html: str, base_url: str, max_links: int) -> _HtmlScan:
    scan = _HtmlScan(base_url, max_links)
    try:
        scan.feed(html)
        scan.close()
    except (ValueError, AssertionError):  # the stdlib parser's reaction to broken markup
        pass
    return scan
