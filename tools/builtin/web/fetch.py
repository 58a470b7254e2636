"""Fetch one web page safely: SSRF policy, pinned connections, size and time limits.

:class:`PageFetcher` follows redirects itself (``allow_redirects`` is never left to
requests), vets every hop with an :class:`~tools.builtin.web.address.AddressPolicy`,
connects to the vetted address, streams the body and stops at ``max_bytes``, and enforces
a total deadline on top of the connect/read timeouts, so a server that drips one byte at a
time cannot hold the call.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urljoin

import charset_normalizer
import requests
import urllib3
from requests.structures import CaseInsensitiveDict

from tools.builtin.web._pinned import PinnedAddressAdapter
from tools.builtin.web.address import AddressPolicy, Target
from tools.errors import InvalidArgumentsError, ToolError, ToolTimeoutError, UpstreamError

TEXT_CONTENT_TYPES: frozenset[str] = frozenset(
    {
        "text/html",
        "text/plain",
        "application/xhtml+xml",
        "application/json",
        "text/markdown",
        "text/x-markdown",
    }
)
_REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
_DEFAULT_USER_AGENT = "tooldeck-web/0.1 (+https://pypi.org/project/tooldeck/)"


@dataclass(frozen=True, slots=True)
class FetchLimits:
    """Bounds for one page load.

    Attributes:
        max_bytes: Body bytes read at most (after content decoding); the rest is dropped and
            the page is marked truncated.
        connect_timeout: Seconds to open a connection.
        read_timeout: Seconds one read may wait for data.
        total_timeout: Seconds for the whole load, redirects included.
        max_redirects: Redirect hops followed at most.
        chunk_size: Bytes asked for per read.
    """

    max_bytes: int = 2_000_000
    connect_timeout: float = 5.0
    read_timeout: float = 10.0
    total_timeout: float = 20.0
    max_redirects: int = 5
    chunk_size: int = 65_536

    def __post_init__(self) -> None:
        if self.max_bytes < 1 or self.max_redirects < 0 or self.chunk_size < 1:
            raise ValueError("FetchLimits: max_bytes/chunk_size must be >= 1, max_redirects >= 0")
        if min(self.connect_timeout, self.read_timeout, self.total_timeout) <= 0:
            raise ValueError("FetchLimits: timeouts must be positive")


@dataclass(frozen=True, slots=True)
class FetchedPage:
    """The raw outcome of a page load.

    Attributes:
        url: The URL that was asked for.
        final_url: The URL of the last hop (after redirects).
        status_code: The HTTP status of the last hop.
        content_type: The media type, lower case, without parameters.
        charset: The declared charset, if any.
        body: The body bytes (at most ``max_bytes``).
        truncated: True when the body was cut at ``max_bytes``.
        redirects: The URLs redirected to, in order.
    """

    url: str
    final_url: str
    status_code: int
    content_type: str
    charset: str | None
    body: bytes
    truncated: bool
    redirects: tuple[str, ...] = field(default=())

    def text(self) -> str:
        """The body as text: declared charset, else UTF-8, else a detected charset.

        Undecodable bytes are replaced, never raised.
        """
        if self.charset:
            try:
                return self.body.decode(self.charset, errors="replace")
            except LookupError:
                pass
        try:
            return self.body.decode("utf-8")
        except UnicodeDecodeError as exc:
            if exc.start >= len(self.body) - 3:  # a character cut by max_bytes
                return self.body.decode("utf-8", errors="replace")
        best = charset_normalizer.from_bytes(self.body[:200_000]).best()
        encoding = best.encoding if best is not None else "utf-8"
        return self.body.decode(encoding, errors="replace")


class PageFetcher:
    """Load web pages within an address policy and size/time limits.

    Args:
        policy: Which addresses may be reached; the default refuses every non-public address.
        limits: Size, time and redirect bounds.
        user_agent: The ``User-Agent`` header sent.
        ca_bundle: Path of a CA bundle for HTTPS (an intranet's private CA); the default
            trust store otherwise. Certificates are always verified against the host name.
        clock: Monotonic clock in seconds (injectable for tests).

    Environment proxies are not used: a proxy would connect on its own and defeat the
    address pinning. Use an egress firewall and ``allow_*`` lists instead.
    """

    def __init__(
        self,
        *,
        policy: AddressPolicy | None = None,
        limits: FetchLimits | None = None,
        user_agent: str = _DEFAULT_USER_AGENT,
        ca_bundle: str | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.policy = policy if policy is not None else AddressPolicy()
        self.limits = limits if limits is not None else FetchLimits()
        self._user_agent = user_agent
        self._verify: bool | str = ca_bundle if ca_bundle else True
        self._clock = clock

    def fetch(self, url: str) -> FetchedPage:
        """Load ``url``, following at most ``max_redirects`` redirects, each hop re-vetted.

        Hostile or broken input is refused with a :class:`~tools.errors.ToolError` subclass,
        never an unexpected exception: malformed URLs and other schemes ->
        ``InvalidArgumentsError``; non-public addresses (also via a redirect) ->
        ``PermissionDeniedError``; non-text content types, HTTP 4xx and too many redirects ->
        ``ToolError``; 5xx and connection failures -> ``UpstreamError``; running past the
        total deadline (slow-drip servers) -> ``ToolTimeoutError``. Oversized bodies are cut
        at ``max_bytes`` and flagged ``truncated``.
        """
        deadline = self._clock() + self.limits.total_timeout
        adapter = PinnedAddressAdapter()
        redirects: list[str] = []
        current = url
        try:
            for _hop in range(self.limits.max_redirects + 1):
                prepared, target = self._prepare(current)
                response = self._send(adapter, prepared, target, deadline)
                try:
                    location = response.headers.get("location")
                    if response.status_code in _REDIRECT_STATUSES and location:
                        current = urljoin(target.url, location)
                        redirects.append(current)
                        continue
                    return self._finish(url, target, response, deadline, redirects)
                finally:
                    response.close()
        finally:
            adapter.close()
        raise ToolError(
            f"Loading {url} needed more than {self.limits.max_redirects} redirects; "
            "stopped. Try the final URL directly if you know it.",
            details={"redirects": redirects},
        )

    def _prepare(self, url: str) -> tuple[requests.PreparedRequest, Target]:
        try:
            prepared = requests.Request("GET", url).prepare()
        except (requests.exceptions.RequestException, ValueError) as exc:
            raise InvalidArgumentsError(
                f"{url!r} is not a valid URL. Send an absolute http(s) URL such as 'https://example.com/page'.",
            ) from exc
        target = self.policy.check_url(prepared.url or url)
        prepared.headers = CaseInsensitiveDict(
            {
                "Host": target.host_header,
                "User-Agent": self._user_agent,
                "Accept": "text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.8,text/markdown;q=0.8",
                "Accept-Encoding": "gzip, deflate",
            }
        )
        return prepared, target

    def _send(
        self,
        adapter: PinnedAddressAdapter,
        prepared: requests.PreparedRequest,
        target: Target,
        deadline: float,
    ) -> requests.Response:
        *earlier, last = (target.address, *target.fallbacks)
        for address in earlier:  # another vetted address of the host when one refuses
            adapter.pin(target.scheme, target.host, target.port, address)
            try:
                return self._send_once(adapter, prepared, target, deadline)
            except UpstreamError as exc:
                if not _connection_refused(exc):
                    raise
        adapter.pin(target.scheme, target.host, target.port, last)
        return self._send_once(adapter, prepared, target, deadline)

    def _send_once(
        self,
        adapter: PinnedAddressAdapter,
        prepared: requests.PreparedRequest,
        target: Target,
        deadline: float,
    ) -> requests.Response:
        remaining = self._remaining(target.url, deadline, 0)
        timeout = (
            min(self.limits.connect_timeout, remaining),
            min(self.limits.read_timeout, remaining),
        )
        try:
            return adapter.send(prepared, stream=True, timeout=timeout, verify=self._verify, proxies={})
        except requests.exceptions.Timeout as exc:
            raise ToolTimeoutError(f"{target.url} did not answer in time; the site may be slow or down.") from exc
        except requests.exceptions.SSLError as exc:
            raise UpstreamError(
                f"{target.url} has a TLS/certificate problem; it cannot be loaded safely.",
                retryable=False,
            ) from exc
        except requests.exceptions.RequestException as exc:
            raise UpstreamError(f"Could not connect to {target.url} ({type(exc).__name__}).") from exc

    def _finish(
        self,
        url: str,
        target: Target,
        response: requests.Response,
        deadline: float,
        redirects: list[str],
    ) -> FetchedPage:
        status = response.status_code
        if status >= 500:
            raise UpstreamError(f"{target.url} answered HTTP {status} (a server error).")
        if status >= 400:
            raise ToolError(
                f"{target.url} answered HTTP {status} {response.reason or ''}".rstrip()
                + ". Check the URL or try another page.",
                details={"status_code": status},
            )
        media_type, charset = _parse_content_type(response.headers.get("content-type", ""))
        if media_type not in TEXT_CONTENT_TYPES:
            shown = media_type or "no content type"
            raise ToolError(
                f"{target.url} is {shown}, not a text page; only HTML, plain text, Markdown and JSON can be loaded.",
                details={"content_type": media_type},
            )
        body, truncated = self._read_body(target.url, response, deadline)
        return FetchedPage(
            url=url,
            final_url=target.url,
            status_code=status,
            content_type=media_type,
            charset=charset,
            body=body,
            truncated=truncated,
            redirects=tuple(redirects),
        )

    def _read_body(self, url: str, response: requests.Response, deadline: float) -> tuple[bytes, bool]:
        limit = self.limits.max_bytes
        chunks: list[bytes] = []
        size = 0
        try:
            while size < limit:
                self._remaining(url, deadline, size)
                chunk = response.raw.read1(min(self.limits.chunk_size, limit - size))
                if not chunk:
                    return b"".join(chunks), False
                chunks.append(chunk)
                size += len(chunk)
        except (urllib3.exceptions.TimeoutError, TimeoutError) as exc:
            raise ToolTimeoutError(f"{url} stopped sending data; the page could not be loaded in time.") from exc
        except (urllib3.exceptions.HTTPError, requests.exceptions.RequestException, OSError) as exc:
            raise UpstreamError(f"The connection to {url} broke while reading the page.") from exc
        return b"".join(chunks), True

    def _remaining(self, url: str, deadline: float, received: int) -> float:
        remaining = deadline - self._clock()
        if remaining <= 0:
            raise ToolTimeoutError(
                f"Loading {url} took longer than {self.limits.total_timeout:g} s "
                f"({received} bytes received); stopped. The site is too slow.",
                details={"bytes_received": received},
            )
        return remaining


def _connection_refused(error: UpstreamError) -> bool:
    cause = error.__cause__
    return isinstance(cause, requests.exceptions.ConnectionError) and not isinstance(
        cause, requests.exceptions.SSLError
    )


def _parse_content_type(header: str) -> tuple[str, str | None]:
    media_type, _, params = header.partition(";")
    charset: str | None = None
    for param in params.split(";"):
        key, _, value = param.strip().partition("=")
        if key.strip().lower() == "charset" and value.strip():
            charset = value.strip().strip("\"'").lower()
    return media_type.strip().lower(), charset
