"""Fetch one web page safely: SSRF policy, pinned connections, size and time limits.

:class:`PageFetcher` follows redirects itself (``allow_redirects`` is never left to
requests), vets every hop with an :class:`~tools.builtin.web.address.AddressPolicy`,
connects to the vetted address, streams and decodes the body (gzip, deflate, br; see
:mod:`tools.builtin.web._decode`) and stops at ``max_bytes`` of decoded bytes, refusing
decompression bombs, and enforces a total deadline on top of the connect/read timeouts, so
a server that drips one byte at a time cannot hold the call.

Every failure here is about the page asked for (the site is down, slow, refuses, sends
garbage), not about the tool, so none of them trips the tool's circuit breaker
(``trips_breaker=False``): five broken URLs in a row leave the web tool available.
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

from tools.builtin.web._decode import (
    BodyDecoder,
    ContentEncodingError,
    load_brotli,
    parse_content_encoding,
    supported_encodings,
)
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
        max_bytes: Body bytes read at most, counted after content decoding (gzip, deflate,
            br); the rest is dropped and the page is marked truncated.
        connect_timeout: Seconds to open a connection.
        read_timeout: Seconds one read may wait for data.
        total_timeout: Seconds for the whole load, redirects included.
        max_redirects: Redirect hops followed at most.
        chunk_size: Bytes asked for per read.
        max_compression_ratio: A compressed page that decodes past ``max_bytes`` at more
            than this many decoded bytes per compressed byte is refused as a decompression
            bomb (real pages compress 3-20 times; a bomb 1,000 times or more).
    """

    max_bytes: int = 2_000_000
    connect_timeout: float = 5.0
    read_timeout: float = 10.0
    total_timeout: float = 20.0
    max_redirects: int = 5
    chunk_size: int = 65_536
    max_compression_ratio: float = 100.0

    def __post_init__(self) -> None:
        if self.max_bytes < 1 or self.max_redirects < 0 or self.chunk_size < 1:
            raise ValueError("FetchLimits: max_bytes/chunk_size must be >= 1, max_redirects >= 0")
        if min(self.connect_timeout, self.read_timeout, self.total_timeout) <= 0:
            raise ValueError("FetchLimits: timeouts must be positive")
        if not self.max_compression_ratio >= 1:
            raise ValueError("FetchLimits: max_compression_ratio must be >= 1")


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

    Compressed pages are asked for (``Accept-Encoding: gzip, deflate`` and ``br`` when the
    ``brotli`` package, 1.2 or newer, is installed) and decoded within ``max_bytes``.
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
        self._brotli = load_brotli()
        self._encodings = supported_encodings(self._brotli)

    def fetch(self, url: str) -> FetchedPage:
        """Load ``url``, following at most ``max_redirects`` redirects, each hop re-vetted.

        Hostile or broken input is refused with a :class:`~tools.errors.ToolError` subclass,
        never an unexpected exception: malformed URLs and other schemes ->
        ``InvalidArgumentsError``; non-public addresses (also via a redirect) ->
        ``PermissionDeniedError``; non-text content types, HTTP 4xx, too many redirects,
        unknown or corrupt content encodings and decompression bombs -> ``ToolError``; 5xx
        and connection failures -> ``UpstreamError``; running past the total deadline
        (slow-drip servers) -> ``ToolTimeoutError``. None of them trips the circuit breaker.
        Oversized bodies are cut at ``max_bytes`` (decoded) and flagged ``truncated``.
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
                "Accept-Encoding": ", ".join(self._encodings),
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
            raise ToolTimeoutError(
                f"{target.url} did not answer in time; the site may be slow or down.", trips_breaker=False
            ) from exc
        except requests.exceptions.SSLError as exc:
            raise UpstreamError(
                f"{target.url} has a TLS/certificate problem; it cannot be loaded safely.",
                retryable=False,
                trips_breaker=False,
            ) from exc
        except requests.exceptions.RequestException as exc:
            raise UpstreamError(
                f"Could not connect to {target.url} ({type(exc).__name__}).", trips_breaker=False
            ) from exc

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
            raise UpstreamError(
                f"{target.url} answered HTTP {status} (a server error).",
                details={"status_code": status},
                trips_breaker=False,
            )
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
        encodings = self._content_encodings(target.url, response.headers.get("content-encoding"))
        body, truncated = self._read_body(target.url, response, deadline, encodings)
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

    def _content_encodings(self, url: str, header: str | None) -> list[str]:
        try:
            return parse_content_encoding(header, self._encodings)
        except ContentEncodingError as exc:
            raise _encoding_error(url, exc, self._encodings) from None

    def _read_body(
        self, url: str, response: requests.Response, deadline: float, encodings: list[str]
    ) -> tuple[bytes, bool]:
        limit = self.limits.max_bytes
        chunks: list[bytes] = []
        size = 0
        raw = response.raw

        def read_raw(amount: int) -> bytes:
            self._remaining(url, deadline, size)
            data: bytes = raw.read1(amount, decode_content=False)
            return data

        decoder = BodyDecoder(encodings, read_raw, chunk_size=self.limits.chunk_size, brotli=self._brotli)
        try:
            while size < limit:
                chunk = decoder.read(min(self.limits.chunk_size, limit - size))
                if not chunk:
                    return b"".join(chunks), False
                chunks.append(chunk)
                size += len(chunk)
            truncated = bool(decoder.read(1))  # exactly max_bytes long is not truncated
        except ContentEncodingError as exc:
            raise _encoding_error(url, exc, self._encodings) from None
        except (urllib3.exceptions.TimeoutError, TimeoutError) as exc:
            raise ToolTimeoutError(
                f"{url} stopped sending data; the page could not be loaded in time.", trips_breaker=False
            ) from exc
        except (urllib3.exceptions.HTTPError, requests.exceptions.RequestException, OSError) as exc:
            raise UpstreamError(f"The connection to {url} broke while reading the page.", trips_breaker=False) from exc
        if truncated and encodings:
            self._refuse_bomb(url, size, decoder.consumed, encodings)
        return b"".join(chunks), truncated

    def _refuse_bomb(self, url: str, size: int, consumed: int, encodings: list[str]) -> None:
        ratio = size / max(consumed, 1)
        if ratio <= self.limits.max_compression_ratio:
            return
        raise ToolError(
            f"Refused to load {url}: {consumed:,} compressed bytes expand to more than "
            f"{self.limits.max_bytes:,} bytes (over {ratio:,.0f} to 1), which is a decompression "
            "bomb, not a web page. Try another page.",
            details={
                "max_bytes": self.limits.max_bytes,
                "compressed_bytes": consumed,
                "content_encoding": ", ".join(encodings),
            },
        )

    def _remaining(self, url: str, deadline: float, received: int) -> float:
        remaining = deadline - self._clock()
        if remaining <= 0:
            raise ToolTimeoutError(
                f"Loading {url} took longer than {self.limits.total_timeout:g} s "
                f"({received} bytes received); stopped. The site is too slow.",
                details={"bytes_received": received},
                trips_breaker=False,
            )
        return remaining


def _encoding_error(url: str, exc: ContentEncodingError, supported: tuple[str, ...]) -> ToolError:
    details = {"content_encoding": exc.encoding}
    if exc.reason == "corrupt":
        return ToolError(
            f"{url} sent its page compressed with {exc.encoding}, but the data could not be decoded "
            f"(corrupt or not really {exc.encoding}). Try again later or load another page.",
            details=details,
        )
    if exc.reason == "too_many":
        return ToolError(f"{url} sent its page with {exc}; refused. Load another page.", details=details)
    return ToolError(
        f"{url} sent its page with content encoding '{exc.encoding}', which cannot be decoded "
        f"(supported: {', '.join(supported)}). Load another page.",
        details=details,
    )


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
