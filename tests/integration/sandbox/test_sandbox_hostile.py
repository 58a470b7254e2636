"""Hostile programs in the LocalSandbox: each is contained and reported clearly."""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tools.builtin.code_executor import LocalSandbox, SandboxLimits


def test_infinite_loop_is_killed_at_the_timeout(sandbox: LocalSandbox) -> None:
    result = sandbox.run("print('before')\nwhile True:\n    pass\n", timeout_seconds=1)
    assert result.stdout == "before\n"  # printed before the kill, so kept
    assert result.timed_out is True
    assert result.killed is True
    assert result.signal == "SIGKILL"
    assert result.exit_code == -9
    assert result.note == "Killed after the 1 s wall-clock limit."


def test_cpu_limit_ends_a_busy_program_with_sigxcpu(sandbox_root: Path) -> None:
    limits = SandboxLimits(timeout_seconds=30, cpu_seconds=1)
    with_cpu = LocalSandbox(limits=limits, temp_root=str(sandbox_root))
    result = with_cpu.run("while True:\n    pass\n")
    assert result.timed_out is False
    assert result.signal in ("SIGXCPU", "SIGKILL")
    assert result.killed is True


def test_fork_bomb_is_contained_and_leaves_no_process(sandbox: LocalSandbox) -> None:
    code = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"
    result = sandbox.run(code, timeout_seconds=2)
    assert result.timed_out is True
    assert result.killed is True
    # the sandbox_root fixture fails the test if any forked process survived


def test_process_limit_stops_forking(sandbox: LocalSandbox) -> None:
    code = (
        "import os, sys\n"
        "n = 0\n"
        "try:\n"
        "    for _ in range(200):\n"
        "        if os.fork() == 0:\n"
        "            import time; time.sleep(30)\n"
        "        n += 1\n"
        "except OSError as exc:\n"
        "    print('fork failed after', n, type(exc).__name__)\n"
    )
    result = sandbox.run(code, timeout_seconds=3)
    assert "fork failed after" in result.stdout
    assert int(result.stdout.split()[3]) < 32


def test_allocating_10_gb_fails_inside_the_program(sandbox: LocalSandbox) -> None:
    result = sandbox.run("x = bytearray(10 * 1024**3)\nprint('allocated')\n")
    assert result.exit_code == 1
    assert "MemoryError" in result.stderr
    assert "allocated" not in result.stdout


def test_writing_a_10_gb_file_is_stopped_at_the_file_size_limit(sandbox: LocalSandbox) -> None:
    # CPython ignores SIGXFSZ, so the write fails with EFBIG instead of killing it.
    code = (
        "import os\n"
        "chunk = b'0' * (1 << 20)\n"
        "try:\n"
        "    with open('big.bin', 'wb') as f:\n"
        "        for _ in range(10 * 1024):\n"
        "            f.write(chunk)\n"
        "    print('wrote 10 GB')\n"
        "except OSError as exc:\n"
        "    print(exc.strerror, os.path.getsize('big.bin'))\n"
    )
    result = sandbox.run(code)
    assert result.stdout == f"File too large {4 * 1024 * 1024}\n"


def test_shell_writing_a_huge_file_is_killed_with_sigxfsz(sandbox: LocalSandbox) -> None:
    if "sh" not in sandbox.languages():
        pytest.skip("sh not installed")
    result = sandbox.run("head -c 10000000000 /dev/zero > big.bin\necho done\n", language="sh")
    assert "done" in result.stdout  # the shell survives; its child died of SIGXFSZ
    result = sandbox.run("exec head -c 10000000000 /dev/zero > big.bin\n", language="sh")
    assert result.signal == "SIGXFSZ"
    assert result.note == "Killed for writing a file larger than 4 MiB."


def test_printing_100_mb_is_truncated_and_killed(sandbox: LocalSandbox) -> None:
    code = "import sys\nfor _ in range(100):\n    sys.stdout.write('x' * 1_000_000)\n"
    result = sandbox.run(code)
    assert result.truncated is True
    assert result.killed is True
    assert len(result.stdout) == 10_000
    assert result.note == "Killed after writing more than 2000000 bytes of output."


def test_output_over_the_cap_but_under_the_drain_limit_is_cut_not_killed(
    sandbox: LocalSandbox,
) -> None:
    result = sandbox.run("print('y' * 50_000)\nimport sys\nsys.stderr.write('done')\n")
    assert result.truncated is True
    assert result.killed is False
    assert result.exit_code == 0
    assert result.stdout == "y" * 10_000
    assert result.stderr == "done"
    assert result.note == "Output was cut to 10000 bytes per stream."


def test_background_process_does_not_outlive_the_call(sandbox: LocalSandbox) -> None:
    code = (
        "import subprocess\n"
        "p = subprocess.Popen(['sleep', '60'], start_new_session=True)\n"
        "q = subprocess.Popen(['sleep', '61'])\n"
        "print('spawned')\n"
    )
    result = sandbox.run(code)
    assert result.exit_code == 0
    assert result.stdout == "spawned\n"
    # the sandbox_root fixture scans /proc: neither sleep may still be running


def test_background_shell_job_holding_stdout_does_not_block(sandbox: LocalSandbox) -> None:
    if "bash" not in sandbox.languages():
        pytest.skip("bash not installed")
    result = sandbox.run("(sleep 60; echo late) &\necho now\n", language="bash")
    assert result.stdout == "now\n"
    assert result.timed_out is False


@pytest.fixture
def private_file(sandbox_root: Path) -> Path:
    """A file next to the sandbox working dirs that only root may read."""
    secret = sandbox_root / "secret.txt"
    secret.write_text("top secret")
    secret.chmod(0o600)
    return secret


def test_relative_path_escapes_cannot_read_or_write_outside(
    sandbox: LocalSandbox, private_file: Path, sandbox_root: Path
) -> None:
    code = (
        "import os\n"
        "for action in ('read', 'write'):\n"
        "    try:\n"
        "        if action == 'read':\n"
        "            print(open('../secret.txt').read())\n"
        "        else:\n"
        "            open('../escape.txt', 'w').write('x')\n"
        "            print('write', 'private')\n"
        "    except OSError as exc:\n"
        "        print(action, type(exc).__name__)\n"
    )
    result = sandbox.run(code)
    # '..' is in the private /tmp of this run: the secret isn't there and a write stays
    # there (bwrap makes the parents the sandbox user's, the namespaces launcher root's).
    assert result.isolation["filesystem"] is True
    assert result.stdout in (
        "read FileNotFoundError\nwrite private\n",
        "read FileNotFoundError\nwrite PermissionError\n",
    )
    assert not (sandbox_root / "escape.txt").exists()


def test_writes_outside_the_working_dir_never_reach_the_disk(sandbox: LocalSandbox, sandbox_root: Path) -> None:
    marker = f"tooldeck-escape-{os.getpid()}"
    code = f"open('/tmp/{marker}', 'w').write('x')\nprint('written')\n"
    result = sandbox.run(code)
    if not result.isolation["filesystem"]:
        pytest.skip("no mount namespace on this machine")
    assert result.stdout == "written\n"
    assert not Path("/tmp", marker).exists()


def test_many_small_files_are_bounded_by_the_private_disk(sandbox_root: Path) -> None:
    box = LocalSandbox(limits=SandboxLimits(disk_mb=8, file_size_mb=4), temp_root=str(sandbox_root))
    code = (
        "chunk = b'0' * (1 << 20)\n"
        "try:\n"
        "    for i in range(100):\n"
        "        with open(f'f{i}', 'wb') as f:\n"
        "            f.write(chunk * 2)\n"
        "except OSError as exc:\n"
        "    print(exc.strerror, i)\n"
    )
    result = box.run(code)
    if not result.isolation["filesystem"]:
        pytest.skip("no mount namespace on this machine")
    assert result.stdout.startswith("No space left on device ")
    assert int(result.stdout.split()[-1]) <= 4


def test_proc_shows_only_the_sandbox_processes(sandbox: LocalSandbox) -> None:
    code = "import os\nprint(sorted(int(p) for p in os.listdir('/proc') if p.isdigit()))\n"
    result = sandbox.run(code)
    if not (result.isolation["filesystem"] and result.isolation["pid_namespace"]):
        pytest.skip("no mount and PID namespaces on this machine")
    assert result.stdout == "[1, 2]\n"


def test_working_directory_is_fresh_and_removed(sandbox: LocalSandbox) -> None:
    first = sandbox.run("import os\nopen('left.txt', 'w').write('x')\nprint(os.getcwd())\n")
    second = sandbox.run("import os\nprint(os.getcwd(), sorted(os.listdir('.')))\n")
    workdir = first.stdout.strip()
    assert not Path(workdir).exists()
    assert workdir not in second.stdout
    assert "left.txt" not in second.stdout


def test_environment_is_scrubbed(sandbox: LocalSandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLDECK_TEST_API_KEY", "sk-do-not-leak")
    result = sandbox.run("import os\nprint(sorted(os.environ))\n")
    assert "TOOLDECK_TEST_API_KEY" not in result.stdout
    assert "sk-do-not-leak" not in result.stdout


@pytest.fixture
def listener() -> Iterator[int]:
    """A TCP listener on 127.0.0.1 that accepts and closes; yields its port."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.05)
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            conn.close()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        stop.set()
        thread.join()
        server.close()


CONNECT = (
    "import socket\n"
    "try:\n"
    "    socket.create_connection(('127.0.0.1', {port}), timeout=2).close()\n"
    "    print('connected')\n"
    "except OSError as exc:\n"
    "    print('blocked', type(exc).__name__)\n"
)


def test_socket_is_blocked_or_reported(sandbox: LocalSandbox, listener: int) -> None:
    result = sandbox.run(CONNECT.format(port=listener))
    if result.network_isolated:
        assert result.stdout.startswith("blocked")
    else:
        assert result.isolation["network"] is False


def test_without_network_isolation_the_socket_connects(sandbox_root: Path, listener: int) -> None:
    open_box = LocalSandbox(isolate_network=False, temp_root=str(sandbox_root))
    result = open_box.run(CONNECT.format(port=listener))
    assert result.network_isolated is False
    assert result.stdout == "connected\n"
