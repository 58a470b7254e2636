"""Web search through the Brave Search API (https://api.search.brave.com)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Literal

import requests

from tools.builtin.web._http import HttpOptions, HttpStatusError, get_json
from tools.builtin.web.search import SearchHit, make_hit
from tools.errors import UpstreamError

BRAVE_ENDPOINT = "https://api.search.brave.com/res/v1/web/search"
_MAX_COUNT = 20
_MAX_QUERY_CHARS = 400


class BraveSearchBackend:
    """A :class:`~tools.builtin.web.search.SearchBackend` over the Brave Search API.

    Args:
        api_key: The subscription token (sent as ``X-Subscription-Token``; never logged or
            shown). The composition root reads it from config, e.g. ``BRAVE_API_KEY``.
        endpoint: The web-search endpoint (tests point it at a local server).
        country: Optional two-letter country code to bias results.
        search_lang: Optional language code of the results (``"en"``).
        safesearch: ``"off"``, ``"moderate"`` or ``"strict"``.
        session: The requests session (a new one by default).
        options: Timeouts, retries and size bound.
        sleep: Back-off sleep between retries (injectable for tests).
    """

    name = "brave"

    def __init__(
        self,
        api_key: str,
        *,
        endpoint: str = BRAVE_ENDPOINT,
        country: str | None = None,
        search_lang: str | None = None,
        safesearch: Literal["off", "moderate", "strict"] = "moderate",
        session: requests.Session | None = None,
        options: HttpOptions | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not api_key:
            raise ValueError("BraveSearchBackend needs a non-empty api_key")
        self._api_key = api_key
        self._endpoint = endpoint
        self._country = country
        self._search_lang = search_lang
        self._safesearch = safesearch
        self._session = session if session is not None else requests.Session()
        self._options = options if options is not None else HttpOptions()
        self._sleep = sleep

    def __repr__(self) -> str:
        return f"BraveSearchBackend(endpoint={self._endpoint!r}, api_key='***')"

    def search(self, query: str, *, count: int) -> list[SearchHit]:
        """Search with Brave; at most ``count`` (<= 20) hits.

        The query is cut at 400 characters (Brave's limit). Malformed result entries are
        skipped; a body that is not the expected JSON gives an empty list or an
        :class:`~tools.errors.UpstreamError`, never a crash.

        Raises:
            UpstreamError: On HTTP errors (a rejected key says so, without the key).
            ToolTimeoutError: When Brave keeps timing out.
        """
        params: dict[str, str | int] = {
            "q": query[:_MAX_QUERY_CHARS],
            "count": max(1, min(count, _MAX_COUNT)),
            "safesearch": self._safesearch,
            "text_decorations": "false",
        }
        if self._country:
            params["country"] = self._country
        if self._search_lang:
            params["search_lang"] = self._search_lang
        headers = {"Accept": "application/json", "X-Subscription-Token": self._api_key}
        try:
            data = get_json(
                self._session,
                self._endpoint,
                label="Brave Search",
                params=params,
                headers=headers,
                options=self._options,
                sleep=self._sleep,
            )
        except HttpStatusError as exc:
            raise _status_error(exc) from None
        return _parse(data, count)


def _status_error(exc: HttpStatusError) -> UpstreamError:
    if exc.status in (401, 403):
        return UpstreamError(
            f"Brave Search rejected the API key (HTTP {exc.status}); web search is unavailable until the key is fixed.",
            retryable=False,
        )
    if exc.status == 429:
        return UpstreamError("Brave Search rate limit reached; try again in a minute.")
    if exc.status >= 500:
        return UpstreamError(f"Brave Search failed (HTTP {exc.status}); try again later.")
    # Any other 4xx is about this query, not the service: it does not trip the breaker.
    return UpstreamError(
        f"Brave Search refused the request (HTTP {exc.status}); try a shorter, simpler query.",
        retryable=False,
        trips_breaker=False,
    )


def _parse(data: Any, count: int) -> list[SearchHit]:
    if not isinstance(data, dict):
        raise UpstreamError("Brave Search answered with an unexpected document.")
    web = data.get("web")
    results = web.get("results") if isinstance(web, dict) else None
    if not isinstance(results, list):
        return []
    hits: list[SearchHit] = []
    for item in results:
        if not isinstance(item, dict):
            continue
        hit = make_hit(item.get("title"), item.get("url"), item.get("description"))
        if hit is not None:
            hits.append(hit)
        if len(hits) >= count:
            break
    return hits
