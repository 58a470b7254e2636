"""A tool that hangs past its timeout never keeps the process from exiting (real subprocess)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

SCRIPT = textwrap.dedent(
    """
    import json, time
    from orchestrator import ToolsNode
    from tools import LocalToolRegistry

    def hang() -> str:
        '''Never returns in time.'''
        time.sleep(3600)
        return "late"

    registry = LocalToolRegistry()
    registry.register(hang)
    node = ToolsNode(registry, call_timeout=0.1)
    calls = [{"id": f"c{i}", "type": "function", "function": {"name": "hang", "arguments": "{}"}}
             for i in range(3)]
    update = node({"messages": [{"role": "assistant", "content": None, "tool_calls": calls}]})
    print(json.dumps([r["error_type"] for r in update["tool_results"]]))
    """
)


def test_hung_tool_does_not_block_interpreter_exit(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[3]
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=60,  # the tool sleeps an hour: only daemon workers let this return
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == '["timeout", "timeout", "timeout"]'
