"""Choose a search backend from configuration values (called at the entry point only)."""

from __future__ import annotations

from collections.abc import Mapping

from tools.builtin.web.brave import BraveSearchBackend
from tools.builtin.web.search import SearchBackend
from tools.builtin.web.searxng import SearxngSearchBackend

#: The configuration keys :func:`search_backend_from_env` reads.
BRAVE_API_KEY_VAR = "BRAVE_API_KEY"
SEARXNG_URL_VAR = "SEARXNG_URL"


def search_backend_from_env(env: Mapping[str, str]) -> SearchBackend | None:
    """Build the configured search backend from a mapping such as ``os.environ``.

    ``BRAVE_API_KEY`` selects Brave Search; otherwise ``SEARXNG_URL`` selects a SearXNG
    instance; with neither, None (``WebTool`` then explains how to configure search).
    Empty or blank values count as unset; a SEARXNG_URL that is not http(s) raises.

    Raises:
        ValueError: When ``SEARXNG_URL`` is set but is not an http(s) URL.
    """
    api_key = env.get(BRAVE_API_KEY_VAR, "").strip()
    if api_key:
        return BraveSearchBackend(api_key)
    base_url = env.get(SEARXNG_URL_VAR, "").strip()
    if base_url:
        return SearxngSearchBackend(base_url)
    return None
