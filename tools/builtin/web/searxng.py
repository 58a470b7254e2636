"""Web search through a self-hosted SearXNG instance (its JSON API, ``/search?format=json``)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any, Literal

import requests

from tools.builtin.web._http import HttpOptions, HttpStatusError, get_json
from tools.builtin.web.search import SearchHit, make_hit
from tools.errors import UpstreamError

_MAX_QUERY_CHARS = 400


class SearxngSearchBackend:
    """A :class:`~tools.builtin.web.search.SearchBackend` over a SearXNG instance.

    The instance must allow the JSON format (``search: formats: [html, json]`` in its
    ``settings.yml``); otherwise it answers 403 and the error says so.

    Args:
        base_url: The instance root, e.g. ``"http://searxng:8080"`` (from config, e.g.
            ``SEARXNG_URL``). It is trusted configuration: no address policy applies.
        categories: SearXNG categories to search (``"general"``).
        language: Optional language code (``"en"``); the instance default otherwise.
        safesearch: 0 (off), 1 (moderate) or 2 (strict).
        headers: Extra headers, e.g. an auth header of a protected instance (never logged).
        session: The requests session (a new one by default).
        options: Timeouts, retries and size bound.
        sleep: Back-off sleep between retries (injectable for tests).
    """

    name = "searxng"

    def __init__(
        self,
        base_url: str,
        *,
        categories: str = "general",
        language: str | None = None,
        safesearch: Literal[0, 1, 2] = 1,
        headers: Mapping[str, str] | None = None,
        session: requests.Session | None = None,
        options: HttpOptions | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ValueError("SearxngSearchBackend needs an http(s) base_url")
        self._endpoint = base_url.rstrip("/") + "/search"
        self._categories = categories
        self._language = language
        self._safesearch = safesearch
        self._headers = dict(headers or {})
        self._session = session if session is not None else requests.Session()
        self._options = options if options is not None else HttpOptions()
        self._sleep = sleep

    def __repr__(self) -> str:
        return f"SearxngSearchBackend(endpoint={self._endpoint!r})"

    def search(self, query: str, *, count: int) -> list[SearchHit]:
        """Search with SearXNG; at most ``count`` hits (one result page).

        Malformed result entries are skipped; a body that is not the expected JSON gives an
        :class:`~tools.errors.UpstreamError`, never a crash.

        Raises:
            UpstreamError: On HTTP errors (403 explains the JSON-format setting).
            ToolTimeoutError: When the instance keeps timing out.
        """
        params: dict[str, str | int] = {
            "q": query[:_MAX_QUERY_CHARS],
            "format": "json",
            "pageno": 1,
            "categories": self._categories,
            "safesearch": self._safesearch,
        }
        if self._language:
            params["language"] = self._language
        try:
            data = get_json(
                self._session,
                self._endpoint,
                label="SearXNG",
                params=params,
                headers={"Accept": "application/json", **self._headers},
                options=self._options,
                sleep=self._sleep,
            )
        except HttpStatusError as exc:
            raise _status_error(exc) from None
        return _parse(data, count)


def _status_error(exc: HttpStatusError) -> UpstreamError:
    if exc.status == 403:
        return UpstreamError(
            "The SearXNG instance refused JSON output (HTTP 403); its settings.yml must list "
            "json under search.formats. Web search is unavailable until then.",
            retryable=False,
        )
    if exc.status == 429:
        return UpstreamError("The SearXNG instance is rate limiting; try again in a minute.")
    if exc.status >= 500:
        return UpstreamError(f"The SearXNG instance failed (HTTP {exc.status}); try later.")
    # Any other 4xx is about this query, not the service: it does not trip the breaker.
    return UpstreamError(
        f"The SearXNG instance refused the request (HTTP {exc.status}); try a shorter, simpler query.",
        retryable=False,
        trips_breaker=False,
    )


def _parse(data: Any, count: int) -> list[SearchHit]:
    if not isinstance(data, dict):
        raise UpstreamError("SearXNG answered with an unexpected document.")
    results = data.get("results")
    if not isinstance(results, list):
        return []
    hits: list[SearchHit] = []
    seen: set[str] = set()
    for item in results:
        if not isinstance(item, dict):
            continue
        hit = make_hit(item.get("title"), item.get("url"), item.get("content"))
        if hit is None or hit.url in seen:
            continue
        seen.add(hit.url)
        hits.append(hit)
        if len(hits) >= count:
            break
    return hits
