"""``tooldeck run --approve ask`` at a real terminal (a pseudo-terminal): the prompt shows the
tool, its risk and the arguments; y runs once, a remembers, e edits the arguments, n and
end-of-input deny."""

from __future__ import annotations

import json
import os
import pty
import select
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tools.approvals import ApprovalsStore

from .conftest import base_env

FACTORY = textwrap.dedent(
    '''
    from tools import LocalToolRegistry
    from tools.routing import ToolManual

    def build():
        registry = LocalToolRegistry()

        def remove_file(path: str) -> str:
            """Remove a file.

            Args:
                path: The file.
            """
            return f"removed {path}"

        registry.register(remove_file, manual=ToolManual(name="remove_file", category="file-write", risk="moderate"))
        return registry
    '''
)

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")


class Terminal:
    """``tooldeck`` with its stdin and stderr on a pseudo-terminal; stdout piped."""

    def __init__(self, args: list[str], env: dict[str, str], cwd: Path) -> None:
        self.master, slave = pty.openpty()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tools.cli", *args],
            stdin=slave,
            stderr=slave,
            stdout=subprocess.PIPE,
            env=env,
            cwd=cwd,
            start_new_session=True,
        )
        os.close(slave)
        self.screen = ""

    def wait_for(self, text: str, timeout: float = 60.0) -> str:
        deadline = time.monotonic() + timeout
        while text not in self.screen:
            left = deadline - time.monotonic()
            if left <= 0:
                self.kill()
                raise AssertionError(f"{text!r} never appeared; the terminal shows:\n{self.screen}")
            ready, _, _ = select.select([self.master], [], [], min(left, 0.5))
            if ready:
                try:
                    chunk = os.read(self.master, 4096)
                except OSError:  # the child closed the terminal
                    chunk = b""
                if not chunk and self.proc.poll() is not None:
                    raise AssertionError(f"{text!r} never appeared; the terminal shows:\n{self.screen}")
                self.screen += chunk.decode("utf-8", "replace")
        return self.screen

    def type(self, text: str) -> None:
        os.write(self.master, text.encode())

    def finish(self) -> tuple[int, str]:
        try:
            out, _ = self.proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(f"tooldeck did not finish; the terminal shows:\n{self.screen}") from None
        finally:
            os.close(self.master)
        return self.proc.returncode, out.decode()

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)


@pytest.fixture
def setup(tmp_path: Path) -> tuple[list[str], dict[str, str], Path]:
    app = tmp_path / "app"
    app.mkdir()
    (app / "prompt_factory_mod.py").write_text(FACTORY)
    env = base_env(tmp_path / "home", TERM="dumb", NO_COLOR="1", COLUMNS="200")
    args = ["run", "remove_file", "--registry", "prompt_factory_mod:build", "--app-dir", str(app)]
    return args, env, tmp_path


def test_yes_runs_once_and_shows_tool_risk_and_arguments(setup: tuple[list[str], dict[str, str], Path]) -> None:
    args, env, cwd = setup
    term = Terminal([*args, "--arg", "path=notes.txt"], env, cwd)
    screen = term.wait_for("Run it?")
    assert "approval needed" in screen
    assert "remove_file" in screen
    assert "moderate" in screen
    assert '"path": "notes.txt"' in screen
    term.type("y\n")
    assert term.finish() == (0, "removed notes.txt\n")
    assert ApprovalsStore.from_env(env).approvals() == {}


def test_always_remembers_the_approval(setup: tuple[list[str], dict[str, str], Path]) -> None:
    args, env, cwd = setup
    term = Terminal([*args, "--arg", "path=a"], env, cwd)
    term.wait_for("Run it?")
    term.type("a\n")
    assert term.finish() == (0, "removed a\n")
    assert list(ApprovalsStore.from_env(env).approvals()) == ["remove_file"]
    again = subprocess.run(
        [sys.executable, "-m", "tools.cli", *args, "--arg", "path=b"],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    assert (again.returncode, again.stdout) == (0, "removed b\n")  # approved: not asked again


def test_edit_runs_the_edited_arguments(setup: tuple[list[str], dict[str, str], Path]) -> None:
    args, env, cwd = setup
    term = Terminal([*args, "--arg", "path=/"], env, cwd)
    term.wait_for("Run it?")
    term.type("e\n")
    term.wait_for("Arguments (one JSON object)")
    term.type("not json\n")
    term.wait_for("try again")
    term.type(json.dumps({"path": "/tmp/only-this"}) + "\n")
    assert term.finish() == (0, "removed /tmp/only-this\n")


@pytest.mark.parametrize("answer", ["n\n", "\n", "\x04"], ids=["no", "default-no", "end-of-input"])
def test_no_and_end_of_input_deny(setup: tuple[list[str], dict[str, str], Path], answer: str) -> None:
    args, env, cwd = setup
    term = Terminal([*args, "--arg", "path=x", "--json"], env, cwd)
    term.wait_for("Run it?")
    term.type(answer)
    code, out = term.finish()
    assert code == 1
    envelope = json.loads(out)
    assert envelope["error_type"] == "permission_denied"
    assert "was not approved" in envelope["error"]


PREVIEW_FACTORY = textwrap.dedent(
    """
    from pydantic import BaseModel

    from tools import BaseTool, LocalToolRegistry
    from tools.approvals.preview import files_diff
    from tools.routing import ToolManual


    class Plugin(BaseModel):
        plugin: str


    class InstallPlugin(BaseTool[Plugin, str]):
        name = "install_plugin"
        description = "Install a plugin."
        manual = ToolManual(name="install_plugin", category="execution", risk="dangerous")

        def approval_preview(self, request: Plugin) -> str:
            old = {"plugin.py": b"print('v1')\\n"}
            return files_diff(old, {"plugin.py": b"print('v2')\\n"}, label=f"plugin {request.plugin}: v1 -> v2")

        def execute_internal(self, request: Plugin) -> str:
            return f"installed {request.plugin}"


    def build():
        registry = LocalToolRegistry()
        registry.register(InstallPlugin())
        return registry
    """
)


def test_the_prompt_shows_what_an_install_changes(tmp_path: Path) -> None:
    app = tmp_path / "app"
    app.mkdir()
    (app / "preview_factory_mod.py").write_text(PREVIEW_FACTORY)
    env = base_env(tmp_path / "home", TERM="dumb", NO_COLOR="1", COLUMNS="200")
    args = ["run", "install_plugin", "--registry", "preview_factory_mod:build", "--app-dir", str(app)]
    term = Terminal([*args, "--arg", "plugin=greet"], env, tmp_path)
    screen = term.wait_for("Run it?")
    assert "what it changes" in screen
    for line in ("plugin greet: v1 -> v2", "--- a/plugin.py", "+++ b/plugin.py", "-print('v1')", "+print('v2')"):
        assert line in screen
    term.type("y\n")
    assert term.finish() == (0, "installed greet\n")
