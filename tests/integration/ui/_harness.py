"""A console over files in a temporary directory, served for real and signed into by the browser."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from orchestrator.stored_settings import SettingsFile
from orchestrator.ui import ConsoleSources, SettingsSources
from tests.integration.ui._browser import wait_for
from tests.integration.ui._server import RunningConsole, serve
from tools import LocalToolRegistry
from tools.approvals import ApprovalPolicy, ApprovalsStore


class ConsoleHarness:
    """Builds the sources of a console over files in a temporary directory, and serves it."""

    def __init__(self, root: Path, browser: Any) -> None:
        self.root = root
        self.browser = browser
        self.env = {"XDG_CONFIG_HOME": str(root / "config"), "HOME": str(root / "home")}
        self.approvals = ApprovalsStore.from_env(self.env)
        self.running: list[RunningConsole] = []
        #: The test makes the console refuse requests (the browser logs those as errors).
        self.refusals_expected = False
        #: Closed after the consoles stop (runners).
        self.closers: list[Callable[[], None]] = []

    def registry(self) -> LocalToolRegistry:
        """A registry with the approval policy of these files (stored level, else medium)."""
        return LocalToolRegistry(policy=ApprovalPolicy(None, self.approvals))

    def settings(self) -> SettingsSources:
        """The Settings page's files."""
        return SettingsSources(file=SettingsFile.from_env(self.env), approvals=self.approvals, env=self.env)

    def start(self, sources: ConsoleSources) -> RunningConsole:
        """Serve ``sources`` and sign the browser in (the URL with the token, as printed)."""
        console = serve(sources)
        self.running.append(console)
        self.browser.get(console.login_url)
        wait_for(self.browser, lambda d: d.current_url.startswith(console.url) and "token=" not in d.current_url)
        return console

    def open(self, console: RunningConsole, path: str) -> None:
        """Open a page of ``console`` and wait until it is loaded."""
        self.browser.get(console.url + path)
        wait_for(self.browser, lambda d: d.execute_script("return document.readyState") == "complete")

    def stop(self) -> None:
        self.browser.get("about:blank")  # close the pages' event streams first
        for console in self.running:
            console.stop()
        while self.closers:
            self.closers.pop()()
