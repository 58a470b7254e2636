"""Which network addresses a web load may reach: the SSRF policy.

A URL chosen by a model must not reach the machine the tool runs on, its private network or
a cloud metadata service. :class:`AddressPolicy` decides that *after* DNS resolution, on
every address a name resolves to, and the caller then connects to the vetted address itself
(see :mod:`tools.builtin.web._pinned`), so a DNS answer that changes between the check and
the connection (DNS rebinding) cannot slip through.

Which addresses count as public is an explicit table of networks
(:mod:`tools.builtin.web._ranges`), the same on every Python version; anything the table does
not place on its global-unicast allow list is refused.

Host names in the legacy numeric IPv4 forms that browsers and ``inet_aton`` accept
(``2130706433``, ``0x7f.1``, ``017700000001``) are parsed the WHATWG way before anything
else, so they are judged as the address they denote.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from tools.builtin.web._ranges import IPAddress, IPNetwork, blocked_reason, is_metadata
from tools.errors import InvalidArgumentsError, PermissionDeniedError

__all__ = ["AddressPolicy", "IPAddress", "IPNetwork", "Resolver", "Target", "blocked_reason", "parse_legacy_ipv4"]

#: ``resolver(host, port) -> addresses``; the default uses :func:`socket.getaddrinfo`.
Resolver = Callable[[str, int], Sequence[str]]

_ALLOWED_SCHEMES = frozenset({"http", "https"})
_DEFAULT_PORTS = {"http": 80, "https": 443}

_MAX_HOST_CHARS = 253
_MAX_ADDRESSES = 4  # addresses of one host tried at most


@dataclass(frozen=True, slots=True)
class Target:
    """A URL that passed the policy, with the address to connect to.

    Attributes:
        url: The URL as given (normalised scheme and host).
        scheme: ``"http"`` or ``"https"``.
        host: The host name (lower case; IPv6 without brackets).
        port: The TCP port.
        address: The vetted IP address to connect to.
        fallbacks: Further vetted addresses of the host, tried when ``address`` refuses.
    """

    url: str
    scheme: str
    host: str
    port: int
    address: str
    fallbacks: tuple[str, ...] = ()

    @property
    def host_header(self) -> str:
        """The ``Host`` header value for this target."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        if self.port == _DEFAULT_PORTS[self.scheme]:
            return host
        return f"{host}:{self.port}"


def system_resolver(host: str, port: int) -> list[str]:
    """Resolve ``host`` with the system resolver; every address, IPv4 and IPv6.

    Raises:
        OSError: When the name does not resolve.
    """
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def parse_legacy_ipv4(host: str) -> ipaddress.IPv4Address | None:
    """Parse a host the way the WHATWG URL standard parses IPv4 (decimal, octal, hex parts).

    Returns None when ``host`` is not a numeric IPv4 form (it is then a name). Out-of-range
    numeric forms also return None; they fail resolution later.
    """
    parts = host.split(".")
    if parts and parts[-1] == "":
        parts.pop()
    if not parts or len(parts) > 4:
        return None
    numbers: list[int] = []
    for part in parts:
        number = _parse_ipv4_number(part)
        if number is None:
            return None
        numbers.append(number)
    last = numbers.pop()
    if any(n > 255 for n in numbers) or last >= 256 ** (5 - len(parts)):
        return None
    value = last
    for index, number in enumerate(numbers):
        value += number << (8 * (3 - index))
    return ipaddress.IPv4Address(value)


def _parse_ipv4_number(part: str) -> int | None:
    if not part:
        return None
    lowered = part.lower()
    base, digits = 10, lowered
    if lowered.startswith("0x"):
        base, digits = 16, lowered[2:]
    elif len(lowered) > 1 and lowered.startswith("0"):
        base, digits = 8, lowered[1:]
    if digits == "":
        return 0
    allowed = {10: "0123456789", 8: "01234567", 16: "0123456789abcdef"}[base]
    if len(digits) > 32 or any(char not in allowed for char in digits):
        return None
    return int(digits, base)


@dataclass(frozen=True, slots=True)
class AddressPolicy:
    """Refuse URLs that resolve to non-public addresses, except what is allow-listed.

    By default only ``http``/``https`` URLs whose host resolves exclusively to public
    internet addresses pass: loopback, private (RFC 1918, ULA), link-local, site-local,
    CGNAT, multicast, reserved, benchmarking, documentation, unspecified and cloud-metadata
    addresses are refused, including their IPv6 forms that embed an IPv4 address
    (IPv4-mapped, NAT64, 6to4, Teredo) and numeric IPv4 spellings, and so is every address
    outside global unicast (default deny). A name that resolves to several addresses is
    refused if any of them is refused.

    Args:
        allow_hosts: Host names (exact, case-insensitive; ``".corp.example"`` also matches
            every subdomain) that may resolve to any address. For tests and intranets.
        allow_networks: Networks (``"127.0.0.1/32"``, ``"10.0.0.0/8"``) whose addresses are
            accepted even though the default would refuse them.
        resolver: ``resolver(host, port) -> [address, ...]``; the system resolver by default.
    """

    allow_hosts: frozenset[str] = frozenset()
    allow_networks: tuple[IPNetwork, ...] = ()
    resolver: Resolver = field(default=system_resolver, compare=False)

    @classmethod
    def build(
        cls,
        *,
        allow_hosts: Iterable[str] = (),
        allow_networks: Iterable[str | IPNetwork] = (),
        resolver: Resolver = system_resolver,
    ) -> AddressPolicy:
        """Build a policy from plain strings (``allow_networks=["127.0.0.0/8"]``).

        Raises:
            ValueError: When a network is not valid CIDR notation.
        """
        hosts = frozenset(host.strip().lower().rstrip(".") for host in allow_hosts)
        networks = tuple(ipaddress.ip_network(net, strict=False) for net in allow_networks)
        return cls(allow_hosts=hosts, allow_networks=networks, resolver=resolver)

    def check_url(self, url: str) -> Target:
        """Parse ``url``, resolve its host and vet every address; return where to connect.

        Malformed URLs, other schemes, URLs with credentials and over-long hosts are an
        :class:`~tools.errors.InvalidArgumentsError`; hosts that do not resolve are an
        ``InvalidArgumentsError`` too. Refused addresses raise
        :class:`~tools.errors.PermissionDeniedError` naming the address and why.
        """
        scheme, host, port = _split_url(url)
        literal = _literal_address(host)
        if literal is not None:
            addresses: list[IPAddress] = [literal]
        else:
            addresses = self._resolve(url, host, port)
        if not self._host_allowed(host):
            for address in addresses:
                self._vet(url, address)
        vetted = [str(address) for address in dict.fromkeys(addresses)]
        return Target(
            url=url,
            scheme=scheme,
            host=host,
            port=port,
            address=vetted[0],
            fallbacks=tuple(vetted[1:_MAX_ADDRESSES]),
        )

    def _resolve(self, url: str, host: str, port: int) -> list[IPAddress]:
        try:
            raw = self.resolver(host, port)
        except (OSError, UnicodeError) as exc:
            raise InvalidArgumentsError(
                f"Cannot load {url}: the host name {host!r} does not resolve. Check the spelling of the URL.",
                retryable=False,
            ) from exc
        addresses: list[IPAddress] = []
        for item in raw:
            try:
                addresses.append(ipaddress.ip_address(item.split("%", 1)[0]))
            except ValueError:
                continue
        if not addresses:
            raise InvalidArgumentsError(f"Cannot load {url}: the host name {host!r} has no usable address.")
        return addresses

    def _host_allowed(self, host: str) -> bool:
        if host in self.allow_hosts:
            return True
        return any(
            allowed.startswith(".") and (host.endswith(allowed) or host == allowed[1:]) for allowed in self.allow_hosts
        )

    def _vet(self, url: str, address: IPAddress) -> None:
        metadata = is_metadata(address)
        if not metadata and any(address in network for network in self.allow_networks):
            return
        reason = "a cloud metadata address" if metadata else blocked_reason(address)
        if reason is not None:
            raise PermissionDeniedError(
                f"Refused to load {url}: it points to {address}, {reason}. Only public "
                "internet addresses may be loaded.",
                details={"url": url, "address": str(address), "reason": reason},
            )


def _split_url(url: str) -> tuple[str, str, int]:
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:
        raise InvalidArgumentsError(
            f"{url!r} is not a valid URL ({exc}). Send an absolute http(s) URL such as 'https://example.com/page'."
        ) from exc
    scheme = parts.scheme.lower()
    if scheme not in _ALLOWED_SCHEMES:
        raise InvalidArgumentsError(
            f"Cannot load {url!r}: only http:// and https:// URLs can be loaded"
            f"{f', not {scheme}://' if scheme else ''}. Send an absolute URL such as "
            "'https://example.com/page'."
        )
    if parts.username is not None or parts.password is not None:
        raise InvalidArgumentsError(
            "Cannot load a URL that contains a user name or password; remove the 'user:password@' part."
        )
    host = (parts.hostname or "").rstrip(".")
    if not host or len(host) > _MAX_HOST_CHARS:
        raise InvalidArgumentsError(f"{url!r} has no valid host. Send an absolute URL such as 'https://example.com/'.")
    return scheme, host, port or _DEFAULT_PORTS[scheme]


def _literal_address(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return parse_legacy_ipv4(host)
