"""What a new user meets first: the README's Python examples, ``.ci/run``, install hints.

* Every ```python block of README.md runs as written, each in a fresh interpreter with no
  network (a block may define what it needs, such as a small fake client).
* The quickstart is two commands.
* ``.ci/run`` says what it does step by step with the elapsed time, says where its
  virtualenv is and removes it unless ``KEEP_VENV=1``, and installs bubblewrap only when
  it can (root with apt-get), explaining why not otherwise (checked with ``CI_DRY_RUN=1``,
  which prints the install and check commands instead of running them).
* No message or document tells users to ``pip install tooldeck[...]``: the package is not
  published, so the hint is ``pip install -e '.[extra]'`` in a checkout.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
README = ROOT / "README.md"
FENCE = re.compile(r"^```(?P<info>[^\n`]*)\n(?P<body>.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
PYTHON_INFO = {"python", "py", "python3"}

# Runs one block: no network (only loopback), top-level await allowed, the block's own
# line numbers in tracebacks.
RUNNER = textwrap.dedent(
    """
    import ast, asyncio, ipaddress, socket, sys

    def _local(host):
        if host in ("localhost", "", None):
            return True
        try:
            return ipaddress.ip_address(host.split("%")[0]).is_loopback
        except ValueError:
            return False

    _connect, _getaddrinfo = socket.socket.connect, socket.getaddrinfo

    def connect(self, address):
        if isinstance(address, tuple) and not _local(address[0]):
            raise OSError(f"README examples must not use the network (tried {address[0]})")
        return _connect(self, address)

    def getaddrinfo(host, *args, **kwargs):
        if not _local(host if isinstance(host, str) else None):
            raise socket.gaierror(f"README examples must not use the network (looked up {host})")
        return _getaddrinfo(host, *args, **kwargs)

    socket.socket.connect, socket.getaddrinfo = connect, getaddrinfo
    source, name = sys.stdin.read(), sys.argv[1]
    code = compile(source, name, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    namespace = {"__name__": "__main__"}
    result = eval(code, namespace)
    if asyncio.iscoroutine(result):
        asyncio.run(result)
    """
)


def python_blocks(text: str) -> list[tuple[int, str]]:
    """(first line number, code) of every fenced block whose info string is Python."""
    blocks = []
    for match in FENCE.finditer(text):
        info = match.group("info").strip().split()
        if info and info[0].lower() in PYTHON_INFO:
            line = text.count("\n", 0, match.start("body")) + 1
            blocks.append((line, match.group("body")))
    return blocks


BLOCKS = python_blocks(README.read_text(encoding="utf-8"))


def test_block_extraction_sees_every_python_fence() -> None:
    sample = "x\n```python\na = 1\n```\n```bash\nls\n```\n```py title\nb = 2\n```\n```\nplain\n```\n"
    assert python_blocks(sample) == [(3, "a = 1\n"), (9, "b = 2\n")]
    assert BLOCKS, "README.md has no ```python block: did the fence syntax change?"
    assert len(BLOCKS) == README.read_text(encoding="utf-8").count("```python")


@pytest.mark.parametrize(("line", "code"), BLOCKS, ids=[f"README.md:{line}" for line, _ in BLOCKS])
def test_readme_python_block_runs_as_written(line: int, code: str, tmp_path: Path) -> None:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": str(ROOT),
        "HOME": str(tmp_path),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "NO_PROXY": "*",
    }
    result = subprocess.run(
        [sys.executable, "-c", RUNNER, f"README.md:{line}"],
        input=code,
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, f"the block at README.md line {line} failed:\n{result.stderr[-3000:]}"


def test_the_readme_runner_refuses_the_network(tmp_path: Path) -> None:
    code = "import urllib.request\nurllib.request.urlopen('http://example.org', timeout=5)\n"
    result = subprocess.run(
        [sys.executable, "-c", RUNNER, "probe"],
        input=code,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=tmp_path,
    )
    assert result.returncode != 0
    assert "must not use the network" in result.stderr


def test_quickstart_is_two_commands() -> None:
    text = README.read_text(encoding="utf-8")
    section = text.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    (block,) = [m.group("body") for m in FENCE.finditer(section)]
    commands = [line for line in block.splitlines() if line.strip()]
    assert len(commands) == 2
    assert commands[1] == "bash .ci/run"


# ---------------------------------------------------------------------------- .ci/run


def ci_run(env_extra: dict[str, str], *, path: str | None = None) -> subprocess.CompletedProcess[str]:
    script = (ROOT / ".ci" / "run").read_text()
    assert "CI_DRY_RUN" in script, ".ci/run has no dry run: refusing to run the real CI from a test"
    env = {**os.environ, "CI_DRY_RUN": "1", "KEEP_VENV": "0", **env_extra}
    if path is not None:
        env["PATH"] = path
    bash = shutil.which("bash") or "/bin/bash"
    return subprocess.run(
        [bash, str(ROOT / ".ci" / "run")], env=env, capture_output=True, text=True, timeout=300, check=False
    )


def venv_path(stdout: str) -> Path:
    match = re.search(r"creating the virtualenv in (\S+)", stdout)
    assert match, stdout
    return Path(match.group(1))


def test_ci_run_reports_each_step_and_removes_its_virtualenv() -> None:
    result = ci_run({})
    assert result.returncode == 0, result.stdout + result.stderr
    steps = [line for line in result.stdout.splitlines() if line.startswith("== ")]
    assert len(steps) >= 7
    assert all(re.match(r"== \[\d+:\d\d\] \S", line) for line in steps), steps
    venv = venv_path(result.stdout)
    assert not venv.exists()
    assert f"removed the virtualenv {venv} (KEEP_VENV=1 keeps it)" in result.stdout
    assert "(dry run) python -m pip install --quiet -e .[all,test]" in result.stdout
    assert "llama-cpp-python[server]" in result.stdout
    assert "(dry run) bash scripts/check.sh" in result.stdout
    assert "--no-cache-dir" not in (ROOT / ".ci" / "run").read_text()  # the llama-cpp wheel stays cached
    assert re.search(r"upgrading pip \(cache: ", result.stdout)


def test_ci_run_keeps_the_virtualenv_when_asked() -> None:
    result = ci_run({"KEEP_VENV": "1"})
    venv = venv_path(result.stdout)
    try:
        assert result.returncode == 0, result.stdout + result.stderr
        assert (venv / "bin" / "python").exists()
        assert f"kept the virtualenv: {venv}" in result.stdout
    finally:
        shutil.rmtree(venv.parent, ignore_errors=True)


def restricted_path(tmp_path: Path, *extra: str) -> str:
    """A PATH with only what .ci/run needs (no bwrap, no apt-get unless asked)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("python3", "mktemp", "chmod", "rm", "id", "dirname", "env", *extra):
        found = shutil.which(name)
        assert found, name
        (bin_dir / name).symlink_to(found)
    return str(bin_dir)


def test_ci_run_explains_why_bubblewrap_is_not_installed(tmp_path: Path) -> None:
    result = ci_run({}, path=restricted_path(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    if os.geteuid() == 0:
        assert "bubblewrap is missing and apt-get is not available, so it is not installed" in result.stdout
        assert "install bubblewrap with this system's package manager" in result.stdout
    else:
        assert "bubblewrap is missing and this is not root, so it is not installed" in result.stdout
        assert "sudo apt-get install bubblewrap" in result.stdout


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("apt-get") is None, reason="needs root and apt-get")
def test_ci_run_installs_bubblewrap_with_apt_as_root(tmp_path: Path) -> None:
    result = ci_run({}, path=restricted_path(tmp_path, "apt-get"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "(dry run) apt-get update -qq" in result.stdout
    assert "(dry run) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap" in result.stdout


def test_ci_run_explains_why_chromium_and_ripgrep_are_not_installed(tmp_path: Path) -> None:
    result = ci_run({}, path=restricted_path(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ripgrep is missing and can't be installed here" in result.stdout
    if os.geteuid() == 0:
        assert "chromium is missing and apt-get is not available, so it is not installed" in result.stdout
    else:
        assert "chromium is missing and this is not root, so it is not installed" in result.stdout
        assert "sudo apt-get install chromium chromium-driver" in result.stdout


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("apt-get") is None, reason="needs root and apt-get")
def test_ci_run_installs_chromium_with_apt_as_root_updating_the_lists_once(tmp_path: Path) -> None:
    result = ci_run({}, path=restricted_path(tmp_path, "apt-get"))
    assert result.returncode == 0, result.stdout + result.stderr
    install = "(dry run) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq"
    for packages in ("bubblewrap", "ripgrep", "chromium chromium-driver"):  # none on this PATH
        assert f"{install} {packages}\n" in result.stdout, packages
    assert result.stdout.count("(dry run) apt-get update -qq") == 1  # once, for every system package


# ---------------------------------------------------------------------------- install hints

UNPUBLISHED = re.compile(r"pip install ['\"]?tooldeck\[")


def test_install_hints_work_from_a_checkout() -> None:
    wrong = []
    for path in [*ROOT.glob("*.md"), *ROOT.glob("docs/**/*.md"), *ROOT.glob("*/**/*.py")]:
        relative = path.relative_to(ROOT).as_posix()
        if relative.startswith((".", "build/")):
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if UNPUBLISHED.search(line) and relative != "tests/integration/orchestrator/test_onboarding.py":
                wrong.append(f"{relative}:{number}: {line.strip()}")
    assert not wrong, "say pip install -e '.[extra]' (in a checkout) instead:\n" + "\n".join(wrong)


# ------------------------------------------------------------------------ scripts/check.sh


@pytest.mark.parametrize("outcome", ["pass", "fail"])
def test_check_script_prints_the_suite_wall_time_however_it_ends(tmp_path: Path, outcome: str) -> None:
    """``scripts/check.sh`` (what ``.ci/run`` runs) prints the test suite's wall time after a
    green suite and after a failing one. ruff and mypy, not under test here, are stand-ins
    that pass; pytest is real, on two tests of its own (one for each outcome)."""
    stubs = tmp_path / "bin"
    stubs.mkdir()
    for linter in ("ruff", "mypy"):
        (stubs / linter).write_text("#!/bin/sh\nexit 0\n")
        (stubs / linter).chmod(0o755)
    test_file = tmp_path / f"test_{outcome}.py"
    test_file.write_text(f"def test_outcome():\n    assert {outcome == 'pass'}\n")
    env = {
        **os.environ,
        "PATH": os.pathsep.join([str(stubs), str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
        "TOOLDECK_TEST_WORKERS": "1",
        "PYTHONPATH": str(ROOT),
    }
    bash = shutil.which("bash") or "/bin/bash"
    result = subprocess.run(
        [bash, str(ROOT / "scripts" / "check.sh"), str(test_file)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert (result.returncode == 0) == (outcome == "pass"), result.stdout + result.stderr
    walls = re.findall(r"^== test suite wall time: \d+ s$", result.stdout, re.M)
    assert len(walls) == 1, result.stdout
    assert result.stdout.rstrip().endswith(walls[0])
