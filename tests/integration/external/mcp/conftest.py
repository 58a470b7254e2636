"""Fixtures for the MCP integration tests: server scripts, process checks, free ports."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

SERVERS = Path(__file__).parent / "servers"
REPO_ROOT = Path(__file__).resolve().parents[4]


def process_gone(pid: int) -> bool:
    """True when ``pid`` has left the process table.

    A zombie (state ``Z``) counts as *not* gone: that is exactly what must not be left.
    """
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return True
    state = stat.rsplit(")", 1)[1].split()[0]
    return state == "X"


def wait_gone(pid: int, within: float = 10.0) -> bool:
    """Poll until ``pid`` has left the process table (bounded; not a timing assertion)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if process_gone(pid):
            return True
        time.sleep(0.02)
    return process_gone(pid)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_listening(port: int, proc: subprocess.Popen[bytes], within: float = 30.0) -> None:
    """Wait until something accepts connections on ``port`` (or the process died)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode} before listening")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listening on port {port}")


def server_env() -> dict[str, str]:
    """Environment for our own server processes: the repo and the test servers importable."""
    return {"PYTHONPATH": os.pathsep.join([str(REPO_ROOT), str(SERVERS)])}


@pytest.fixture(scope="session")
def servers_dir() -> Path:
    """Directory of the test server scripts and the registry factory."""
    return SERVERS


@pytest.fixture(scope="session")
def gone() -> Callable[[int], bool]:
    """``gone(pid)``: wait (bounded) until ``pid`` has left the process table."""
    return wait_gone


@pytest.fixture(scope="session")
def sdk_server_cmd() -> list[str]:
    """argv of the SDK-built test server (stdio)."""
    return [sys.executable, str(SERVERS / "sdk_server.py")]


@pytest.fixture(scope="session")
def mcp_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Environment for our own server processes (repo and test servers importable), with a
    configuration directory of their own: the user's approvals file is never read."""
    return {**server_env(), "XDG_CONFIG_HOME": str(tmp_path_factory.mktemp("mcp-config"))}


@pytest.fixture
def start_http_server() -> Iterator[Callable[[list[str]], str]]:
    """``start(argv_without_port)`` runs an HTTP MCP server on a free port; returns its URL.

    ``--port N`` is appended to the argv; every process is killed at teardown.
    """
    started: list[subprocess.Popen[bytes]] = []

    def start(argv: list[str]) -> str:
        port = free_port()
        proc = subprocess.Popen(
            [*argv, "--port", str(port)],
            cwd=SERVERS,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **server_env()},
        )
        started.append(proc)
        wait_listening(port, proc)
        return f"http://127.0.0.1:{port}/mcp"

    yield start
    for proc in started:
        proc.kill()
        proc.wait(10)
