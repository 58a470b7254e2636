"""Debian's Chromium driven by selenium, headless, for the console's browser tests.

Nothing is downloaded: the browser and its driver are the system's (``apt-get install
chromium chromium-driver``; ``.ci/run`` installs them), found on ``PATH`` or where Debian
puts them, and given to selenium by path (so selenium's own driver manager never runs).
Each browser gets a fresh profile directory.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: A host name the browser resolves to 127.0.0.1 (see ``--host-resolver-rules``).
REBIND_HOST = "rebind.test"
#: The flags of every browser started here.
CHROMIUM_FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--window-size=1400,1000",
    # A name that resolves to this machine, as an attacker's would after DNS rebinding.
    f"--host-resolver-rules=MAP {REBIND_HOST} 127.0.0.1",
)
_BROWSERS = ("/usr/lib/chromium/chromium", "chromium", "chromium-browser", "google-chrome")
_DRIVERS = ("chromedriver", "/usr/lib/chromium/chromedriver", "/usr/bin/chromedriver")
WAIT_SECONDS = 30.0


def find(candidates: tuple[str, ...]) -> str | None:
    """The first of ``candidates`` that exists (a path) or is on ``PATH`` (a name)."""
    for candidate in candidates:
        if candidate.startswith("/"):
            if Path(candidate).is_file():
                return candidate
        else:
            found = shutil.which(candidate)
            if found:
                return found
    return None


def why_no_browser() -> str | None:
    """Why the browser tests cannot run here (None: they can)."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[test]')"
    if find(_BROWSERS) is None:
        return "Chromium is not installed (apt-get install chromium chromium-driver; .ci/run installs it)"
    if find(_DRIVERS) is None:
        return "chromedriver is not installed (apt-get install chromium-driver; .ci/run installs it)"
    return None


def start_browser() -> tuple[Any, Callable[[], None]]:
    """A headless Chromium driven by selenium, and the function that stops it (and removes its profile)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="tooldeck-chromium-")
    options = webdriver.ChromeOptions()
    for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    options.binary_location = find(_BROWSERS) or ""
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(find(_DRIVERS) or ""), options=options)
    driver.set_page_load_timeout(WAIT_SECONDS * 2)

    def stop() -> None:
        try:
            driver.quit()
        finally:
            shutil.rmtree(profile, ignore_errors=True)

    return driver, stop


def wait_for(driver: Any, condition: Callable[[Any], Any], *, timeout: float = WAIT_SECONDS) -> Any:
    """``condition(driver)`` once it is truthy (selenium's wait; generous for loaded machines).

    A part of the page replaced by a live update while the condition reads it is read again.
    """
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    ignored = (NoSuchElementException, StaleElementReferenceException)
    return WebDriverWait(driver, timeout, poll_frequency=0.05, ignored_exceptions=ignored).until(condition)


def severe_console_messages(driver: Any) -> list[str]:
    """The page's console errors since the last call (script errors, CSP violations, 404s)."""
    return [entry["message"] for entry in driver.get_log("browser") if entry.get("level") == "SEVERE"]
