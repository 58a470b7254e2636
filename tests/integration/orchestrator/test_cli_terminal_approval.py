"""``python -m orchestrator --approve ask`` at a real terminal (a pseudo-terminal): the prompt of
``tooldeck run`` shows the tool, its risk and the arguments; yes runs the call, no is answered
with permission_denied and the model continues; nothing pauses."""

from __future__ import annotations

import os
import pty
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.integration.orchestrator._held_notes import held_notes_env

QUESTION = "What is 12*(3+4)? Remember that my dentist is Dr. Lee."
REPO_ROOT = Path(__file__).resolve().parents[3]

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")


class Terminal:
    """``python -m orchestrator`` with stdin and stderr on a pseudo-terminal; stdout piped."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        self.master, slave = pty.openpty()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "orchestrator", *args],
            stdin=slave,
            stderr=slave,
            stdout=subprocess.PIPE,
            env=env,
            start_new_session=True,
        )
        os.close(slave)
        self.screen = ""

    def wait_for(self, text: str, timeout: float = 60.0) -> str:
        deadline = time.monotonic() + timeout
        while text not in self.screen:
            left = deadline - time.monotonic()
            if left <= 0 or self.proc.poll() is not None:
                self.kill()
                raise AssertionError(f"{text!r} never appeared; the terminal shows:\n{self.screen}")
            ready, _, _ = select.select([self.master], [], [], min(left, 0.5))
            if ready:
                try:
                    chunk = os.read(self.master, 4096)
                except OSError:
                    chunk = b""
                self.screen += chunk.decode("utf-8", "replace")
        return self.screen

    def type(self, text: str) -> None:
        os.write(self.master, text.encode())

    def finish(self) -> tuple[int, str]:
        try:
            out, _ = self.proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(f"the orchestrator did not finish; the terminal shows:\n{self.screen}") from None
        finally:
            os.close(self.master)
        return self.proc.returncode, out.decode()

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path / "home"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "TOOLDECK_DATA_DIR": str(tmp_path / "data"),
        "TOOLDECK_CONTEXT_URL": "http://127.0.0.1:9",
        "PYTHONPATH": str(REPO_ROOT),
        "TERM": "dumb",
        "NO_COLOR": "1",
        "COLUMNS": "200",
        **held_notes_env(tmp_path / "operator"),  # store_knowledge declared moderate: held at medium
    }


def test_yes_at_the_terminal_runs_the_call(env: dict[str, str]) -> None:
    term = Terminal(["--freedom", "low", "--no-trace", "Remember that my dentist is Dr. Lee."], env)
    screen = term.wait_for("Run it?")
    assert "approval needed" in screen and "store_knowledge" in screen
    assert '"text": "my dentist is Dr. Lee"' in screen
    term.type("y\n")
    assert term.finish() == (0, "Noted: your dentist is Dr. Lee.\n")


def test_at_the_default_level_a_held_call_is_asked_about_at_the_terminal(env: dict[str, str]) -> None:
    term = Terminal(["--no-trace", "What is 12*(3+4)? Search the web for tooldeck"], env)  # no level anywhere
    screen = term.wait_for("Run it?")
    assert "web" in screen and "moderate" in screen and "freedom level medium" in screen
    term.type("n\n")
    code, out = term.finish()
    assert code == 0
    assert out.startswith("12 * (3 + 4) = 84.\n")


def test_no_at_the_terminal_is_a_denial_the_model_sees(env: dict[str, str]) -> None:
    term = Terminal(["--freedom", "low", "--no-trace", QUESTION], env)
    term.wait_for("Run it?")  # math_solver (safe, but the level is low)
    term.type("y\n")
    term.wait_for("store_knowledge")
    term.type("n\n")
    code, out = term.finish()
    assert code == 0
    assert out.startswith("12 * (3 + 4) = 84.\n")
    assert "denied at the terminal" in out
