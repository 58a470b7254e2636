"""``tooldeck ui`` as a person runs it: a subprocess that prints its URL and serves the console.

The command reaches ``tooldeck`` through the ``tooldeck.commands`` entry point. The tests put
a distribution declaring it on ``PYTHONPATH`` (as ``pip install -e .`` does from setup.cfg), so
they work whether or not the tooldeck in this environment was installed before the command
existed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
START_TIMEOUT = 120.0


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """A private home, data directory and project, and the entry point of ``tooldeck ui``."""
    info = tmp_path / "meta" / "tooldeck_console_entry-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tooldeck-console-entry\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[tooldeck.commands]\nui = orchestrator.ui.command:register\n")
    (tmp_path / "project").mkdir()
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("TOOLDECK_", "XDG_"))}
    return {
        **keep,
        "HOME": str(tmp_path / "home"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "TOOLDECK_DATA_DIR": str(tmp_path / "data"),
        "PYTHONPATH": os.pathsep.join([str(ROOT), str(tmp_path / "meta")]),
    }


def _tooldeck(env: dict[str, str], *args: str, cwd: Path) -> list[str]:
    return [sys.executable, "-m", "tools.cli", "-C", str(cwd), *args]


def test_a_host_other_than_loopback_needs_a_token(env: dict[str, str], tmp_path: Path) -> None:
    result = subprocess.run(
        _tooldeck(env, "ui", "--host", "0.0.0.0", cwd=tmp_path / "project"),
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert "--host 0.0.0.0 would let anyone who can reach that address run your tools" in result.stderr
    assert "pass --token TOKEN" in result.stderr
    assert result.stdout == ""


def test_without_the_ui_extra_the_command_says_which_extra_to_install(env: dict[str, str], tmp_path: Path) -> None:
    """A plain ``pip install -e .`` has typer but no FastAPI: ``tooldeck ui`` is listed and explains."""
    from tests.integration.orchestrator.test_core_install import core_only_env, hidden_modules

    hidden = core_only_env(tmp_path, hidden_modules())  # its PYTHONPATH hides the extras
    core = {**env, "PYTHONPATH": os.pathsep.join([hidden["PYTHONPATH"], env["PYTHONPATH"]])}
    result = subprocess.run(
        [sys.executable, "-m", "tools.cli", "-C", str(tmp_path / "project"), "ui", "--port", "0"],
        env=core, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert result.returncode == 2, result.stdout + result.stderr
    assert "tooldeck ui needs the ui extra: pip install -e '.[ui]'" in result.stderr


def test_a_short_token_is_refused(env: dict[str, str], tmp_path: Path) -> None:
    result = subprocess.run(
        _tooldeck(env, "ui", "--port", "0", "--token", "hunter2", cwd=tmp_path / "project"),
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 2
    assert "at least 16 characters" in result.stderr


@pytest.fixture
def served(env: dict[str, str], tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """``tooldeck ui --port 0`` running; yields the URL it printed."""
    process = subprocess.Popen(
        _tooldeck(env, "ui", "--port", "0", "--no-builtins", cwd=tmp_path / "project"),
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        first = process.stdout.readline()  # blocks until the console printed its URL (or exited)
        said = first + (process.stderr.read() if process.stderr and not first else "")
        assert first.startswith("tooldeck console: http://127.0.0.1:"), said
        yield first.split(": ", 1)[1].strip(), process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def test_the_console_prints_its_url_and_serves_only_with_the_token(served: tuple[str, subprocess.Popen[str]]) -> None:
    url, process = served
    base, token = url.split("/?token=")
    assert len(token) >= 40
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(base + "/tools", timeout=START_TIMEOUT)
    assert refused.value.code == 401
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
    with opener.open(url, timeout=START_TIMEOUT) as page:  # the cookie, then the Tools page
        assert page.status == 200
        assert "<h1>Tools" in page.read().decode()
    with opener.open(base + "/settings", timeout=START_TIMEOUT) as page:
        assert "Freedom level" in page.read().decode()
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=30) == 0
