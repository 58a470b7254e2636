"""Which IP addresses are public: explicit tables, not the running Python's ``ipaddress`` flags.

``ipaddress``'s ``is_private``/``is_global`` tables changed between patch releases (3.11.10,
3.12.4) and disagree with the IANA special-purpose registries on some ranges (``fec0::/10``
was "global" before), so the SSRF policy would depend on the interpreter. Here the decision
is a fixed table:

1. Cloud metadata addresses are refused (also when embedded in IPv6).
2. IPv6 forms that carry an IPv4 address are judged as that IPv4 address: IPv4-mapped
   ``::ffff:0:0/96``, NAT64 ``64:ff9b::/96``, 6to4 ``2002::/16``, Teredo ``2001::/32``
   (server and client). The deprecated IPv4-compatible ``::/96`` and IPv4-translated
   ``::ffff:0:0:0/96`` forms are refused either way.
3. Special-purpose ranges (IANA IPv4/IPv6 special-purpose registries) are refused with
   their reason.
4. Everything else must be on the global-unicast allow list (IPv4 ``1.0.0.0`` to
   ``223.255.255.255``, IPv6 ``2000::/3``); any other address is refused: default deny.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

NOT_PUBLIC = "not a public internet address"
METADATA = "a cloud metadata address"


def _nets(*specs: str) -> tuple[IPNetwork, ...]:
    return tuple(ipaddress.ip_network(spec) for spec in specs)


def _table(*rows: tuple[str, str]) -> tuple[tuple[IPNetwork, str], ...]:
    return tuple((ipaddress.ip_network(spec), reason) for spec, reason in rows)


#: Cloud metadata endpoints: refused even inside an allow-listed network.
METADATA_ADDRESSES: frozenset[IPAddress] = frozenset(
    {
        ipaddress.ip_address("169.254.169.254"),  # AWS, GCP, Azure, OpenStack
        ipaddress.ip_address("169.254.170.2"),  # AWS ECS task metadata
        ipaddress.ip_address("100.100.100.200"),  # Alibaba Cloud
        ipaddress.ip_address("fd00:ec2::254"),  # AWS IPv6
    }
)

#: Refused IPv4 ranges, most specific first (the first match gives the reason).
IPV4_DENIED = _table(
    ("0.0.0.0/32", "an unspecified address"),
    ("0.0.0.0/8", "a 'this network' address"),
    ("10.0.0.0/8", "a private address"),
    ("100.64.0.0/10", "a CGNAT address"),
    ("127.0.0.0/8", "a loopback address"),
    ("169.254.0.0/16", "a link-local address"),
    ("172.16.0.0/12", "a private address"),
    ("192.0.0.0/24", "a reserved address"),  # IETF protocol assignments
    ("192.0.2.0/24", "a documentation address"),
    ("192.88.99.0/24", "a reserved address"),  # deprecated 6to4 relay anycast
    ("192.168.0.0/16", "a private address"),
    ("198.18.0.0/15", "a benchmarking address"),
    ("198.51.100.0/24", "a documentation address"),
    ("203.0.113.0/24", "a documentation address"),
    ("224.0.0.0/4", "a multicast address"),
    ("255.255.255.255/32", "a broadcast address"),
    ("240.0.0.0/4", "a reserved address"),
)
#: IPv4 global unicast: 0.0.0.0 to 223.255.255.255 (0/8 is refused above).
IPV4_ALLOWED = _nets("0.0.0.0/1", "128.0.0.0/2", "192.0.0.0/3")

#: Refused IPv6 ranges, most specific first (embedded-IPv4 forms are decoded before these).
IPV6_DENIED = _table(
    ("::/128", "an unspecified address"),
    ("::1/128", "a loopback address"),
    ("64:ff9b:1::/48", "a private address"),  # local-use NAT64
    ("100::/64", "a reserved address"),  # discard-only
    ("2001:2::/48", "a benchmarking address"),
    ("2001:db8::/32", "a documentation address"),
    ("2001::/23", "a reserved address"),  # IETF protocol assignments (ORCHID, AMT, AS112, ...)
    ("3fff::/20", "a documentation address"),
    ("5f00::/16", "a reserved address"),  # SRv6 SIDs
    ("fc00::/7", "a private address"),  # unique local addresses
    ("fe80::/10", "a link-local address"),
    ("fec0::/10", "a site-local address"),
    ("ff00::/8", "a multicast address"),
)
#: IPv6 global unicast.
IPV6_ALLOWED = _nets("2000::/3")

_V4Extract = Callable[[ipaddress.IPv6Address], tuple[ipaddress.IPv4Address, ...]]


def _low32(address: ipaddress.IPv6Address) -> tuple[ipaddress.IPv4Address, ...]:
    return (ipaddress.IPv4Address(int(address) & 0xFFFFFFFF),)


def _sixtofour(address: ipaddress.IPv6Address) -> tuple[ipaddress.IPv4Address, ...]:
    return (ipaddress.IPv4Address((int(address) >> 80) & 0xFFFFFFFF),)


def _teredo(address: ipaddress.IPv6Address) -> tuple[ipaddress.IPv4Address, ...]:
    server = ipaddress.IPv4Address((int(address) >> 64) & 0xFFFFFFFF)
    client = ipaddress.IPv4Address(~int(address) & 0xFFFFFFFF)
    return (server, client)


#: IPv6 ranges that carry IPv4 addresses: (network, decoder, judged as the IPv4 address?).
#: Forms judged False are refused even when the IPv4 address is public (deprecated forms).
IPV6_EMBEDDING: tuple[tuple[IPNetwork, _V4Extract, bool], ...] = (
    (ipaddress.ip_network("::ffff:0:0/96"), _low32, True),  # IPv4-mapped
    (ipaddress.ip_network("64:ff9b::/96"), _low32, True),  # NAT64 well-known prefix
    (ipaddress.ip_network("2002::/16"), _sixtofour, True),  # 6to4
    (ipaddress.ip_network("2001::/32"), _teredo, True),  # Teredo: server and client
    (ipaddress.ip_network("::ffff:0:0:0/96"), _low32, False),  # IPv4-translated (SIIT)
    (ipaddress.ip_network("::/96"), _low32, False),  # IPv4-compatible (deprecated)
)


def embedded_ipv4(address: IPAddress) -> tuple[tuple[ipaddress.IPv4Address, ...], bool]:
    """The IPv4 addresses an IPv6 address carries, and whether it is judged as them.

    Returns ``((), True)`` for addresses that carry none. ``::`` and ``::1`` carry none.
    """
    if isinstance(address, ipaddress.IPv6Address) and int(address) > 1:
        for network, extract, transparent in IPV6_EMBEDDING:
            if address in network:
                return extract(address), transparent
    return (), True


def is_metadata(address: IPAddress) -> bool:
    """Whether ``address`` (or the IPv4 address it embeds) is a cloud metadata endpoint."""
    return address in METADATA_ADDRESSES or any(v4 in METADATA_ADDRESSES for v4 in embedded_ipv4(address)[0])


def blocked_reason(address: IPAddress) -> str | None:
    """Why ``address`` is refused (``"a private address"``, ...), or None for a public one.

    Decided by the explicit tables of this module (see its docstring), never by the
    ``ipaddress`` module's flags, so every Python version answers the same.
    """
    if address in METADATA_ADDRESSES:
        return METADATA
    inner, transparent = embedded_ipv4(address)
    if inner:
        reasons = [blocked_reason(v4) for v4 in inner]
        refused = next((reason for reason in reasons if reason is not None), None)
        if refused is not None:
            return refused
        return None if transparent else "a deprecated IPv4-compatible address"
    v6 = isinstance(address, ipaddress.IPv6Address)
    for network, reason in IPV6_DENIED if v6 else IPV4_DENIED:
        if address in network:
            return reason
    if not any(address in network for network in (IPV6_ALLOWED if v6 else IPV4_ALLOWED)):
        return NOT_PUBLIC
    return None
