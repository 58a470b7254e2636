"""The context service serving a module from its sandboxed worker, started the way an operator
starts it: ``python -m tools.builtin.modules.context_service`` (``shared`` cannot start the
workers itself, so ``python -m shared.context_service --modules-dir`` is refused). Real
subprocesses, a real local API that the operator allows with ``--module-allow-host``.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.integration.modules._worker_driver import install_signed

ROOT = Path(__file__).resolve().parents[3]
API_KEY = "runs-key-5f4e3d2c1b"
RUNS = """
from shared.adapters.base import AdapterError, BaseAdapter


class Adapter(BaseAdapter[dict]):
    def fetch_raw(self, config):
        answer = self.http_session().get(
            config["base_url"], headers={"X-API-Key": config["credentials"]["api_key"]}, timeout=10
        )
        if answer.status_code != 200:
            raise AdapterError(f"the API answered HTTP {answer.status_code}")
        return answer.json()["runs"]

    def transform(self, raw):
        return [{"km": float(run["km"])} for run in raw]
"""


class _Api(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        ok = self.headers.get("X-API-Key") == API_KEY
        body = json.dumps({"runs": [{"km": 5.2}, {"km": 7.5}]} if ok else {"error": "key"}).encode()
        self.send_response(200 if ok else 401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def api() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Api)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/api/runs"
    server.shutdown()
    server.server_close()
    thread.join(5)


@pytest.fixture
def private_tmp() -> Iterator[Path]:
    """A temporary folder of the service's own (its TMPDIR), reachable by the sandbox's uid."""
    folder = Path(tempfile.mkdtemp(prefix="tooldeck-ctx-"))
    folder.chmod(0o711)
    yield folder
    import shutil

    shutil.rmtree(folder, ignore_errors=True)


def _config(tmp_path: Path) -> Path:
    path = tmp_path / "context.json"
    path.write_text(json.dumps({"users": {"default": {"timezone": "UTC"}}}))
    return path


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def _processes_mentioning(marker: str) -> list[str]:
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry.name}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = Path(f"/proc/{entry.name}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if marker in cmdline and state != b"Z":
            found.append(cmdline[:200])
    return found


def test_the_shared_entry_point_refuses_to_run_modules(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "shared.context_service", "--config", str(_config(tmp_path))]
    command += ["--modules-dir", str(tmp_path / "modules")]
    done = subprocess.run(
        command, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 2
    assert "modules run only in sandboxed worker processes" in done.stderr
    assert "python -m tools.builtin.modules.context_service" in done.stderr


def test_the_tool_side_entry_point_serves_a_module_from_its_worker(tmp_path: Path, api: str, private_tmp: Path) -> None:
    data = tmp_path / "data"
    install_signed(str(data), api, API_KEY, source=RUNS, module_id="runs")
    port = _free_port()
    command = [sys.executable, "-m", "tools.builtin.modules.context_service", "--config", str(_config(tmp_path))]
    command += ["--port", str(port), "--modules-dir", str(data / "modules"), "--module-allow-host", "127.0.0.1"]
    command += ["--no-warm-up", "--log-level", "warning"]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(private_tmp), "OPENAI_API_KEY": "sk-host"}
    service = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        body = _get(f"http://127.0.0.1:{port}/context?categories=fitness", service)
        fitness = body["categories"]["fitness"]
        assert (fitness["status"], fitness["platforms"], fitness["data"]) == (
            "ok",
            ["runs"],
            [{"km": 5.2}, {"km": 7.5}],
        )
        assert _processes_mentioning(str(private_tmp)), "the module's worker runs beside the service"
    finally:
        service.send_signal(signal.SIGTERM)
        _, stderr = service.communicate(timeout=60)
    # uvicorn shuts down gracefully, then re-raises the SIGTERM it caught
    assert service.returncode in (0, -signal.SIGTERM), stderr.decode(errors="replace")[-2000:]
    deadline = time.monotonic() + 10
    while _processes_mentioning(str(private_tmp)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _processes_mentioning(str(private_tmp)) == []  # stopping the service stopped its workers


def _get(url: str, service: subprocess.Popen[bytes]) -> dict[str, Any]:
    deadline = time.monotonic() + 120
    while True:
        try:
            with urllib.request.urlopen(url, timeout=30) as answer:
                loaded: dict[str, Any] = json.loads(answer.read())
                return loaded
        except OSError:
            if service.poll() is not None or time.monotonic() > deadline:
                raise
            time.sleep(0.05)
