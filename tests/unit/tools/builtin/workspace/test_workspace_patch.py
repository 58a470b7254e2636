"""``patch`` finds hunks in linear time and within the call's time (issue 20, item 7).

Speed itself is measured by ``scripts/bench_workspace.py``; these tests pin what the
linear search must still do: the nearest occurrence, the drift of earlier hunks, order,
insertion points, a 5 MB file, and the deadline (past it nothing is written).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tools import LocalToolRegistry
from tools.builtin.workspace import PatchTool, Workspace, WorkspaceLimits, parse_diff
from tools.builtin.workspace.patch import apply_hunks
from tools.errors import InvalidArgumentsError


def _registry(root: Path, **limits: Any) -> LocalToolRegistry:
    registry = LocalToolRegistry()
    registry.register(PatchTool(Workspace(root, limits=WorkspaceLimits(**limits))))
    return registry


def _apply(text: str, diff: str) -> str:
    (patch,) = parse_diff(diff)
    return apply_hunks(text, patch, "'f.py'")


def test_the_nearest_occurrence_to_the_stated_line_is_changed() -> None:
    text = "".join(f"block {i}\nsame\nsame\n" for i in range(10))
    out = _apply(text, "--- a/f.py\n+++ b/f.py\n@@ -20,2 +20,2 @@\n same\n-same\n+changed\n")
    lines = out.splitlines()
    assert lines.count("changed") == 1
    assert lines.index("changed") == 20  # block 6 is at line 19: 'same' at 20 and 21 (0-based 19, 20)


def test_a_later_hunk_follows_the_drift_of_the_one_before() -> None:
    text = "pad\n" * 3 + "".join(f"head {i}\nctx\nctx\n" for i in range(6))
    diff = (
        "--- a/f.py\n+++ b/f.py\n"
        "@@ -1,1 +1,1 @@\n-head 0\n+HEAD 0\n"  # really at line 4: a drift of +3
        "@@ -4,2 +4,2 @@\n ctx\n-ctx\n+CTX\n"  # 'ctx ctx' occurs at 5 and 8: with the drift, 8 is nearest
    )
    lines = _apply(text, diff).splitlines()
    assert lines[3] == "HEAD 0" and lines[4:6] == ["ctx", "ctx"]
    assert lines[6:9] == ["head 1", "ctx", "CTX"]


def test_hunks_apply_in_order_and_never_overlap() -> None:
    text = "a\nb\nc\nd\n"
    backwards = "--- a/f.py\n+++ b/f.py\n@@ -3,1 +3,1 @@\n-c\n+C\n@@ -1,1 +1,1 @@\n-a\n+A\n"
    with pytest.raises(InvalidArgumentsError, match=r"Hunk 2 of 'f\.py' does not match"):
        _apply(text, backwards)
    ordered = "--- a/f.py\n+++ b/f.py\n@@ -1,1 +1,1 @@\n-a\n+A\n@@ -3,1 +3,1 @@\n-c\n+C\n"
    assert _apply(text, ordered) == "A\nb\nC\nd\n"
    same_line_twice = "--- a/f.py\n+++ b/f.py\n@@ -2,1 +2,1 @@\n-b\n+B\n@@ -2,1 +2,1 @@\n-b\n+BB\n"
    with pytest.raises(InvalidArgumentsError, match=r"Hunk 2 of 'f\.py' does not match"):
        _apply(text, same_line_twice)


def test_pure_insertions_go_after_the_stated_line() -> None:
    text = "".join(f"{i}\n" for i in range(1, 8))
    out = _apply(text, "--- a/f.py\n+++ b/f.py\n@@ -5,0 +6,2 @@\n+new a\n+new b\n")
    assert out.splitlines() == ["1", "2", "3", "4", "5", "new a", "new b", "6", "7"]
    assert _apply("x\n", "--- a/f.py\n+++ b/f.py\n@@ -0,0 +1 @@\n+first\n") == "first\nx\n"


def test_lines_no_hunk_expects_can_never_be_part_of_a_match() -> None:
    text = "keep\n\x00odd\nkeep\n"
    out = _apply(text, "--- a/f.py\n+++ b/f.py\n@@ -3,1 +3,1 @@\n-keep\n+kept\n")
    assert out == "keep\n\x00odd\nkept\n"
    with pytest.raises(InvalidArgumentsError, match="does not match"):
        _apply(text, "--- a/f.py\n+++ b/f.py\n@@ -1,2 +1,2 @@\n keep\n-other\n+x\n")


def test_a_five_megabyte_file_patches_exactly(tmp_path: Path) -> None:
    lines = [f"line {i:07d} " + "x" * 36 for i in range(100_000)]  # 5.0 MB
    (tmp_path / "big.txt").write_text("\n".join(lines) + "\n")
    targets = [10, 25_000, 50_000, 99_990]
    diff = "--- a/big.txt\n+++ b/big.txt\n"
    for t in targets:  # stated 7 lines off: the nearest occurrence is found
        diff += f"@@ -{t + 7},3 +{t + 7},3 @@\n {lines[t - 1]}\n-{lines[t]}\n+changed {t}\n {lines[t + 1]}\n"
    result = _registry(tmp_path).call_tool("patch", diff=diff)
    assert result.status == "success", result.error
    expected = list(lines)
    for t in targets:
        expected[t] = f"changed {t}"
    assert (tmp_path / "big.txt").read_text() == "\n".join(expected) + "\n"


def test_past_its_deadline_a_patch_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    registry = _registry(tmp_path, patch_timeout_s=1e-9)
    result = registry.call_tool("patch", diff="--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n")
    assert result.status == "error" and result.error is not None
    assert (result.error.type, result.error.trips_breaker) == ("timeout", False)
    assert "nothing was changed" in result.error.message
    assert (tmp_path / "a.py").read_text() == "x = 1\n"
    assert PatchTool(Workspace(tmp_path, limits=WorkspaceLimits(patch_timeout_s=7))).timeout == 7 + 5.0


def test_a_patched_file_over_the_size_limit_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x\n")
    diff = "--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x\n+" + "y" * 200 + "\n"
    result = _registry(tmp_path, max_file_bytes=100).call_tool("patch", diff=diff)
    assert result.status == "error" and result.error is not None
    assert "over the 100 bytes limit" in result.error.message
    assert (tmp_path / "a.py").read_text() == "x\n"
