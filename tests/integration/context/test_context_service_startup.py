"""``python -m shared.context_service`` at startup: quiet, clear, and strict about its config.

One summary line per source (never one per bank transaction), a port already in use
reported first and plainly (exit code 2, no traceback), and configuration errors such as
an unknown time zone refused before serving, not at the first request. Real subprocesses.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tools._procgroup import kill_group, wait_group_gone

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples" / "context"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def write_config(tmp_path: Path, **user: Any) -> Path:
    """The example's local files only (no network): calendar, CSV and OFX statements."""
    adapters = [
        {"category": "calendar", "platform": "ics", "path": str(EXAMPLES / "calendar.ics")},
        {
            "category": "finance",
            "platform": "csv",
            "path": str(EXAMPLES / "statement.csv"),
            "columns": {"date": "Date", "description": "Description", "amount": "Amount"},
        },
        {"category": "finance", "platform": "ofx", "path": str(EXAMPLES / "statement.ofx")},
    ]
    config = {"users": {"default": {"timezone": "Europe/Lisbon", "adapters": adapters, **user}}}
    path = tmp_path / "context.json"
    path.write_text(json.dumps(config))
    return path


def run_service(config: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run the service to completion (it must exit by itself: these are startup failures)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "shared.context_service", "--config", str(config), *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout, check=False, cwd=ROOT)


@pytest.fixture
def busy_port() -> Iterator[int]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    try:
        yield sock.getsockname()[1]
    finally:
        sock.close()


def test_port_in_use_is_one_clear_error(tmp_path: Path, busy_port: int) -> None:
    result = run_service(write_config(tmp_path), "--port", str(busy_port))
    assert result.returncode == 2
    assert f"port {busy_port} on 127.0.0.1 is already in use" in result.stderr
    assert f"--port {busy_port + 1}" in result.stderr  # the fix
    assert "Traceback" not in result.stderr
    assert "STMTTRN" not in result.stderr  # not buried under the sources being read
    assert result.stderr.strip().startswith("error:")


@pytest.mark.parametrize(
    ("user", "parts"),
    [
        ({"timezone": "Mars/Olympus_Mons"}, ["unknown time zone 'Mars/Olympus_Mons'", "Europe/Lisbon"]),
        ({"timezone": "../../etc/passwd"}, ["unknown time zone", "users.default.timezone"]),
    ],
)
def test_a_bad_time_zone_is_refused_at_startup(tmp_path: Path, user: dict[str, Any], parts: list[str]) -> None:
    result = run_service(write_config(tmp_path, **user), "--port", str(free_port()), timeout=30)
    assert result.returncode == 2
    for part in parts:
        assert part in result.stderr
    assert "Traceback" not in result.stderr


def test_an_unknown_adapter_or_bad_options_are_refused_at_startup(tmp_path: Path) -> None:
    path = write_config(tmp_path)
    config = json.loads(path.read_text())
    config["users"]["default"]["adapters"] += [
        {"category": "calendar", "platform": "outlook", "path": "x"},
        {"category": "finance", "platform": "csv", "path": "x.csv", "colums": {}},
    ]
    path.write_text(json.dumps(config))
    result = run_service(path, "--port", str(free_port()), timeout=30)
    assert result.returncode == 2
    assert "users.default.adapters[3]: no 'outlook' adapter for calendar; available: ics" in result.stderr
    assert "users.default.adapters[4]" in result.stderr
    assert "colums" in result.stderr
    assert "Traceback" not in result.stderr


def test_startup_logs_one_summary_line_per_source(tmp_path: Path) -> None:
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "shared.context_service", "--config", str(write_config(tmp_path))]
    process = subprocess.Popen(
        [*command, "--port", str(port)],
        env=env,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    lines: list[str] = []
    try:
        assert process.stderr is not None
        deadline = time.monotonic() + 60
        while sum("source " in line for line in lines) < 3 and time.monotonic() < deadline:
            line = process.stderr.readline()
            if not line:
                break
            lines.append(line.rstrip())
    finally:
        kill_group(process.pid)
        wait_group_gone(process.pid, 10)
        process.wait(10)
        if process.stderr:
            process.stderr.close()
    sources = [line for line in lines if "source " in line]
    assert len(sources) == 3, lines
    assert any("calendar/ics" in s and "calendar.ics" in s and "events" in s for s in sources), sources
    assert any("finance/csv" in s and "statement.csv" in s and "transactions" in s for s in sources), sources
    assert any("finance/ofx" in s and "statement.ofx" in s and "transactions" in s for s in sources), sources
    assert not [line for line in lines if "ofxtools" in line or "STMTTRN" in line]
    assert any(f"http://127.0.0.1:{port}" in line for line in lines), lines
