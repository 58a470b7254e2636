"""Fixtures of the console's browser tests: a real server, a real headless Chromium, screenshots.

Screenshots go to a temporary directory; with ``TOOLDECK_UI_SCREENSHOTS=DIR`` (e.g.
``docs/images``) they are copied there at the end of the session, which is how the images of
``docs/ui.md`` and the README are made.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

from tests.integration.ui._browser import severe_console_messages, start_browser, why_no_browser
from tests.integration.ui._harness import ConsoleHarness

SCREENSHOTS_VARIABLE = "TOOLDECK_UI_SCREENSHOTS"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Chromium per test module (each console has its own port, so its own cookie)."""
    reason = why_no_browser()
    if reason is not None:
        pytest.skip(f"browser tests need Chromium and selenium: {reason}")
    driver, stop = start_browser()
    try:
        yield driver
    finally:
        stop()


@pytest.fixture(scope="session")
def screenshot_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Where the tests' screenshots go (copied to ``$TOOLDECK_UI_SCREENSHOTS`` at the end)."""
    directory = tmp_path_factory.mktemp("console-screenshots")
    yield directory
    target = os.environ.get(SCREENSHOTS_VARIABLE, "").strip()
    if target:
        Path(target).mkdir(parents=True, exist_ok=True)
        for image in sorted(directory.glob("*.png")):
            shutil.copy2(image, Path(target) / image.name)


@pytest.fixture
def shoot(browser: Any, screenshot_dir: Path) -> Callable[[str], Path]:
    """``shoot("tools")`` saves the page as ``console-tools.png`` and returns its path."""

    def take(name: str) -> Path:
        path = screenshot_dir / f"console-{name}.png"
        browser.execute_script("window.scrollTo(0, 0)")
        assert browser.save_screenshot(str(path)), f"no screenshot of {name}"
        return path

    return take


@pytest.fixture
def harness(tmp_path: Path, browser: Any) -> Iterator[ConsoleHarness]:
    """A console harness; every console started is stopped at teardown, and the page must
    have logged no errors (a script error, a CSP violation, a missing file)."""
    found = ConsoleHarness(tmp_path, browser)
    severe_console_messages(browser)  # forget the previous test's
    try:
        yield found
        # 422 is how a form with a problem comes back (shown beside the field): not an error of the page
        problems = [m for m in severe_console_messages(browser) if "status of 422" not in m]
        assert found.refusals_expected or problems == [], f"the page logged errors: {problems}"
    finally:
        found.stop()
