"""The SSRF address policy: numeric host forms, blocked ranges, DNS answers, allow-lists."""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

import pytest
import requests

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
