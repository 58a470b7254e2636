"""The boundary around an installed module, as root and as an ordinary user, per launcher.

A module installed with a genuine signature (so no static scan stands in the way) runs in
its sandboxed worker. From inside it tries what the module that escaped the old scan did
(issue 20: it read ``OPENAI_API_KEY``, the signing key and the stored credentials from the
orchestrator's own process), and more: the host's config files, a UNIX socket and a TCP
port on the host, a raw socket, HTTP to anything but its declared ``api_url``. Then a hung
call times out and a killed worker is restarted.

The battery runs in ``_worker_driver.py``, started as root or dropped to uid 1000 (see
``tests/integration/sandbox/privileges.py``); the test checks its report.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sysconfig
import tempfile
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

import tools
from tests.integration.sandbox import privileges

DRIVER = Path(__file__).with_name("_worker_driver.py")
BWRAP = shutil.which("bwrap", path=privileges.SEARCH_PATH)
API_KEY = "runs-key-5f4e3d2c1b"
HOST_SECRET = "sk-host-openai-7e6d5c4b3a"


class _Api(BaseHTTPRequestHandler):
    server: _Server

    def do_GET(self) -> None:
        self.server.seen.append((self.path, self.headers.get("X-API-Key")))
        body = json.dumps({"ok": self.headers.get("X-API-Key") == API_KEY}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    seen: list[tuple[str, str | None]]


def _serve() -> tuple[_Server, threading.Thread]:
    server = _Server(("127.0.0.1", 0), _Api)
    server.seen = []
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    return server, thread


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[_Server, _Server]]:
    api, other = _serve(), _serve()
    yield api[0], other[0]
    for server, thread in (api, other):
        server.shutdown()
        server.server_close()
        thread.join(5)


@pytest.fixture(scope="module")
def tree() -> Iterator[Path]:
    """World-readable copies of ``tools``, ``shared`` and the driver (the checkout, and
    pytest's temporary folders, may be root's only)."""
    base = Path(tempfile.mkdtemp(prefix="tooldeck-worker-tree-"))
    base.chmod(0o711)
    try:
        root = privileges.readable_tree(base)
        shutil.copy(DRIVER, root / DRIVER.name)
        (root / DRIVER.name).chmod(0o644)
        assert Path(tools.__file__).parent.name == "tools"
        yield root
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def host_dir(tmp_path: Path) -> Iterator[Path]:
    """Where the host's files live. As root: under /run, beside the host's sockets, which
    the sandbox's allow-list of system directories leaves out of the worker's view."""
    base = Path(tempfile.mkdtemp(prefix="tooldeck-boundary-", dir="/run" if privileges.ROOT else tmp_path))
    base.chmod(0o755)
    try:
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def listeners(host_dir: Path) -> Iterator[dict[str, Any]]:
    """A UNIX socket anyone may connect to, and a TCP port, both on the host."""
    public = host_dir / "public"
    public.mkdir(mode=0o755)
    (public / "visible.txt").write_text("visible to every user")
    (public / "visible.txt").chmod(0o644)
    unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    unix.bind(str(public / "sock"))
    (public / "sock").chmod(0o777)
    unix.listen(8)
    tcp = socket.create_server(("127.0.0.1", 0))
    accepting = True

    def accept(server: socket.socket) -> None:
        while accepting:
            try:
                connection, _ = server.accept()
            except OSError:
                return
            connection.sendall(b"host")
            connection.close()

    threads = [threading.Thread(target=accept, args=(s,), daemon=True) for s in (unix, tcp)]
    for thread in threads:
        thread.start()
    yield {
        "unix_socket": str(public / "sock"),
        "tcp_port": tcp.getsockname()[1],
        "visible": str(public / "visible.txt"),
    }
    accepting = False
    for server in (unix, tcp):
        server.close()


def _run(mode: str, job: dict[str, Any], tree: Path) -> dict[str, Any]:
    python = privileges.public_python()
    if python is None:
        pytest.skip("no Python interpreter that an unprivileged user may execute")
    argv = [*privileges.drop_argv(mode), python, "-I", str(tree / DRIVER.name)]
    env = {"PATH": privileges.SEARCH_PATH, "LANG": "C.UTF-8", "OPENAI_API_KEY": HOST_SECRET}
    proc = subprocess.run(
        argv, input=json.dumps(job).encode(), capture_output=True, timeout=300, check=False, cwd="/", env=env
    )
    if proc.returncode != 0:
        pytest.fail(f"driver failed ({proc.returncode}): {proc.stderr.decode(errors='replace')[-3000:]}")
    answer: dict[str, Any] = json.loads(proc.stdout)
    return answer


@pytest.mark.parametrize(
    "launcher",
    [
        pytest.param("bwrap", marks=pytest.mark.skipif(BWRAP is None, reason="bubblewrap is not installed")),
        "namespaces",
    ],
)
@pytest.mark.parametrize("mode", privileges.mode_params())
def test_an_installed_module_cannot_reach_the_host(
    mode: str,
    launcher: str,
    tree: Path,
    host_dir: Path,
    listeners: dict[str, Any],
    servers: tuple[_Server, _Server],
) -> None:
    problem = privileges.userns_problem(mode, launcher)
    if problem is not None:
        pytest.skip(problem)
    uid = privileges.app_uid(mode)
    data_dir = privileges.private_dir(host_dir / "data", uid, 0o755)
    api_server, other_server = servers
    port = api_server.server_address[1]
    api = f"http://127.0.0.1:{port}/api/runs"
    outside = [
        f"http://127.0.0.1:{other_server.server_address[1]}/api/runs",  # another port
        f"http://localhost:{port}/api/runs",  # another host name
        f"http://127.0.0.1:{port}/api/runsx",  # another path prefix
        f"http://127.0.0.1:{port}/admin",
        f"https://127.0.0.1:{port}/api/runs",  # another scheme
    ]
    site = [sysconfig.get_paths()["purelib"]]
    job = {
        "path": [str(tree), *site],
        "data_dir": str(data_dir),
        "api": api,
        "api_key": API_KEY,
        "launcher": launcher,
        "outside": outside,
        "unix_socket": listeners["unix_socket"],
        "tcp_port": listeners["tcp_port"],
        "files": {"visible": listeners["visible"], "host_shadow": "/etc/shadow", "system": "/etc/passwd"},
    }
    seen_before = len(api_server.seen)
    report = _run(mode, job, tree)

    assert report["status"]["loaded"] is True, report["status"]
    assert report["probe"]["success"] is True, report["probe"]
    (probe,) = report["probe"]["data"]
    host_pid = report["host_pid"]

    # another process, another uid (as root: nobody), no supplementary groups
    assert probe["pid"] != host_pid and report["worker"]["host_pid"] != host_pid
    assert probe["uid"] == (privileges.NOBODY if mode == "root" else uid)
    assert probe["groups"] == []
    # no host secret in its environment, only the sandbox's minimal one
    assert HOST_SECRET not in json.dumps(probe["environ"])
    assert set(probe["environ"]) <= {"PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "PWD"}
    # it saw a placeholder, not the API key; the host put the key into the request
    assert probe["credential_seen"] == "tooldeck-credential-"
    assert API_KEY not in json.dumps(report["probe"])
    assert probe["declared"] == "ok: (200, {'ok': True})"
    assert api_server.seen[seen_before:] == [("/api/runs", API_KEY)]
    # every other host, port, path prefix and scheme is refused before anything is sent
    assert probe["outside"] == dict.fromkeys(outside, "RefusedByHost")
    assert other_server.seen == []
    # the host's files: the data directory (keys, credentials, a careless config file) is
    # not in the view, nor is a world-readable file outside the system directories (the
    # allow-list mounts); a world-readable system file shows the worker reads what it sees
    files = probe["files"]
    assert files["config"] == files["module-signing.key"] == files["module-credentials.key"] == "FileNotFoundError"
    assert files["host_shadow"] in ("PermissionError", "FileNotFoundError")
    assert files["visible"] == "FileNotFoundError"
    assert files["system"].startswith("ok: root:")
    # no socket of any family: not the host's UNIX socket, not its TCP port
    assert probe["unix_socket"] == probe["tcp_port"] == probe["inet_socket"] == "PermissionError"

    # a hung call is stopped at its time limit, and the next call restarts the worker
    assert report["hang"] == {
        "kind": "timeout",
        "message": "the module probe did not answer within 2 s; its worker was stopped",
    }
    assert report["after_hang"]["success"] is True
    # a killed worker is restarted on the next call
    assert report["after_kill"]["success"] is True
    assert len(set(report["pids"])) == 3 and report["restarts"] == 2


@pytest.mark.parametrize(
    "launcher",
    [
        pytest.param("bwrap", marks=pytest.mark.skipif(BWRAP is None, reason="bubblewrap is not installed")),
        "namespaces",
    ],
)
@pytest.mark.parametrize("mode", privileges.mode_params())
def test_a_worker_outlives_the_thread_that_started_it(mode: str, launcher: str, tree: Path, host_dir: Path) -> None:
    problem = privileges.userns_problem(mode, launcher)
    if problem is not None:
        pytest.skip(problem)
    data_dir = privileges.private_dir(host_dir / "data", privileges.app_uid(mode), 0o755)
    site = [sysconfig.get_paths()["purelib"]]
    job = {"battery": "threads", "path": [str(tree), *site], "data_dir": str(data_dir), "launcher": launcher}
    report = _run(mode, job, tree)

    # the hazard is real: a process started straight from a thread that ends dies with it
    assert report["direct_died"] is True
    # a worker asked for by such a thread is started from the launcher's own thread: once
    # the asking thread is gone, the same worker answers, its launcher alive, no kill pending
    alive = {"alive": True, "sigkill_pending": False}
    assert report["started"] == {"answer": 1, "same_worker": True, "launcher": alive}
    # the same when a call from such a thread restarts a worker that died
    assert report["restarted"] == {"answer": 1, "new_worker": True, "then": 1, "same_worker": True, "launcher": alive}
