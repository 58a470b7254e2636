"""Every print site of the CLIs goes through the terminal-safe helpers (issue 20 item 14).

``tools._terminal`` makes text safe for a terminal (``terminal_safe``, ``print_safe``,
``SafeConsole``; ``tools.cli._context`` wraps them as ``say``, ``print_json``, ``print_table``,
``console``). A bare ``print``, a raw ``sys.stdout.write`` or a plain ``rich`` console in a CLI
module would let a tool's output drive the user's terminal; this test keeps them out.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CLI_MODULES = [
    *sorted((ROOT / "tools" / "cli").glob("*.py")),
    ROOT / "orchestrator" / "cli.py",
    ROOT / "orchestrator" / "_cli_options.py",
    ROOT / "orchestrator" / "_approval_cli.py",
    ROOT / "orchestrator" / "_progress.py",
    ROOT / "orchestrator" / "agents" / "command.py",
]
#: The helpers themselves write to the streams, after making the text safe.
RAW_WRITES_ALLOWED = {"tools/cli/_context.py", "tools/cli/app.py"}


def offences(path: Path, root: Path = ROOT) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    relative = path.relative_to(root).as_posix()
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id == "print":
            found.append(f"{relative}:{node.lineno}: print(...)")
        if isinstance(func, ast.Name) and func.id == "Console":
            found.append(f"{relative}:{node.lineno}: rich Console(...) instead of SafeConsole / console()")
        target = func.value if isinstance(func, ast.Attribute) and func.attr == "write" else None
        stream = target.attr if isinstance(target, ast.Attribute) else None
        if stream in ("stdout", "stderr") and relative not in RAW_WRITES_ALLOWED:
            found.append(f"{relative}:{node.lineno}: sys.{stream}.write(...)")
    return found


def test_cli_modules_print_only_through_the_safe_helpers() -> None:
    assert all(path.exists() for path in CLI_MODULES)
    assert [offence for path in CLI_MODULES for offence in offences(path)] == []


def test_the_check_sees_each_kind_of_offence(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("import sys\nfrom rich.console import Console\nprint('x')\nConsole()\nsys.stdout.write('y')\n")
    assert len(offences(sample, tmp_path)) == 3
