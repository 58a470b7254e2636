"""The README's main job on a plain install: nothing outside the core dependencies imported.

The suite's virtualenv has every extra, so a core module that imports an extra's package
(``regex`` from the web extra, ``httpx2`` from the MCP SDK) would pass every other test and
still break ``pip install -e . && python -m orchestrator ...`` for a new user. Here every
distribution outside the core requirements' closure is made unimportable.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
CORE_ONLY = Path(__file__).with_name("_core_only.py")
QUESTION = "What is 12*(3+4)? Remember that my dentist is Dr. Lee."


def run_core_only(tmp_path: Path, module: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path / "home"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "TOOLDECK_DATA_DIR": str(tmp_path / "data"),
        "PYTHONPATH": str(ROOT),
    }
    command = [sys.executable, str(CORE_ONLY), module, *args]
    return subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False)


def test_the_blocker_blocks_an_extra(tmp_path: Path) -> None:
    (tmp_path / "probe.py").write_text("import mcp\n")  # the mcp extra's SDK
    blocked = subprocess.run(
        [sys.executable, str(CORE_ONLY), "probe"],
        env={**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert blocked.returncode != 0 and "not a core dependency" in blocked.stderr


def test_the_main_job_answers_with_only_the_core_dependencies(tmp_path: Path) -> None:
    result = run_core_only(tmp_path, "orchestrator", QUESTION)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("12 * (3 + 4) = 84.\nNoted: your dentist is Dr. Lee.\n"), result.stdout


def test_tooldeck_lists_its_tools_with_only_the_core_dependencies(tmp_path: Path) -> None:
    result = run_core_only(tmp_path, "tools.cli", "--help")
    assert result.returncode == 0, result.stderr
