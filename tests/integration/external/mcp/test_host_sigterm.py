"""SIGTERM to a host process stops its tool children as Ctrl-C does: no child survives.

Real host processes (``tooldeck run``, ``tooldeck serve-mcp``, ``python -m orchestrator``),
run as root and, dropped with ``setpriv``, as uid 1000, each call an adopted tool whose
process never ends by itself: an MCP server that hangs at start-up and ignores both
SIGTERM and the end of its stdin (``stubborn_server.py``), or a tool binary that sleeps
with a grandchild. Once that child runs, the host gets a real SIGTERM; afterwards no
process of the tool may be left. (Before, SIGTERM ended the host at once and orphaned
them: the children lead their own process groups, so nothing else reaped them.)
"""

from __future__ import annotations

import importlib.util
import json
import os
import secrets
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest

pytest.importorskip("mcp")

pytestmark = pytest.mark.mcp


def _privileges() -> ModuleType:
    path = Path(__file__).parents[2] / "sandbox" / "privileges.py"
    spec = importlib.util.spec_from_file_location("mcp_privileges", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


priv = _privileges()
STUBBORN = Path(__file__).parent / "servers" / "stubborn_server.py"
SLEEPER = """
import subprocess, sys, time
if sys.argv[1:] == ["--schema"]:
    sys.exit(1)
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)", sys.argv[0] + "-grandchild"])
time.sleep(3600)
"""
BOOT = (
    "import json, runpy, sys; sys.path[0:0] = json.loads(sys.argv.pop(1)); "
    "runpy.run_module(sys.argv.pop(1), run_name='__main__', alter_sys=True)"
)
MCP_REQUESTS = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "hang", "arguments": {}}},
]


@dataclass
class World:
    """A world-readable host side: the package copy, a project adopting the tools, a home."""

    root: Path
    tree: Path
    site: list[str]
    python: str
    project: Path
    home: Path
    marker: str


@pytest.fixture(scope="module", params=priv.mode_params())
def world(request: pytest.FixtureRequest) -> Iterator[World]:
    mode: str = request.param
    python, site = priv.library_python()
    root = Path(tempfile.mkdtemp(prefix="tooldeck-sigterm-test-"))
    root.chmod(0o755)
    uid = priv.app_uid(mode)
    try:
        tree = priv.readable_tree(root, packages=("tools", "orchestrator", "shared"))
        marker = f"tooldeck-victim-{secrets.token_hex(4)}"
        server = root / "stubborn_server.py"
        shutil.copy(STUBBORN, server)
        server.chmod(0o644)
        sleeper = root / f"{marker}-sleeper"
        sleeper.write_text(f"#!{python}\n{SLEEPER}")
        sleeper.chmod(0o755)
        hang = {"command": [python, str(server), marker]}
        open_manual = {"risk": "safe", "mutating": False}
        tools = {
            "hang": {"adapter_type": "mcp", "mcp": hang, "remote_tool": "x", "manual": open_manual},
            "calculator": {
                "adapter_type": "mcp", "mcp": hang, "remote_tool": "x", "manual": open_manual,
                "parameters": {"type": "object", "properties": {"expression": {"type": "string"}}},
            },
            "sleeper": {"adapter_type": "binary", "binary": {"path": str(sleeper)}, "manual": open_manual},
        }  # fmt: skip
        project = priv.private_dir(root / "project", uid, 0o755)
        (project / ".tooldeck").mkdir()
        (project / ".tooldeck" / "registry.json").write_text(json.dumps({"version": 1, "tools": tools}))
        for path in [project / ".tooldeck", *(project / ".tooldeck").iterdir()]:
            os.chown(path, uid, uid)
        home = priv.private_dir(root / "home", uid, 0o700)
        world = World(root, tree, site, python, project, home, marker)
        world.mode = mode  # type: ignore[attr-defined]
        trust = _host(world, "tools.cli", "trust")  # the user reviewed the project's registry
        _, err = trust.communicate(timeout=120)
        assert trust.returncode == 0, err
        yield world
    finally:
        for pid in _victims(str(root)):  # never leave one behind, whatever the outcome
            os.kill(pid, signal.SIGKILL)
        shutil.rmtree(root, ignore_errors=True)


def _victims(marker: str) -> list[int]:
    """Live processes whose command line mentions ``marker``."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry.name}/cmdline").read_bytes()
            state = Path(f"/proc/{entry.name}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if marker.encode() in cmdline and state not in ("Z", "X") and int(entry.name) != os.getpid():
            found.append(int(entry.name))
    return found


def _wait(condition: object, within: float) -> bool:
    """Poll ``condition()`` until true or ``within`` seconds pass (a bound, not an assertion)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return True
        time.sleep(0.05)
    return bool(condition())  # type: ignore[operator]


def _host(world: World, module: str, *args: str) -> subprocess.Popen[bytes]:
    mode: str = world.mode  # type: ignore[attr-defined]
    argv = [*priv.drop_argv(mode), world.python, "-I", "-c", BOOT, json.dumps([str(world.tree), *world.site])]
    env = {
        "PATH": priv.SEARCH_PATH,
        "LANG": "C.UTF-8",
        "HOME": str(world.home),
        "XDG_CONFIG_HOME": str(world.home / ".config"),
        "TOOLDECK_DATA_DIR": str(world.home / "data"),
    }
    return subprocess.Popen(
        [*argv, module, *args],
        cwd=world.project,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def _terminate_and_check(world: World, host: subprocess.Popen[bytes], victim: str) -> None:
    drained: list[bytes] = []
    reader = threading.Thread(target=lambda: drained.append(host.stdout.read() if host.stdout else b""))
    reader.start()
    started = _wait(lambda: _victims(victim) or host.poll() is not None, 90.0)
    assert started and host.poll() is None, (host.poll(), host.stderr.read() if host.stderr else b"")
    host.send_signal(signal.SIGTERM)  # a service manager, `kill`, a container stopping
    host.wait(timeout=60)
    reader.join(30)
    left = [] if _wait(lambda: not _victims(victim), 15.0) else _victims(victim)
    assert left == [], f"tool processes survived the host's SIGTERM: {left}"
    assert host.returncode == 143, (host.returncode, host.stderr.read() if host.stderr else b"")  # 128 + SIGTERM


def test_tooldeck_run_stops_a_hung_mcp_server(world: World) -> None:
    host = _host(world, "tools.cli", "run", "hang", "--timeout", "600", "--approve", "deny")
    _terminate_and_check(world, host, world.marker)


def test_tooldeck_run_stops_a_tool_binary_and_its_children(world: World) -> None:
    host = _host(world, "tools.cli", "run", "sleeper", "--timeout", "600", "--approve", "deny")
    _terminate_and_check(world, host, f"{world.marker}-sleeper")


def test_tooldeck_serve_mcp_stops_the_tools_it_called(world: World) -> None:
    host = _host(world, "tools.cli", "serve-mcp")
    assert host.stdin is not None
    host.stdin.write(b"".join(json.dumps(message).encode() + b"\n" for message in MCP_REQUESTS))
    host.stdin.flush()
    _terminate_and_check(world, host, world.marker)


def test_the_orchestrator_stops_a_hung_mcp_server(world: World) -> None:
    host = _host(world, "orchestrator", "--tool-choice", "calculator", "What is 12*(3+4)?")
    _terminate_and_check(world, host, world.marker)
