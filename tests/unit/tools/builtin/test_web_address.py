"""The SSRF address policy: numeric host forms, blocked ranges, DNS answers, allow-lists."""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

import pytest
import requests
from pytest_mock import MockerFixture

from tools.builtin.web import AddressPolicy, blocked_reason, parse_legacy_ipv4
from tools.builtin.web._pinned import PinnedAddressAdapter, UnpinnedHostError
from tools.errors import InvalidArgumentsError, PermissionDeniedError


class FakeResolver:
    """A resolver answering from a table (no network); records its calls."""

    def __init__(self, table: dict[str, Sequence[str]]) -> None:
        self.table = table
        self.calls: list[tuple[str, int]] = []

    def __call__(self, host: str, port: int) -> Sequence[str]:
        self.calls.append((host, port))
        if host not in self.table:
            raise OSError("Name or service not known")
        return self.table[host]


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("2130706433", "127.0.0.1"),
        ("0x7f.1", "127.0.0.1"),
        ("0x7f000001", "127.0.0.1"),
        ("017700000001", "127.0.0.1"),
        ("0177.0.0.1", "127.0.0.1"),
        ("127.1", "127.0.0.1"),
        ("10.1", "10.0.0.1"),
        ("192.168.257", "192.168.1.1"),
        ("8.8.8.8", "8.8.8.8"),
        ("8.8.8.8.", "8.8.8.8"),
        ("0", "0.0.0.0"),
    ],
)
def test_legacy_ipv4_forms_are_parsed_like_browsers(host: str, expected: str) -> None:
    assert parse_legacy_ipv4(host) == ipaddress.IPv4Address(expected)


@pytest.mark.parametrize("host", ["example.com", "1.2.3.4.5", "4294967296", "256.1.1.1", "08.1", "", "1..1", "1.0xg"])
def test_names_and_out_of_range_forms_are_not_ipv4(host: str) -> None:
    assert parse_legacy_ipv4(host) is None


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("127.0.0.1", "a loopback address"),
        ("::1", "a loopback address"),
        ("10.0.0.1", "a private address"),
        ("172.16.5.4", "a private address"),
        ("192.168.1.1", "a private address"),
        ("fd12:3456::1", "a private address"),
        ("169.254.169.254", "a cloud metadata address"),
        ("fd00:ec2::254", "a cloud metadata address"),
        ("169.254.1.1", "a link-local address"),
        ("fe80::1", "a link-local address"),
        ("100.64.0.1", "a CGNAT address"),
        ("224.0.0.1", "a multicast address"),
        ("ff02::1", "a multicast address"),
        ("0.0.0.0", "an unspecified address"),
        ("::", "an unspecified address"),
        ("240.0.0.1", "a reserved address"),
        ("::ffff:127.0.0.1", "a loopback address"),
        ("::ffff:169.254.169.254", "a cloud metadata address"),
        ("64:ff9b::a00:1", "a private address"),
        ("2002:7f00:1::", "a loopback address"),
    ],
)
def test_non_public_addresses_are_blocked(address: str, reason: str) -> None:
    assert blocked_reason(ipaddress.ip_address(address)) == reason


@pytest.mark.parametrize("address", ["8.8.8.8", "93.184.216.34", "2606:4700:4700::1111"])
def test_public_addresses_pass(address: str) -> None:
    assert blocked_reason(ipaddress.ip_address(address)) is None


#: (address, reason or None for public). Rows marked "differs" are classified differently by
#: the ``ipaddress`` tables of Python 3.11.0-3.11.9 / 3.12.0-3.12.3 and of later releases, or
#: are "global" there although they are not public web addresses.
ADDRESS_TABLE: list[tuple[str, str | None]] = [
    # IPv4 special-purpose ranges
    ("0.0.0.0", "an unspecified address"),
    ("0.1.2.3", "a 'this network' address"),
    ("10.255.255.255", "a private address"),
    ("100.64.0.1", "a CGNAT address"),
    ("100.127.255.254", "a CGNAT address"),
    ("100.128.0.1", None),
    ("100.100.100.200", "a cloud metadata address"),
    ("127.255.0.1", "a loopback address"),
    ("169.254.0.1", "a link-local address"),
    ("169.254.170.2", "a cloud metadata address"),
    ("172.31.255.255", "a private address"),
    ("172.32.0.1", None),
    ("192.0.0.8", "a reserved address"),
    ("192.0.0.9", "a reserved address"),  # differs: "global" since 3.11.10 / 3.12.4
    ("192.0.0.10", "a reserved address"),  # differs
    ("192.0.0.170", "a reserved address"),
    ("192.0.2.1", "a documentation address"),
    ("192.88.99.1", "a reserved address"),  # differs: "global" in every version
    ("192.168.0.1", "a private address"),
    ("198.18.0.1", "a benchmarking address"),
    ("198.19.255.255", "a benchmarking address"),
    ("198.20.0.1", None),
    ("198.51.100.7", "a documentation address"),
    ("203.0.113.9", "a documentation address"),
    ("224.0.0.251", "a multicast address"),
    ("239.255.255.250", "a multicast address"),
    ("240.0.0.1", "a reserved address"),
    ("255.255.255.255", "a broadcast address"),
    ("1.1.1.1", None),
    ("192.31.196.1", None),  # AS112: globally reachable
    ("223.255.255.254", None),
    # IPv6
    ("::", "an unspecified address"),
    ("::1", "a loopback address"),
    ("::2", "a 'this network' address"),  # IPv4-compatible ::0.0.0.2
    ("::8.8.8.8", "a deprecated IPv4-compatible address"),
    ("::127.0.0.1", "a loopback address"),
    ("::ffff:8.8.8.8", None),  # differs: IPv4-mapped judged as its IPv4 address
    ("::ffff:10.1.2.3", "a private address"),
    ("::ffff:0:8.8.8.8", "a deprecated IPv4-compatible address"),  # IPv4-translated
    ("64:ff9b::8.8.8.8", None),  # NAT64 of a public address
    ("64:ff9b::10.0.0.1", "a private address"),
    ("64:ff9b:1::1", "a private address"),  # differs: local-use NAT64
    ("100::1", "a reserved address"),
    ("2001::1", "an unspecified address"),  # Teredo with server 0.0.0.0
    ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "a documentation address"),  # Teredo, client 192.0.2.45
    ("2001:0:808:808:8000:63bf:f7f7:f7f7", None),  # Teredo, server and client public
    ("2001:0:808:808:8000:63bf:f5ff:fffe", "a private address"),  # Teredo, client 10.0.0.1
    ("2001:1::1", "a reserved address"),  # differs
    ("2001:1::2", "a reserved address"),  # differs
    ("2001:2::1", "a benchmarking address"),
    ("2001:3::1", "a reserved address"),  # differs (AMT)
    ("2001:4:112::1", "a reserved address"),  # differs (AS112-v6 in the IETF block)
    ("2001:10::1", "a reserved address"),
    ("2001:20::1", "a reserved address"),  # differs (ORCHIDv2)
    ("2001:30::1", "a reserved address"),  # differs
    ("2001:db8::1", "a documentation address"),
    ("2002:808:808::1", None),  # 6to4 of a public address
    ("2002:c0a8:101::1", "a private address"),  # 6to4 of 192.168.1.1
    ("2002:a9fe:a9fe::1", "a cloud metadata address"),
    ("2606:4700:4700::1111", None),
    ("2620:4f:8000::1", None),
    ("3fff::1", "a documentation address"),  # differs: RFC 9637 (2024)
    ("3fff:fff::1", "a documentation address"),
    ("4000::1", "not a public internet address"),
    ("5f00::1", "a reserved address"),  # differs
    ("fc00::1", "a private address"),
    ("fd12:3456::1", "a private address"),
    ("fd00:ec2::254", "a cloud metadata address"),
    ("fe80::1", "a link-local address"),
    ("fec0::1", "a site-local address"),  # differs: "global" before 3.11.10 / 3.12.4
    ("feff::1", "a site-local address"),
    ("ff02::1", "a multicast address"),
    ("e000::1", "not a public internet address"),
]


@pytest.mark.parametrize(("address", "reason"), ADDRESS_TABLE)
def test_address_table(address: str, reason: str | None) -> None:
    assert blocked_reason(ipaddress.ip_address(address)) == reason


@pytest.mark.parametrize(
    "flag", ["is_private", "is_global", "is_reserved", "is_loopback", "is_link_local", "is_multicast", "is_site_local"]
)
def test_the_decision_never_reads_the_ipaddress_tables(mocker: MockerFixture, flag: str) -> None:
    # Fault injection: the running Python's flags would be wrong; the answers stay the same.
    for cls in (ipaddress.IPv4Address, ipaddress.IPv6Address):
        if hasattr(cls, flag):
            mocker.patch.object(cls, flag, new=property(lambda self: pytest.fail("ipaddress flag consulted")))
    for address, reason in ADDRESS_TABLE:
        assert blocked_reason(ipaddress.ip_address(address)) == reason, address


@pytest.mark.parametrize(
    "url",
    ["http://[fec0::1]/", "http://[64:ff9b:1::1]/", "http://192.0.0.9/", "http://[5f00::1]/", "http://[3fff::1]/"],
)
def test_policy_refuses_ranges_python_calls_global(url: str) -> None:
    with pytest.raises(PermissionDeniedError, match="Only public internet addresses"):
        AddressPolicy(resolver=FakeResolver({})).check_url(url)


def test_metadata_in_ipv6_forms_stays_refused_inside_allowed_networks() -> None:
    policy = AddressPolicy.build(allow_networks=["::ffff:0:0/96", "2002::/16"])
    assert policy.check_url("http://[::ffff:8.8.4.4]/").address == "::ffff:808:404"
    for url in ("http://[::ffff:169.254.169.254]/", "http://[2002:a9fe:a9fe::1]/"):
        with pytest.raises(PermissionDeniedError, match="metadata"):
            policy.check_url(url)


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]/",
        "http://2130706433/",
        "http://0x7f.1/",
        "http://[::ffff:127.0.0.1]/",
        "http://[fd00:ec2::254]/",
        "https://10.0.0.1:8443/x",
        "http://0/",
    ],
)
def test_literal_addresses_are_refused_without_resolving(url: str) -> None:
    resolver = FakeResolver({})
    with pytest.raises(PermissionDeniedError, match="Only public internet addresses"):
        AddressPolicy(resolver=resolver).check_url(url)
    assert resolver.calls == []


def test_names_are_checked_after_resolution_on_every_address() -> None:
    resolver = FakeResolver({"mixed.example": ["93.184.216.34", "10.0.0.5"]})
    with pytest.raises(PermissionDeniedError, match=r"10\.0\.0\.5, a private address"):
        AddressPolicy(resolver=resolver).check_url("https://mixed.example/page")


def test_public_name_gives_a_target_pinned_to_the_vetted_address() -> None:
    resolver = FakeResolver({"www.example.com": ["93.184.216.34", "2606:2800:220:1::1"]})
    target = AddressPolicy(resolver=resolver).check_url("https://WWW.Example.com:8443/a?b=c")
    assert (target.scheme, target.host, target.port) == ("https", "www.example.com", 8443)
    assert target.address == "93.184.216.34"
    assert target.host_header == "www.example.com:8443"
    assert resolver.calls == [("www.example.com", 8443)]


def test_localhost_is_refused_by_the_default_policy() -> None:
    with pytest.raises(PermissionDeniedError, match="localhost"):
        AddressPolicy().check_url("http://localhost/")


def test_unresolvable_host_is_a_validation_error() -> None:
    with pytest.raises(InvalidArgumentsError, match="does not resolve"):
        AddressPolicy(resolver=FakeResolver({})).check_url("http://nowhere.invalid/")


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("file:///etc/passwd", "only http:// and https://"),
        ("gopher://example.com/", "not gopher://"),
        ("example.com/page", "only http:// and https://"),
        ("http://user:pw@example.com/", "user name or password"),
        ("http:///path", "no valid host"),
        ("http://example.com:99999/", "not a valid URL"),
        ("http://" + "a" * 300 + ".com/", "no valid host"),
    ],
)
def test_malformed_and_other_scheme_urls_are_validation_errors(url: str, message: str) -> None:
    with pytest.raises(InvalidArgumentsError, match=message):
        AddressPolicy(resolver=FakeResolver({})).check_url(url)


def test_allow_networks_admit_their_addresses_only() -> None:
    policy = AddressPolicy.build(allow_networks=["127.0.0.0/8", "10.1.0.0/16"])
    assert policy.check_url("http://127.0.0.1:8080/").address == "127.0.0.1"
    assert policy.check_url("http://10.1.2.3/").address == "10.1.2.3"
    with pytest.raises(PermissionDeniedError):
        policy.check_url("http://10.2.0.1/")


def test_metadata_address_stays_refused_inside_an_allowed_network() -> None:
    policy = AddressPolicy.build(allow_networks=["169.254.0.0/16"])
    assert policy.check_url("http://169.254.1.1/").address == "169.254.1.1"
    with pytest.raises(PermissionDeniedError, match="metadata"):
        policy.check_url("http://169.254.169.254/")


def test_allow_hosts_exact_and_subdomain_suffix() -> None:
    resolver = FakeResolver({"intranet": ["10.0.0.2"], "wiki.corp.example": ["10.0.0.3"], "evil.example": ["10.0.0.4"]})
    policy = AddressPolicy.build(allow_hosts=["Intranet", ".corp.example"], resolver=resolver)
    assert policy.check_url("http://intranet/").address == "10.0.0.2"
    assert policy.check_url("http://wiki.corp.example/").address == "10.0.0.3"
    with pytest.raises(PermissionDeniedError):
        policy.check_url("http://evil.example/")


def test_invalid_allow_network_is_a_developer_error() -> None:
    with pytest.raises(ValueError, match="does not appear to be"):
        AddressPolicy.build(allow_networks=["not-a-network"])


def test_pinned_adapter_refuses_unvetted_hosts() -> None:
    adapter = PinnedAddressAdapter()
    prepared = requests.Request("GET", "http://unvetted.example/").prepare()
    with pytest.raises(UnpinnedHostError):
        adapter.build_connection_pool_key_attributes(prepared, True)


def test_pinned_adapter_connects_to_the_address_and_keeps_the_name_for_tls() -> None:
    adapter = PinnedAddressAdapter()
    adapter.pin("https", "www.example.com", 443, "93.184.216.34")
    prepared = requests.Request("GET", "https://www.example.com/page").prepare()
    host_params, pool_kwargs = adapter.build_connection_pool_key_attributes(prepared, True)
    assert host_params == {"scheme": "https", "host": "93.184.216.34", "port": 443}
    assert pool_kwargs["server_hostname"] == "www.example.com"
    assert pool_kwargs["assert_hostname"] == "www.example.com"
    assert pool_kwargs["cert_reqs"] == "CERT_REQUIRED"
    pool = adapter.get_connection_with_tls_context(prepared, True)
    assert pool.host == "93.184.216.34"
    adapter.close()
