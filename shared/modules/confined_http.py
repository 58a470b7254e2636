"""HTTP confined to a module's declared base URL.

A loaded module's adapter gets a :class:`ConfinedSession` as its ``http_session()``: every
request, and every redirect hop, must stay under the manifest's ``api_url`` (same scheme,
host and port, and a path under its path), or it is refused before anything is sent. The
check sits in the transport (:class:`ConfinedAdapter`), so ``session.get_adapter(...).send``
is checked too. Proxies and ``.netrc`` credentials from the environment are not used.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote, urlsplit

import requests
from requests.adapters import HTTPAdapter

__all__ = ["ConfinedAdapter", "ConfinedSession", "OutsideBaseUrlError", "within_base_url"]

_DEFAULT_PORTS = {"http": 80, "https": 443}


class OutsideBaseUrlError(requests.RequestException):
    """A module tried to reach a URL outside its declared ``api_url``."""


def _origin(url: str) -> tuple[str, str, int, str] | None:
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname or parts.username or parts.password:
        return None
    return scheme, parts.hostname.lower(), port or _DEFAULT_PORTS[scheme], parts.path or "/"


def _has_dot_segment(path: str) -> bool:
    """Whether ``path`` holds a ``.`` or ``..`` segment as some server may read it: as sent,
    or percent-decoded once or more (``..%2f``, ``%252e%252e``), with ``\\`` taken for ``/``
    and a segment's ``;parameters`` ignored (``..;/``)."""
    form = path
    for _ in range(4):
        for segment in form.replace("\\", "/").split("/"):
            if segment.split(";", 1)[0] in (".", ".."):
                return True
        decoded = unquote(form)
        if decoded == form:
            return False
        form = decoded
    return True  # still encoded after four rounds: nothing an API sends


def within_base_url(url: str, base_url: str) -> bool:
    """Whether ``url`` is under ``base_url``: same scheme, host and port, path below its path.

    ``https://api.example.com/v1`` admits ``.../v1``, ``.../v1/items?x=1`` but not
    ``.../v10`` nor ``.../v2``; URLs with a user name or password are never admitted, nor
    paths with a dot segment in any form a server may decode (``..%2f``, ``..;/``).
    """
    target, base = _origin(url), _origin(base_url)
    if target is None or base is None or target[:3] != base[:3]:
        return False
    path, prefix = target[3], base[3]
    if _has_dot_segment(path) or "%2e" in path.lower():
        return False
    prefix = prefix.rstrip("/")
    return path == prefix or path.startswith(prefix + "/") or not prefix


class ConfinedAdapter(HTTPAdapter):
    """An ``HTTPAdapter`` that refuses requests outside ``base_url`` and ignores proxies.

    Args:
        base_url: The module's ``api_url``.
        timeout: Seconds per request when the caller gives none.
    """

    def __init__(self, base_url: str, timeout: float) -> None:
        super().__init__(max_retries=0)
        self._base_url = base_url
        self._timeout = timeout

    def send(  # noqa: PLR0917 - requests' signature
        self,
        request: requests.PreparedRequest,
        stream: bool = False,
        timeout: float | tuple[float, float] | tuple[float, None] | None = None,
        verify: bool | str = True,
        cert: bytes | str | tuple[bytes | str, bytes | str] | None = None,
        proxies: Mapping[str, str] | None = None,
    ) -> requests.Response:
        """Send ``request`` if its URL is under the base URL, without any proxy."""
        url = request.url or ""
        if not within_base_url(url, self._base_url):
            raise OutsideBaseUrlError(
                f"the module may only reach URLs under its api_url ({self._base_url}); refused another URL"
            )
        return super().send(
            request, stream=stream, timeout=timeout or self._timeout, verify=verify, cert=cert, proxies={}
        )


class ConfinedSession(requests.Session):
    """A ``requests.Session`` whose requests must stay under ``base_url``.

    Args:
        base_url: The module's ``api_url``.
        timeout: Seconds per request when the adapter passes none.
    """

    def __init__(self, base_url: str, *, timeout: float = 10.0) -> None:
        super().__init__()
        self.trust_env = False
        self.proxies = {}
        adapter = ConfinedAdapter(base_url, timeout)
        self.adapters.clear()
        self.mount("http://", adapter)
        self.mount("https://", adapter)
        self._base_url = base_url

    def get_adapter(self, url: str) -> Any:
        """The confined adapter for ``url``; any other scheme is refused."""
        if not url.lower().startswith(("http://", "https://")):
            raise OutsideBaseUrlError("the module may only use http:// and https:// URLs under its api_url")
        return super().get_adapter(url)
