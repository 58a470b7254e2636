"""No side doors: host UNIX sockets, supplementary groups, and memory across processes.

Each (mode, launcher) pair runs one battery in a child interpreter (``_driver.py``; the
application runs as root, or as uid 1000 dropped with ``setpriv``), with a supplementary
group that alone may read a file in a system directory the sandbox shows. On the host,
real UNIX socket servers listen where services keep theirs (``/run``, ``/var/run``,
``/tmp``, the user's runtime dir ``/run/user/<uid>``, an abstract name, and one inside a
system directory the sandbox shows): none may be reached, and each server checks that
nothing arrived. A program that forks children, each allocating a bit under the run's
memory, must not hold more than the run's memory in total.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import socket
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="preparing the host side needs root (CI runs as root)")

#: A group no account has: only the application's supplementary group list grants it.
SECRET_GID = 4242
BUDGET_MB = 512
MAX_PROCESSES = 8
VISIBLE_PARENT = Path("/usr/local/share") if Path("/usr/local/share").is_dir() else Path("/etc")

CONNECT = """
import errno, json, os, socket
targets = {targets!r}
out = {{}}
for name, address in targets.items():
    out[name + "_exists"] = not address.startswith("\\0") and os.path.exists(address)
    try:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    except OSError as exc:
        out[name] = "socket " + errno.errorcode.get(exc.errno, "?")
        continue
    try:
        sock.settimeout(2)
        sock.connect(address)
        out[name] = "connected"
    except OSError as exc:
        out[name] = errno.errorcode.get(exc.errno, "?")
    finally:
        sock.close()
for kind in ("DGRAM", "RAW"):
    for maker in ("socket", "socketpair"):
        try:
            made = getattr(socket, maker)(socket.AF_UNIX, getattr(socket, "SOCK_" + kind))
            for sock in made if isinstance(made, tuple) else [made]:
                sock.sendto(b"x", targets["dgram"]) if maker == "socket" else None
                sock.close()
            out[maker + "_" + kind] = "ok"
        except OSError as exc:
            out[maker + "_" + kind] = errno.errorcode.get(exc.errno, "?")
print(json.dumps(out, sort_keys=True))
"""

SOCKETPAIR = """
import array, multiprocessing, socket
a, b = socket.socketpair()
a.sendall(b"ping")
print(b.recv(4).decode())
socket.send_fds(a, [b"fd"], [0])
message, fds, _, _ = socket.recv_fds(b, 16, 1)
print(message.decode(), len(fds))
reader, writer = multiprocessing.Pipe()
writer.send({"answer": 42})
print(reader.recv())
"""

UNIX_WITH_NETWORK = """
import errno, socket
for kind in ("SOCK_STREAM", "SOCK_DGRAM"):
    try:
        sock = socket.socket(socket.AF_UNIX, getattr(socket, kind))
        sock.settimeout(2)
        sock.connect({address!r})
        print(kind, "connected")
    except OSError as exc:
        print(kind, errno.errorcode.get(exc.errno, "?"))
a, b = socket.socketpair()
a.sendall(b"ok")
print(b.recv(2).decode())
"""

READ_GROUP_FILE = """
import os
try:
    print(open({path!r}).read())
except OSError as exc:
    print(type(exc).__name__)
"""

FAN_OUT = """
import json, os, resource, select
budget = {budget} * 1024 * 1024
size = budget - 64 * 1024 * 1024  # a bit under the run's memory
release_r, release_w = os.pipe()
report_r, report_w = os.pipe()
children = 0
for _ in range(12):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        os.close(release_w)
        try:
            block = bytearray(size)
            for offset in range(0, size, 4096):
                block[offset] = 1  # really use it
            os.write(report_w, b"y")
        except MemoryError:
            os.write(report_w, b"n")
        os.read(release_r, 1)  # hold it until every child has tried
        os._exit(0)
    children += 1
os.close(report_w)
answers = b""
while len(answers) < children:
    ready, _, _ = select.select([report_r], [], [], 20)
    chunk = os.read(report_r, 64) if ready else b""
    if not chunk:
        break  # a child was killed (out of memory) before it answered
    answers += chunk
held = answers.count(b"y")
os.close(release_w)
limit = resource.getrlimit(resource.RLIMIT_AS)[0]
print(json.dumps({{"children": children, "held": held, "size_mb": size >> 20, "process_limit_mb": limit >> 20}}))
"""


@dataclass
class SocketServer:
    """A real UNIX socket server on the host; ``arrived`` lists what reached it."""

    address: str
    kind: int = socket.SOCK_STREAM
    arrived: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, self.kind)
        self.sock.bind(self.address)
        if not self.address.startswith("\0"):
            os.chmod(self.address, 0o666)  # anyone may connect: only the sandbox stops it
        if self.kind == socket.SOCK_STREAM:
            self.sock.listen(4)
        self.sock.settimeout(0.05)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                if self.kind == socket.SOCK_STREAM:
                    conn, _ = self.sock.accept()
                    conn.close()
                    self.arrived.append("connection")
                else:
                    self.arrived.append(self.sock.recv(64).decode(errors="replace"))
            except OSError:
                continue

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.sock.close()
        if not self.address.startswith("\0"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.address)


@dataclass
class Battery:
    """One battery's driver answer and the host servers after it."""

    mode: str
    launcher: str
    answer: dict[str, Any]
    servers: dict[str, SocketServer]
    visible_dir: Path

    def result(self, name: str) -> dict[str, Any]:
        found: dict[str, Any] = self.answer["results"][name]
        assert "error" not in found, found
        return found

    def stdout(self, name: str) -> str:
        out: str = self.result(name)["stdout"]
        return out


def _servers(stack: contextlib.ExitStack, app_uid: int, marker: str, visible: Path) -> dict[str, SocketServer]:
    runtime = Path(f"/run/user/{app_uid}")
    if not runtime.exists():
        runtime.mkdir(mode=0o700, parents=True)
        os.chown(runtime, app_uid, app_uid)
        stack.callback(shutil.rmtree, runtime, ignore_errors=True)
    addresses = {
        "run": f"/run/{marker}.sock",
        "var_run": f"/run/{marker}-var.sock",
        "tmp": f"/tmp/{marker}.sock",
        "user_runtime": str(runtime / f"{marker}.sock"),
        "abstract": f"\0{marker}",
        "visible": str(visible / "service.sock"),
    }
    servers = {name: SocketServer(address) for name, address in addresses.items()}
    servers["dgram"] = SocketServer(str(visible / "log.sock"), socket.SOCK_DGRAM)
    for server in servers.values():
        stack.callback(server.close)
    return servers


def _targets(servers: dict[str, SocketServer], marker: str) -> dict[str, str]:
    targets = {name: server.address for name, server in servers.items()}
    targets["var_run"] = f"/var/run/{marker}-var.sock"  # the same server, by its other path
    return targets


@pytest.fixture(scope="module")
def battery(app_mode: str, launcher_kind: str, priv: ModuleType) -> Iterator[Battery]:
    problem = priv.userns_problem(app_mode, launcher_kind)
    if problem is not None:
        pytest.skip(problem)
    marker = f"tooldeck-test-{secrets.token_hex(4)}"
    app_uid = priv.app_uid(app_mode)
    with contextlib.ExitStack() as stack:
        root = Path(tempfile.mkdtemp(prefix="tooldeck-sbx-test-"))
        stack.callback(shutil.rmtree, root, ignore_errors=True)
        root.chmod(0o711)
        visible = VISIBLE_PARENT / marker
        visible.mkdir(mode=0o755)
        stack.callback(shutil.rmtree, visible, ignore_errors=True)
        group_file = visible / "group-secret.txt"
        group_file.write_text("only group 4242 may read this")
        os.chown(group_file, 0, SECRET_GID)
        group_file.chmod(0o640)
        servers = _servers(stack, app_uid, marker, visible)
        temp_root = priv.private_dir(root / "work", app_uid, 0o700)
        options: dict[str, Any] = {"temp_root": str(temp_root), "launcher": launcher_kind}
        job: dict[str, Any] = {
            "limits": {"timeout_seconds": 20, "memory_mb": BUDGET_MB, "max_processes": MAX_PROCESSES},
            "sandbox": options,
            "cases": [
                {"name": "connect", "code": CONNECT.format(targets=_targets(servers, marker))},
                {"name": "socketpair", "code": SOCKETPAIR},
                {"name": "group_file", "code": READ_GROUP_FILE.format(path=str(group_file))},
                {"name": "groups", "code": "import os\nprint(os.getgroups())"},
                {"name": "fan_out", "code": FAN_OUT.format(budget=BUDGET_MB)},
            ],
        }
        tree = priv.readable_tree(root)
        answer = priv.run_driver(app_mode, job, tree=tree, groups=(SECRET_GID,))
        # Sharing the host's network on purpose: connect must work for TCP, so no UNIX
        # socket may be made at all (the host's abstract sockets share that namespace).
        shared = {**job, "sandbox": {**options, "isolate_network": False}}
        shared["cases"] = [{"name": "unix", "code": UNIX_WITH_NETWORK.format(address=f"\0{marker}")}]
        answer["results"]["shared_network"] = priv.run_driver(app_mode, shared, tree=tree)["results"]["unix"]
        yield Battery(app_mode, launcher_kind, answer, servers, visible)


def test_every_option_is_understood(battery: Battery) -> None:
    assert battery.answer["dropped"] == []


def test_no_host_unix_socket_is_visible_outside_the_system_trees(battery: Battery) -> None:
    seen = json.loads(battery.stdout("connect"))
    for name in ("run", "var_run", "tmp", "user_runtime"):
        assert seen[f"{name}_exists"] is False, name
    assert seen["visible_exists"] is True  # a socket in a shown directory: the filter stops it


def test_no_host_unix_socket_can_be_connected_to(battery: Battery) -> None:
    seen = json.loads(battery.stdout("connect"))
    for name in ("run", "var_run", "tmp", "user_runtime", "abstract", "visible"):
        assert seen[name] == "EPERM", (name, seen)
    for name, server in battery.servers.items():
        assert server.arrived == [], name


def test_unix_datagram_sockets_are_refused_so_nothing_is_sent_to_a_path(battery: Battery) -> None:
    seen = json.loads(battery.stdout("connect"))
    for kind in ("DGRAM", "RAW"):
        assert (seen[f"socket_{kind}"], seen[f"socketpair_{kind}"]) == ("EPERM", "EPERM"), kind
    assert battery.servers["dgram"].arrived == []


def test_sharing_the_network_makes_unix_sockets_unavailable(battery: Battery) -> None:
    shared = battery.result("shared_network")
    assert shared["network_isolated"] is False
    assert shared["stdout"] == "SOCK_STREAM EPERM\nSOCK_DGRAM EPERM\nok\n"
    assert battery.servers["abstract"].arrived == []


def test_socketpair_pipes_and_fd_passing_keep_working(battery: Battery) -> None:
    assert battery.stdout("socketpair") == "ping\nfd 1\n{'answer': 42}\n"


def test_a_file_only_a_supplementary_group_may_read_is_unreadable(battery: Battery) -> None:
    assert battery.stdout("group_file") == "PermissionError\n"


def test_as_root_the_program_has_no_supplementary_group(battery: Battery) -> None:
    groups = battery.stdout("groups")
    if battery.mode == "root":
        assert groups == "[]\n"
    else:  # unmapped in the user namespace (setgroups is refused there), masked instead
        assert str(SECRET_GID) not in groups


def test_children_together_cannot_hold_more_than_the_runs_memory(battery: Battery) -> None:
    fan_out = battery.result("fan_out")
    report = json.loads(fan_out["stdout"])
    isolation = fan_out["isolation"]
    assert report["children"] >= 2, report  # the attack did fork
    assert report["held"] * report["size_mb"] <= BUDGET_MB, report
    assert isolation["memory_mb"] == BUDGET_MB
    if isolation["memory_mode"] == "address-space":
        assert isolation["process_memory_mb"] * isolation["process_cap"] <= BUDGET_MB
        assert report["process_limit_mb"] == isolation["process_memory_mb"]
    else:
        assert isolation["memory_mode"] == "cgroup"
