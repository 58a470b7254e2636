"""``python -m orchestrator --base-url ... --tool-choice required``: a real model makes a tool call.

The command a user runs against the llama.cpp server documented in docs/orchestrator.md
(the same server this fixture starts), with the user's own tools (``--registry``, the README's
kind of ``mytools.py``). llama-cpp-python's ``chatml-function-calling`` format rejects
``tool_choice="required"`` with HTTP 500; the client then asks with ``"auto"``, which this
model answers with a tool call. (Offering every builtin too made the prompt ~7,200 tokens:
two minutes of CPU inference, the longest test of the suite, for the same path.)
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.llm, pytest.mark.timeout(900)]  # CPU inference on a shared machine
ROOT = Path(__file__).resolve().parents[3]


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


MYTOOLS = '''
from tools import LocalToolRegistry, ToolCategory, ToolManual

SAFE = {"risk": "safe", "mutating": False, "category": ToolCategory.COMPUTE}


def build() -> LocalToolRegistry:
    registry = LocalToolRegistry()

    @registry.tool(manual=ToolManual(name="add", **SAFE))
    def add(a: int, b: int) -> int:
        """Add two integers.

        Args:
            a: The first number.
            b: The second number.
        """
        return a + b

    @registry.tool(manual=ToolManual(name="multiply", **SAFE))
    def multiply(a: int, b: int) -> int:
        """Multiply two integers.

        Args:
            a: The first number.
            b: The second number.
        """
        return a * b

    return registry
'''


def test_required_tool_choice_makes_a_real_tool_call(llama_base_url: str, tmp_path: Path) -> None:
    (tmp_path / "mytools.py").write_text(MYTOOLS)
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path / "home"),
        "PYTHONPATH": str(ROOT),
        "TOOLDECK_DATA_DIR": str(tmp_path / "data"),
        "TOOLDECK_CONTEXT_URL": f"http://127.0.0.1:{closed_port()}",
        "TOOLDECK_MODEL_TIMEOUT": "800",  # generous: CPU inference on a loaded machine
    }
    command = [sys.executable, "-m", "orchestrator", "--base-url", llama_base_url, "--model", "smollm2"]
    command += ["--registry", "mytools:build", "--no-builtins"]
    command += ["--tool-choice", "required", "--max-iterations", "2", "--json", "What is 2+3?"]
    result = subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=850, check=False)
    assert result.returncode in (0, 4), result.stderr  # answered, or still calling at the budget
    run = json.loads(result.stdout)
    first_turn = next(m for m in run["messages"] if m["role"] == "assistant")
    assert first_turn.get("tool_calls"), first_turn
    assert run["tool_results"], run
    names = {t["function"]["name"] for t in first_turn["tool_calls"]}
    assert names <= {r["name"] for r in run["tool_results"]} and names <= {"add", "multiply"}
    assert "rejected tool_choice='required'" in result.stderr  # the fallback is said, not hidden
