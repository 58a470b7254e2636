"""``python -m orchestrator`` keeps an oversized result as an artifact under the data directory
by default (a real process), and ``TOOLDECK_RESULT_BUDGET_TOKENS=0`` turns that off."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[3]
QUESTION = "What is 2**30000?"  # 9,031 digits: over a 1,000-token budget (4,000 characters)


def _ask(tmp_path: Path, budget: str) -> tuple[dict[str, Any], Path]:
    data = tmp_path / "data"
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path / "home"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "TOOLDECK_DATA_DIR": str(data),
        "TOOLDECK_CONTEXT_URL": "http://127.0.0.1:9",
        "TOOLDECK_RESULT_BUDGET_TOKENS": budget,
        "PYTHONPATH": str(REPO_ROOT),
    }
    result = subprocess.run(
        [sys.executable, "-m", "orchestrator", "--json", QUESTION],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    out: dict[str, Any] = json.loads(result.stdout)
    return out, data / "artifacts"


def test_an_oversized_result_is_stored_and_read_back(tmp_path: Path) -> None:
    out, artifacts = _ask(tmp_path, "1000")
    (tool_message,) = [m for m in out["messages"] if m["role"] == "tool"]
    summary = json.loads(tool_message["content"])["data"]
    handle = summary["artifact"]
    assert summary["size_chars"] > 4_000 and "read_artifact" in summary["note"]
    assert out["tool_results"][0]["truncated"] is True
    (stored,) = artifacts.iterdir()
    assert stored.name == f"{handle}.json"
    digits = re.search(r"\d{9031}", json.loads(stored.read_text())["text"])  # the whole number, kept exactly
    assert digits is not None and digits.group().startswith("79409035191329") and digits.group().endswith("9376")


def test_a_zero_budget_cuts_instead(tmp_path: Path) -> None:
    out, artifacts = _ask(tmp_path, "0")
    (tool_message,) = [m for m in out["messages"] if m["role"] == "tool"]
    assert "artifact" not in json.loads(tool_message["content"])["data"]
    assert not artifacts.exists()
