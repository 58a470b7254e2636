"""The Python examples of docs/interop.md (and the MCP client-handlers example of docs/mcp.md)
run as written, each in a fresh interpreter, offline."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
FENCE = re.compile(r"^```python\n(?P<body>.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


def _blocks(name: str, containing: str = "") -> list[tuple[str, str]]:
    text = (ROOT / "docs" / name).read_text(encoding="utf-8")
    return [
        (f"{name}:{text.count(chr(10), 0, match.start('body')) + 1}", match.group("body"))
        for match in FENCE.finditer(text)
        if containing in match.group("body")
    ]


BLOCKS = _blocks("interop.md") + _blocks("mcp.md", containing="MCPClientHandlers(sampling=")


def test_the_documents_have_their_examples() -> None:
    assert len(BLOCKS) == 6, [where for where, _ in BLOCKS]


@pytest.mark.parametrize(("where", "code"), BLOCKS, ids=[where for where, _ in BLOCKS])
def test_example_runs_as_written(where: str, code: str, tmp_path: Path) -> None:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": str(ROOT),
        "HOME": str(tmp_path),
        "NO_PROXY": "*",
        "TMPDIR": str(tmp_path),
    }
    result = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, f"the example at {where} failed:\n{result.stderr[-3000:]}"
