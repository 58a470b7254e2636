"""The attacker's tests, in a real browser: another origin's page, DNS rebinding, no token."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from orchestrator.ui import ConsoleSources
from tests.integration.ui._browser import REBIND_HOST, wait_for
from tests.integration.ui._harness import ConsoleHarness


@pytest.fixture
def attacker() -> Iterator[tuple[str, dict[str, str]]]:
    """A page on another origin (127.0.0.1, another port: same site, other origin) whose own
    script posts a form to the console as soon as it loads; ``pages[path] = html``."""
    pages: dict[str, str] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = pages.get(self.path, "not found").encode()
            self.send_response(200 if self.path in pages else 404)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", pages
    finally:
        server.shutdown()
        server.server_close()


def _console(harness: ConsoleHarness) -> Any:
    harness.refusals_expected = True
    registry = harness.registry()

    def lookup(query: str) -> str:
        """Look something up.

        Args:
            query: What to look for.
        """
        return query

    registry.register(lookup)
    return harness.start(ConsoleSources(registry=registry, settings=harness.settings()))


def test_a_form_posted_by_another_origin_changes_nothing(
    harness: ConsoleHarness, attacker: tuple[str, dict[str, str]]
) -> None:
    """The browser sends the cookie (same site), but the Origin is not the console's."""
    from selenium.webdriver.common.by import By

    console = _console(harness)
    origin, pages = attacker
    pages["/"] = (
        "<!doctype html><html><body>"
        f'<form id="f" method="post" action="{console.url}/settings">'
        '<input name="freedom" value="high"><input name="iterations" value="9"><input name="routing" value="">'
        '<input name="csrf_token" value="guessed"></form>'
        "<script>document.getElementById('f').submit()</script></body></html>"
    )
    browser = harness.browser
    browser.get(origin + "/")
    body = wait_for(browser, lambda d: d.current_url.startswith(console.url) and d.find_element(By.TAG_NAME, "body"))
    assert "cannot change anything here" in body.text
    assert harness.approvals.freedom() is None
    harness.open(console, "/settings")  # the person's own session still works
    assert browser.find_element(By.ID, "freedom").get_attribute("value") == ""


def test_a_rebound_host_name_gets_nothing_even_with_the_token(harness: ConsoleHarness) -> None:
    from selenium.webdriver.common.by import By

    console = _console(harness)
    port = console.url.rsplit(":", 1)[1]
    browser = harness.browser
    browser.get(f"http://{REBIND_HOST}:{port}/tools?token={console.security.token}")
    text = browser.find_element(By.TAG_NAME, "body").text
    assert "answers only to its own address" in text
    assert "lookup" not in text
    assert browser.get_cookies() == []  # the token was not turned into a cookie for that name
    browser.get(f"http://{REBIND_HOST}:{port}/tools")
    assert "lookup" not in browser.find_element(By.TAG_NAME, "body").text


def test_a_browser_without_the_token_sees_nothing(harness: ConsoleHarness) -> None:
    from selenium.webdriver.common.by import By

    console = _console(harness)
    harness.browser.delete_all_cookies()
    harness.browser.get(console.url + "/tools")
    text = harness.browser.find_element(By.TAG_NAME, "body").text
    assert "Not signed in" in text
    assert "lookup" not in text
