"""The quickstart's main job at freedom level ``medium`` (where only ``safe`` tools run
without asking): the math solver computes in process and the note stays in tooldeck's own
knowledge base, both ``safe`` by declaration, so it answers with no prompt and no pause."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

QUESTION = "What is 12*(3+4)? Remember that my dentist is Dr. Lee."
REPO_ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize(
    "flags",
    [[], ["--agent", "main"], ["--freedom", "medium"]],
    ids=["as-the-readme-says", "main-agent", "medium-given"],
)
def test_the_quickstart_answers_at_medium_without_asking(tmp_path: Path, flags: list[str]) -> None:
    """With no flag at all (the README's command) the default level applies: medium."""
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path / "home"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "TOOLDECK_DATA_DIR": str(tmp_path / "data"),
        "TOOLDECK_CONTEXT_URL": "http://127.0.0.1:9",
        "PYTHONPATH": str(REPO_ROOT),
    }
    done = subprocess.run(
        [sys.executable, "-m", "orchestrator", *flags, QUESTION],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("12 * (3 + 4) = 84.\nNoted: your dentist is Dr. Lee.\n")
    assert "Waiting for approval" not in done.stdout
    assert "permission_denied" not in done.stdout + done.stderr
