"""Containment in both modes (application as root / as an ordinary user), both launchers.

Each (mode, launcher) pair runs one battery of hostile programs in a child interpreter
(``_driver.py``; the unprivileged mode drops to uid 1000 with ``setpriv``), then each
test below checks one item of it. The host side (a private file in a home directory, a
directory the program's uid owns, a setuid binary, a data directory, a world-writable
directory) is prepared here as root, and checked after the runs.
"""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="preparing the host side needs root (CI runs as root)"),
    # It plants a world-writable directory on the host, which every sandbox started meanwhile
    # (by tests on other workers) rightly refuses: it runs alone.
    pytest.mark.serial,
]

MAX_PROCESSES = 32
#: A host directory outside the sandbox's allow-list (not in its view at all).
HOST_PARENT = Path("/opt") if Path("/opt").is_dir() else Path("/srv")

READ_SECRET = """
try:
    print(open({path!r}).read())
except OSError as exc:
    print(type(exc).__name__)
"""

WRITE_FILE = """
import errno
try:
    with open({path!r}, 'w') as f:
        f.write('escaped')
    print('written')
except OSError as exc:
    print(type(exc).__name__, errno.errorcode.get(exc.errno))
"""

FORK_FLOOD = """
import os, time
n = 0
try:
    while n < 1500:
        if os.fork() == 0:
            time.sleep(30)
            os._exit(0)
        n += 1
except OSError:
    pass
print(n, flush=True)
time.sleep({hold})
"""

FORK_FEW = """
import os, time
n = 0
try:
    for _ in range(5):
        if os.fork() == 0:
            time.sleep(2)
            os._exit(0)
        n += 1
except OSError as exc:
    print('fork failed:', exc)
print(n)
"""

STATUS = """
fields = dict(line.split(':', 1) for line in open('/proc/self/status').read().splitlines())
print(fields['NoNewPrivs'].strip(), fields['Seccomp'].strip())
"""

SYSCALLS = """
import ctypes, errno, os, socket
libc = ctypes.CDLL(None, use_errno=True)
def call(func, *args):
    ctypes.set_errno(0)
    result = func(*args)
    return 'ok' if result == 0 else errno.errorcode.get(ctypes.get_errno(), '?')
out = {'ptrace': call(libc.ptrace, 0, 0, None, None), 'unshare': call(libc.unshare, 0x10000000)}
kinds = (('inet', socket.AF_INET, socket.SOCK_DGRAM), ('netlink', socket.AF_NETLINK, socket.SOCK_DGRAM),
         ('unix', socket.AF_UNIX, socket.SOCK_STREAM), ('unix_dgram', socket.AF_UNIX, socket.SOCK_DGRAM))
for name, family, kind in kinds:
    try:
        socket.socket(family, kind).close()
        out[name] = 'ok'
    except OSError as exc:
        out[name] = errno.errorcode.get(exc.errno, '?')
print(sorted(out.items()))
"""

LIST_AND_WRITE = """
import errno, os
print(sorted(os.listdir({path!r})))
try:
    open(os.path.join({path!r}, 'dropped.txt'), 'w').write('x')
    print('written')
except OSError as exc:
    print(errno.errorcode.get(exc.errno))
"""


@dataclass
class Host:
    """Host-side fixtures of one battery."""

    secret: Path
    owned_dir: Path
    setuid_id: Path
    data_dir: Path
    outside_dir: Path
    world_writable: Path
    readable: Path
    lock_marker: str


def _host(stack: list[Path], app_uid: int, lock_marker: str) -> Host:
    home = Path(tempfile.mkdtemp(prefix="tooldeck-test-home-", dir="/home"))
    stack.append(home)
    os.chown(home, app_uid, app_uid)
    secret = home / "secret.txt"
    secret.write_text("top secret")
    os.chown(secret, app_uid, app_uid)
    secret.chmod(0o600)
    # A directory the sandbox shows read-only (LocalSandbox(readable_dirs=...)), private to
    # this battery: sandboxes of other tests running meanwhile don't see what is made here.
    readable = Path(tempfile.mkdtemp(prefix="tooldeck-test-readable-", dir=HOST_PARENT))
    stack.append(readable)
    readable.chmod(0o755)
    owned = Path(tempfile.mkdtemp(prefix="tooldeck-test-owned-", dir=readable))
    stack.append(owned)
    program_uid = app_uid or 65534  # as root the program runs as 65534; else as the app user
    os.chown(owned, program_uid, program_uid)
    owned.chmod(0o755)
    setuid_id = owned / "id-setuid"
    shutil.copy("/usr/bin/id", setuid_id)
    os.chown(setuid_id, 0, 0)
    setuid_id.chmod(0o4755)
    data = Path(tempfile.mkdtemp(prefix="tooldeck-test-data-", dir=readable))
    stack.append(data)
    (data / "registry.json").write_text("{}")
    os.chown(data, app_uid, app_uid)
    outside = Path(tempfile.mkdtemp(prefix="tooldeck-test-outside-", dir=HOST_PARENT))
    stack.append(outside)
    (outside / "registry.json").write_text("{}")
    outside.chmod(0o755)
    world = Path(tempfile.mkdtemp(prefix="tooldeck-test-ww-", dir=readable))
    stack.append(world)
    (world / "left-by-host.txt").write_text("x")
    world.chmod(0o1777)
    return Host(secret, owned, setuid_id, data, outside, world, readable, lock_marker)


def _cases(host: Host) -> list[dict[str, Any]]:
    lock_file = f"/run/lock/{host.lock_marker}"
    return [
        {"name": "home_secret", "code": READ_SECRET.format(path=str(host.secret))},
        {"name": "disk_write", "code": WRITE_FILE.format(path=str(host.owned_dir / "escape.txt"))},
        {"name": "fork_flood", "code": FORK_FLOOD.format(hold=0), "timeout": 8},
        {
            "name": "shared_cap",
            "pair": [{"code": FORK_FLOOD.format(hold=4), "timeout": 8}, {"code": FORK_FEW}],
            "hold": MAX_PROCESSES - 6,
        },
        {"name": "lock_write", "code": WRITE_FILE.format(path=lock_file)},
        {"name": "lock_read", "code": "import os\nprint(os.path.exists('/run'), os.path.exists('/var/run'))\n"},
        {"name": "setuid", "code": f"import subprocess\nprint(subprocess.run([{str(host.setuid_id)!r}]).returncode)\n"},
        {"name": "status", "code": STATUS},
        {"name": "syscalls", "code": SYSCALLS},
        {"name": "network", "code": "print([l.split(':')[0].strip() for l in open('/proc/net/dev').readlines()[2:]])"},
        {"name": "data_dir", "code": LIST_AND_WRITE.format(path=str(host.data_dir))},
        {"name": "outside_dir", "code": READ_SECRET.format(path=str(host.outside_dir / "registry.json"))},
        {"name": "world_writable", "code": LIST_AND_WRITE.format(path=str(host.world_writable))},
    ]


@dataclass
class Battery:
    """The outcome of one battery: the driver's answer and the host after it."""

    mode: str
    launcher: str
    answer: dict[str, Any]
    host: Host
    escaped: dict[str, bool]
    leftovers: list[tuple[int, str]]

    def result(self, name: str) -> dict[str, Any]:
        found: dict[str, Any] = self.answer["results"][name]
        assert "error" not in found, found
        return found


@pytest.fixture(scope="module")
def battery(app_mode: str, launcher_kind: str, priv: ModuleType, scan: Any) -> Iterator[Battery]:
    problem = priv.userns_problem(app_mode, launcher_kind)
    if problem is not None:
        pytest.skip(problem)
    stack: list[Path] = []
    lock_marker = f"tooldeck-test-{secrets.token_hex(4)}"
    root = Path(tempfile.mkdtemp(prefix="tooldeck-sbx-test-"))
    stack.append(root)
    root.chmod(0o711)
    try:
        host = _host(stack, priv.app_uid(app_mode), lock_marker)
        temp_root = priv.private_dir(root / "work", priv.app_uid(app_mode), 0o700)
        tree = priv.readable_tree(root)
        job = {
            "limits": {"timeout_seconds": 8, "max_processes": MAX_PROCESSES, "max_output_bytes": 20_000},
            "sandbox": {
                "temp_root": str(temp_root),
                "launcher": launcher_kind,
                "hidden_dirs": [str(host.data_dir)],
                "readable_dirs": [str(host.readable)],
            },
            "cases": _cases(host),
        }
        started = scan.boot_ticks()
        answer = priv.run_driver(app_mode, job, tree=tree)
        escaped = {
            "disk_write": (host.owned_dir / "escape.txt").exists(),
            "lock_write": Path("/run/lock", host.lock_marker).exists(),
            "data_dir": (host.data_dir / "dropped.txt").exists(),
            "world_writable": (host.world_writable / "dropped.txt").exists(),
        }
        deadline = time.monotonic() + 3.0
        program_uid = priv.app_uid(app_mode) or 65534
        leftovers = scan.processes_under(str(root), uid=program_uid, since=started)
        while leftovers and time.monotonic() < deadline:
            time.sleep(0.05)
            leftovers = scan.processes_under(str(root), uid=program_uid, since=started)
        yield Battery(app_mode, launcher_kind, answer, host, escaped, leftovers)
    finally:
        Path("/run/lock", lock_marker).unlink(missing_ok=True)
        for path in reversed(stack):
            shutil.rmtree(path, ignore_errors=True)


def test_every_option_is_understood(battery: Battery) -> None:
    assert battery.answer["dropped"] == []


def test_isolation_flags_say_what_held(battery: Battery) -> None:
    isolation = battery.result("status")["isolation"]
    assert isolation["launcher"] == battery.launcher
    assert isolation["network"] is True
    assert isolation["pid_namespace"] is True
    assert isolation["filesystem"] is True
    assert isolation["seccomp"] is True
    assert isolation["no_new_privs"] is True
    assert isolation["process_cap"] == MAX_PROCESSES


def test_a_private_file_in_a_home_directory_is_hidden(battery: Battery) -> None:
    result = battery.result("home_secret")
    assert "top secret" not in result["stdout"]
    assert result["stdout"] == "FileNotFoundError\n"


def test_the_host_filesystem_is_read_only(battery: Battery) -> None:
    assert battery.result("disk_write")["stdout"] == "OSError EROFS\n"
    assert battery.escaped["disk_write"] is False


def test_forking_stops_at_the_per_run_process_cap(battery: Battery) -> None:
    forked = int(battery.result("fork_flood")["stdout"].split()[0])
    assert forked < MAX_PROCESSES


def test_one_runs_processes_do_not_use_up_another_runs_cap(battery: Battery) -> None:
    pair = battery.answer["results"]["shared_cap"]
    assert int(pair["first"]["stdout"].split()[0]) < MAX_PROCESSES
    assert pair["second"]["stdout"] == "5\n", pair["second"]


def test_run_and_var_run_are_not_in_the_view(battery: Battery) -> None:
    assert battery.result("lock_write")["stdout"] == "FileNotFoundError ENOENT\n"
    assert battery.result("lock_read")["stdout"] == "False False\n"
    assert battery.escaped["lock_write"] is False


def test_setuid_programs_do_not_raise_privileges(battery: Battery) -> None:
    result = battery.result("setuid")
    assert "euid=0" not in result["stdout"]
    assert "uid=0(" not in result["stdout"]


def test_no_new_privs_and_a_seccomp_filter_are_in_force(battery: Battery) -> None:
    assert battery.result("status")["stdout"] == "1 2\n"


def test_the_seccomp_filter_denies_dangerous_calls_and_network_sockets(battery: Battery) -> None:
    expected = (
        "[('inet', 'EAFNOSUPPORT'), ('netlink', 'EAFNOSUPPORT'), ('ptrace', 'EPERM'), "
        "('unix', 'ok'), ('unix_dgram', 'EPERM'), ('unshare', 'EPERM')]\n"
    )
    assert battery.result("syscalls")["stdout"] == expected


def test_the_network_namespace_is_empty(battery: Battery) -> None:
    assert battery.result("network")["stdout"] == "['lo']\n"


def test_the_applications_data_directories_are_hidden(battery: Battery) -> None:
    assert battery.result("data_dir")["stdout"] == "[]\nEROFS\n"
    assert battery.escaped["data_dir"] is False


def test_host_directories_outside_the_allow_list_are_not_in_the_view(battery: Battery) -> None:
    assert battery.result("outside_dir")["stdout"] == "FileNotFoundError\n"


def test_world_writable_directories_are_private_per_run(battery: Battery) -> None:
    assert battery.result("world_writable")["stdout"] == "[]\nwritten\n"
    assert battery.escaped["world_writable"] is False


def test_no_process_outlives_the_battery(battery: Battery) -> None:
    assert battery.leftovers == []


def test_without_user_namespaces_the_sandbox_refuses_and_says_why(priv: ModuleType, sandbox_root: Path) -> None:
    bwrap = shutil.which("bwrap", path="/usr/bin:/bin")
    if bwrap is None:
        pytest.skip("taking user namespaces away from the test user needs bubblewrap")
    temp_root = priv.private_dir(sandbox_root / "work", priv.app_uid("unprivileged"), 0o700)
    tree = priv.readable_tree(sandbox_root)
    # The driver runs as the ordinary user in a user namespace that may not create another one.
    no_userns = [bwrap, "--unshare-user", "--disable-userns", "--dev-bind", "/", "/", "--"]
    cases = [{"name": "run", "code": "print('ran')"}]
    strict = priv.run_driver(
        "unprivileged", {"sandbox": {"temp_root": str(temp_root)}, "cases": cases}, tree=tree, wrapper=no_userns
    )
    refused = strict["results"]["run"]
    assert refused["error"].startswith(
        "ToolError: The code was not run: the sandbox can't contain programs on this machine."
    )
    assert "a user namespace (the per-run process cap)" in refused["error"]
    assert "allow_weaker_isolation=True" in refused["error"]
    assert refused["trips_breaker"] is True
    weaker = {"temp_root": str(temp_root), "allow_weaker_isolation": True}
    answer = priv.run_driver("unprivileged", {"sandbox": weaker, "cases": cases}, tree=tree, wrapper=no_userns)
    ran = answer["results"]["run"]
    assert ran["stdout"] == "ran\n"
    assert ran["network_isolated"] is False
    assert {k: ran["isolation"][k] for k in ("launcher", "filesystem", "process_cap", "no_new_privs")} == {
        "launcher": "none",
        "filesystem": False,
        "process_cap": None,
        "no_new_privs": True,
    }
