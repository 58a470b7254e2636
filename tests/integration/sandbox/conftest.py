"""Fixtures for the sandbox and math-worker tests: real processes, and a leftover check."""

from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest

from tools.builtin.code_executor import LocalSandbox, SandboxLimits


def _load_privileges() -> ModuleType:
    spec = importlib.util.spec_from_file_location("sandbox_privileges", Path(__file__).with_name("privileges.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


privileges = _load_privileges()
BWRAP = shutil.which("bwrap", path="/usr/local/bin:/usr/bin:/bin")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """``app_mode``: root / unprivileged; ``launcher_kind``: bwrap / namespaces."""
    if "app_mode" in metafunc.fixturenames:
        metafunc.parametrize("app_mode", privileges.mode_params(), scope="module")
    if "launcher_kind" in metafunc.fixturenames:
        kinds = [
            pytest.param("bwrap", marks=pytest.mark.skipif(BWRAP is None, reason="bubblewrap is not installed")),
            "namespaces",
        ]
        metafunc.parametrize("launcher_kind", kinds, scope="module")


@pytest.fixture(scope="module")
def priv() -> ModuleType:
    """The helpers of ``privileges.py`` (run the sandbox as root or as an ordinary user)."""
    return privileges


#: The uid LocalSandbox runs programs as when the tests run as root.
SANDBOX_UID = 65534 if os.geteuid() == 0 else None


def boot_ticks() -> int:
    """Now, in the clock ticks since boot that /proc/<pid>/stat uses for start times."""
    return int(time.clock_gettime(time.CLOCK_BOOTTIME) * os.sysconf("SC_CLK_TCK"))


def processes_under(prefix: str, *, uid: int | None = None, since: int | None = None) -> list[tuple[int, str]]:
    """Live processes of sandbox sessions (a /proc scan).

    A process counts when its cwd, command line or environment (every program's ``HOME``
    and ``TMPDIR`` are its working directory) mentions ``prefix``: that catches background
    processes that changed directory and run another program. With ``uid`` and ``since``
    (boot ticks), so does any process of ``uid`` started since, unless it names another
    test's ``/tooldeck-...`` directory (a test running beside this one).
    """
    found: list[tuple[int, str]] = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
            if fields[0] == b"Z":  # a zombie is already dead; its parent reaps it
                continue
            owner = os.stat(f"/proc/{entry.name}").st_uid
            cmdline = Path(f"/proc/{entry.name}/cmdline").read_bytes().replace(b"\0", b" ")
            try:
                cwd = os.readlink(f"/proc/{entry.name}/cwd")
                environ = Path(f"/proc/{entry.name}/environ").read_bytes()
            except OSError:
                cwd, environ = "", b""
        except (OSError, IndexError):
            continue
        text = cmdline.decode("utf-8", "replace")
        recent = since is not None and int(fields[19]) >= since
        mentioned = prefix in cwd or prefix in text or prefix.encode() in environ
        # Another test's process (xdist runs tests side by side): it names its own root.
        elsewhere = not mentioned and ("/tooldeck-" in cwd or "/tooldeck-" in text or b"/tooldeck-" in environ)
        if mentioned or (owner == uid and recent and not elsewhere):
            found.append((int(entry.name), text[:200]))
    return found


@pytest.fixture(scope="module")
def scan() -> SimpleNamespace:
    """``boot_ticks()`` and ``processes_under(...)`` for module-scoped leftover checks."""
    return SimpleNamespace(boot_ticks=boot_ticks, processes_under=processes_under)


@pytest.fixture
def scan_processes() -> Callable[[str], list[tuple[int, str]]]:
    """The /proc scan used by the leftover check, for tests that check it."""
    return processes_under


@pytest.fixture
def sandbox_root() -> Iterator[Path]:
    """A root for sandbox working dirs, traversable by the sandbox uid; checked for leftovers.

    Fails the test if any process of a sandbox session under this root is still alive
    after the test (background processes, fork-bomb children, ...).
    """
    root = Path(tempfile.mkdtemp(prefix="tooldeck-sbx-test-"))
    root.chmod(0o711)
    started = boot_ticks()
    try:
        yield root
        # A process SIGKILLed at the end of a run is gone once the kernel has torn it down
        # (a fork bomb's children take a moment); anything still there after that survived.
        deadline = time.monotonic() + 3.0
        leftovers = processes_under(str(root), uid=SANDBOX_UID, since=started)
        while leftovers and time.monotonic() < deadline:
            time.sleep(0.05)
            leftovers = processes_under(str(root), uid=SANDBOX_UID, since=started)
        assert leftovers == [], f"sandbox processes outlived the call: {leftovers}"
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def limits() -> SandboxLimits:
    """Small limits so that hostile programs hit them fast."""
    return SandboxLimits(
        timeout_seconds=5.0,
        cpu_seconds=5,
        memory_mb=2048,  # divided over the 32 processes where no cgroup is delegated: 64 MiB each
        file_size_mb=4,
        max_processes=32,
        max_output_bytes=10_000,
        max_drain_bytes=2_000_000,
    )


@pytest.fixture(
    params=[
        pytest.param("bwrap", marks=pytest.mark.skipif(BWRAP is None, reason="bubblewrap is not installed")),
        "namespaces",
    ]
)
def sandbox(request: pytest.FixtureRequest, sandbox_root: Path, limits: SandboxLimits) -> Iterator[LocalSandbox]:
    """A LocalSandbox with small limits whose sessions live under ``sandbox_root``, per launcher."""
    box = LocalSandbox(limits=limits, temp_root=str(sandbox_root), launcher=request.param)
    try:
        yield box
    finally:
        box.close()
