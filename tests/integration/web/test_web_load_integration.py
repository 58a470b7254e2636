"""WebTool action ``load`` against a real loopback server (explicitly allow-listed)."""

from __future__ import annotations

import socket
from typing import Any

import pytest

from tools.builtin.web import AddressPolicy, FetchLimits, PageFetcher, WebTool

pytest.importorskip("trafilatura")

LocalServer = Any  # the conftest's LocalServer (conftest modules are not importable)


def _tool(limits: FetchLimits | None = None) -> WebTool:
    policy = AddressPolicy.build(allow_networks=["127.0.0.1/32"])
    return WebTool(fetcher=PageFetcher(policy=policy, limits=limits))


def _load(tool: WebTool, url: str, **kwargs: Any) -> dict[str, Any]:
    return tool(action="load", url=url, **kwargs)


def test_article_main_text_without_boilerplate(local_server: LocalServer) -> None:
    result = _load(_tool(), local_server.url("/article"))
    assert result["status"] == "success", result
    data = result["data"]
    assert data["title"] == "Solar Panels & You"
    assert data["content_type"] == "text/html"
    assert data["final_url"] == local_server.url("/article")
    assert "photovoltaic cells made of silicon" in data["text"]
    assert "twenty-five years" in data["text"]
    assert "should never appear" not in data["text"]
    assert data["truncated"] is False
    assert "links" not in data
    assert "note" not in data


def test_links_are_absolute_deduplicated_and_without_fragments(local_server: LocalServer) -> None:
    data = _load(_tool(), local_server.url("/article"), include_links=True)["data"]
    links = {link["url"]: link["text"] for link in data["links"]}
    assert links[local_server.url("/guide")] == "installation guide"
    assert links["https://example.org/faq"] == "external FAQ"
    assert links[local_server.url("/about")] == "About"
    assert all(url.startswith("http") and "#" not in url for url in links)


def test_the_server_sees_the_original_host_header(local_server: LocalServer) -> None:
    _load(_tool(), local_server.url("/plain"))
    headers = local_server.recorder.requests[-1]["headers"]
    assert headers["host"] == f"127.0.0.1:{local_server.port}"
    assert headers["user-agent"].startswith("tooldeck-web/")


def test_plain_text_json_and_declared_charset(local_server: LocalServer) -> None:
    tool = _tool()
    plain = _load(tool, local_server.url("/plain"))["data"]
    assert plain["text"] == "Plain text with ünïcode.\nLine two."
    assert "title" not in plain
    assert _load(tool, local_server.url("/json"))["data"]["text"] == '{"answer": 42}'
    latin = _load(tool, local_server.url("/latin1"))["data"]
    assert latin["title"] == "Café"
    assert "Crème brûlée" in latin["text"]


def test_max_chars_cuts_with_a_note(local_server: LocalServer) -> None:
    full = _load(_tool(), local_server.url("/long"))["data"]
    assert full["truncated"] is False
    assert len(full["text"]) > 5_000
    data = _load(_tool(), local_server.url("/long"), max_chars=500)["data"]
    assert 300 < len(data["text"]) <= 500
    assert full["text"].startswith(data["text"])
    assert data["truncated"] is True
    assert "cut at" in data["note"]
    assert "max_chars" in data["note"]


def test_redirect_within_allowed_network_is_followed(local_server: LocalServer) -> None:
    data = _load(_tool(), local_server.url("/redirect-local"))["data"]
    assert data["url"] == local_server.url("/redirect-local")
    assert data["final_url"] == local_server.url("/article")
    assert "photovoltaic" in data["text"]


@pytest.mark.parametrize(
    ("path", "address"),
    [("/redirect-private", "10.0.0.7"), ("/redirect-metadata", "169.254.169.254")],
)
def test_redirect_to_private_or_metadata_address_is_refused(local_server: LocalServer, path: str, address: str) -> None:
    result = _load(_tool(), local_server.url(path))
    assert result["status"] == "error"
    assert result["error_type"] == "permission_denied"
    assert address in result["error"]
    assert result["details"]["address"] == address


def test_redirect_to_another_scheme_is_refused(local_server: LocalServer) -> None:
    result = _load(_tool(), local_server.url("/redirect-file"))
    assert result["error_type"] == "validation_error"
    assert "only http:// and https://" in result["error"]


def test_redirect_loop_stops_after_max_redirects(local_server: LocalServer) -> None:
    result = _load(_tool(FetchLimits(max_redirects=3)), local_server.url("/redirect-loop"))
    assert result["error_type"] == "execution_error"
    assert "more than 3 redirects" in result["error"]
    assert len(local_server.recorder.requests) == 4


def test_gigabyte_response_is_cut_at_max_bytes(local_server: LocalServer) -> None:
    limits = FetchLimits(max_bytes=300_000)
    result = _load(_tool(limits), local_server.url("/huge"), max_chars=100_000)
    assert result["status"] == "success", result
    data = result["data"]
    assert data["truncated"] is True
    assert "300,000-byte download limit" in data["note"]
    assert 0 < len(data["text"]) <= 100_000


def test_fetcher_reads_at_most_max_bytes(local_server: LocalServer) -> None:
    policy = AddressPolicy.build(allow_networks=["127.0.0.1/32"])
    fetcher = PageFetcher(policy=policy, limits=FetchLimits(max_bytes=123_457))
    page = fetcher.fetch(local_server.url("/huge"))
    assert page.truncated is True
    assert len(page.body) == 123_457


def test_slow_drip_response_hits_the_total_deadline(local_server: LocalServer) -> None:
    limits = FetchLimits(total_timeout=0.4, read_timeout=5.0)
    result = _load(_tool(limits), local_server.url("/slow-drip"))
    assert result["status"] == "error"
    assert result["error_type"] == "timeout"
    assert "took longer than 0.4 s" in result["error"]
    assert result["retryable"] is True


def test_binary_content_type_is_refused(local_server: LocalServer) -> None:
    result = _load(_tool(), local_server.url("/binary"))
    assert result["error_type"] == "execution_error"
    assert "image/png, not a text page" in result["error"]


def test_missing_content_type_is_refused(local_server: LocalServer) -> None:
    result = _load(_tool(), local_server.url("/no-type"))
    assert "no content type, not a text page" in result["error"]


def test_http_errors_are_reported_for_the_model(local_server: LocalServer) -> None:
    tool = _tool()
    missing = _load(tool, local_server.url("/nope"))
    assert missing["error_type"] == "execution_error"
    assert "HTTP 404" in missing["error"]
    assert missing["retryable"] is False
    down = _load(tool, local_server.url("/server-error"))
    assert down["error_type"] == "upstream_error"
    assert down["retryable"] is True


def test_connection_refused_is_an_upstream_error() -> None:
    with socket.socket() as probe:  # a port that was just free and now has no listener
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = _load(_tool(), f"http://127.0.0.1:{port}/")
    assert result["error_type"] == "upstream_error"
    assert result["error"] == f"Could not connect to http://127.0.0.1:{port}/ (ConnectionError)."


def test_default_policy_refuses_the_loopback_server_itself(local_server: LocalServer) -> None:
    result = WebTool()(action="load", url=local_server.url("/article"))
    assert result["error_type"] == "permission_denied"
    assert local_server.recorder.requests == []


def test_old_name_load_web_page_with_its_old_arguments(local_server: LocalServer) -> None:
    from tools.builtin.legacy import legacy_tools

    web = WebTool(allow_networks=["127.0.0.1/32"])
    (load_web_page,) = [t for t in legacy_tools(web=web) if t.name == "load_web_page"]
    result = load_web_page(url=local_server.url("/plain"), max_chars=5000)
    assert result["status"] == "success"
    assert result["data"]["text"].startswith("Plain text")


def test_connection_goes_to_the_vetted_address_with_the_original_host(local_server: LocalServer) -> None:
    # "pinned.test" does not exist in DNS: the load only works because the fetcher connects
    # to the address the policy vetted (no second resolution), trying the next vetted
    # address when the first refuses (nothing listens on 127.0.0.2).
    calls: list[tuple[str, int]] = []

    def resolver(host: str, port: int) -> list[str]:
        calls.append((host, port))
        return ["127.0.0.2", "127.0.0.1"]

    policy = AddressPolicy.build(allow_networks=["127.0.0.0/8"], resolver=resolver)
    tool = WebTool(fetcher=PageFetcher(policy=policy))
    result = _load(tool, f"http://pinned.test:{local_server.port}/plain")
    assert result["status"] == "success", result
    assert result["data"]["final_url"] == f"http://pinned.test:{local_server.port}/plain"
    assert calls == [("pinned.test", local_server.port)]
    assert local_server.recorder.requests[-1]["headers"]["host"] == f"pinned.test:{local_server.port}"


def test_rebinding_to_a_private_address_on_redirect_is_refused(local_server: LocalServer) -> None:
    # The first hop resolves to the allowed test server; the redirect target's name resolves
    # to a private address and is refused before any connection.
    def resolver(host: str, port: int) -> list[str]:
        return ["127.0.0.1"] if host == "start.test" else ["192.168.0.10"]

    local_server.scripted.push(
        "/hop", 302, b"", {"Location": "http://rebind.test/secret", "Content-Type": "text/plain"}
    )
    policy = AddressPolicy.build(allow_networks=["127.0.0.1/32"], resolver=resolver)
    result = _load(WebTool(fetcher=PageFetcher(policy=policy)), f"http://start.test:{local_server.port}/hop")
    assert result["error_type"] == "permission_denied"
    assert "192.168.0.10, a private address" in result["error"]
    assert [r["path"] for r in local_server.recorder.requests] == ["/hop"]
