"""The workspace tools against symlink races and symlink leaves (issue 20, item 8).

A second process keeps exchanging a workspace directory with a symlink to a directory
outside (``swapper.swapping``) while the tools write, edit, patch, read, glob and grep
through it, as the model would call them. Whatever the interleaving, nothing outside is
written or shown. Each race test also checks that both states were really hit (some
calls succeeded through the directory, some were refused at the link), so a swapper that
never ran can't make it pass.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.unit.tools.builtin.workspace.swapper import swapping
from tools import LocalToolRegistry
from tools.builtin.workspace import GrepTool, Workspace, register_workspace_tools

#: Calls per race test at most; it stops earlier once both outcomes were seen often enough.
MAX_ATTEMPTS = 20_000
ENOUGH = 25
ENOUGH_GREPS = 5  # a grep starts a process: fewer rounds
RG = shutil.which("rg", path="/usr/local/bin:/usr/bin:/bin")
ENGINES = [
    pytest.param(False, id="re2"),
    pytest.param(True, id="ripgrep", marks=pytest.mark.skipif(RG is None, reason="ripgrep is not installed (apt)")),
]


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    root, outside = tmp_path / "ws", tmp_path / "outside"
    (root / "d").mkdir(parents=True)
    outside.mkdir()
    (root / "d" / "target.py").write_text("x = 1\n")
    (root / "d" / "note.txt").write_text("public\n")
    (outside / "target.py").write_text("x = 1\n")
    (outside / "note.txt").write_text("TOPSECRET\n")
    (outside / "only-outside.txt").write_text("TOPSECRET\n")
    return root, outside


def _registry(root: Path) -> LocalToolRegistry:
    registry = LocalToolRegistry()
    register_workspace_tools(registry, Workspace(root))
    return registry


def _outside_untouched(outside: Path) -> None:
    assert sorted(p.name for p in outside.iterdir()) == ["note.txt", "only-outside.txt", "target.py"]
    assert (outside / "target.py").read_text() == "x = 1\n"
    assert (outside / "note.txt").read_text() == "TOPSECRET\n"


def _race(calls: list[tuple[str, dict[str, Any]]], registry: LocalToolRegistry) -> tuple[int, int]:
    """Run ``calls`` round-robin until both outcomes were seen ENOUGH times; (ok, refused)."""
    ok = refused = 0
    for attempt in range(MAX_ATTEMPTS):
        name, arguments = calls[attempt % len(calls)]
        result = registry.call_tool(name, **arguments)
        if result.status == "success":
            ok += 1
        else:
            assert result.error is not None and result.error.type == "validation_error", result.error
            refused += 1
        if ok >= ENOUGH and refused >= ENOUGH:
            break
    return ok, refused


def test_writes_never_land_outside_while_a_directory_flips_to_a_symlink(layout: tuple[Path, Path]) -> None:
    root, outside = layout
    registry = _registry(root)
    diff = "--- a/d/target.py\n+++ b/d/target.py\n@@ -1 +1 @@\n-x = 2\n+x = 1\n"
    calls = [
        ("write", {"path": "d/new.txt", "content": "written\n"}),
        ("write", {"path": "d/target.py", "content": "x = 1\n"}),
        ("edit", {"path": "d/target.py", "old_string": "x = 1", "new_string": "x = 2"}),
        ("patch", {"diff": diff}),
    ]
    with swapping(root / "d", outside):
        ok, refused = _race(calls, registry)
    assert ok >= ENOUGH and refused >= ENOUGH, (ok, refused)
    _outside_untouched(outside)
    assert not (root / "d" / "new.txt").is_symlink()


def test_reads_never_show_outside_while_a_directory_flips_to_a_symlink(layout: tuple[Path, Path]) -> None:
    root, outside = layout
    registry = _registry(root)
    ok = refused = 0
    with swapping(root / "d", outside):
        for _ in range(MAX_ATTEMPTS):
            read = registry.call_tool("read", path="d/note.txt")
            glob = registry.call_tool("glob", pattern="**/*.txt")
            assert glob.status == "success", glob.error
            shown = repr([read.data, glob.data])
            assert "TOPSECRET" not in shown and "only-outside" not in shown, shown
            if read.status == "success":
                ok += 1
            else:
                refused += 1
            if ok >= ENOUGH and refused >= ENOUGH:
                break
    assert ok >= ENOUGH and refused >= ENOUGH, (ok, refused)


@pytest.mark.parametrize("rg", ENGINES)
def test_grep_never_shows_outside_while_a_directory_flips_to_a_symlink(layout: tuple[Path, Path], rg: bool) -> None:
    root, outside = layout
    registry = LocalToolRegistry()
    registry.register(GrepTool(Workspace(root), ripgrep=rg))
    found = missed = 0
    with swapping(root / "d", outside):
        for _ in range(MAX_ATTEMPTS // 20):
            grep = registry.call_tool("grep", pattern="TOPSECRET|public")
            assert grep.status == "success", grep.error
            assert "TOPSECRET" not in repr(grep.data), grep.data
            if any(m["path"] == "d/note.txt" for m in grep.data["matches"]):  # else it was at d.link
                found += 1
            else:
                missed += 1
            if found >= ENOUGH_GREPS and missed >= ENOUGH_GREPS:
                break
    assert found >= ENOUGH_GREPS and missed >= ENOUGH_GREPS, (found, missed)


def test_a_symlink_leaf_is_never_written_through(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "real.py").write_text("x = 1\n")
    (root / "alias.py").symlink_to("real.py")
    registry = _registry(root)
    for name, arguments in [
        ("write", {"path": "alias.py", "content": "y\n"}),
        ("edit", {"path": "alias.py", "old_string": "x = 1", "new_string": "x = 2"}),
        ("patch", {"diff": "--- a/alias.py\n+++ b/alias.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"}),
        ("patch", {"diff": "--- a/alias.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-x = 1\n"}),
    ]:
        result = registry.call_tool(name, **arguments)
        assert result.status == "error" and result.error is not None, (name, result)
        assert "is a symlink (to 'real.py')" in result.error.message
    assert (root / "real.py").read_text() == "x = 1\n"
    assert (root / "alias.py").is_symlink()
    read = registry.call_tool("read", path="alias.py")  # reading follows a link that stays inside
    assert read.status == "success" and read.data["path"] == "real.py"


def test_a_directory_symlink_inside_is_not_written_through_but_read(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "m.py").write_text("x = 1\n")
    (root / "alias").symlink_to("pkg", target_is_directory=True)
    registry = _registry(root)
    result = registry.call_tool("write", path="alias/new.py", content="y\n")
    assert result.status == "error" and result.error is not None
    assert "'alias' is a symlink" in result.error.message
    assert not (root / "pkg" / "new.py").exists()
    assert registry.call_tool("read", path="alias/m.py").data["path"] == "pkg/m.py"
    assert registry.call_tool("glob", pattern="*.py", path="alias").data["files"] == ["pkg/m.py"]


@pytest.mark.parametrize(
    "target",
    ["../outside", "/", "sub/../../outside", "loop", "self/../outside"],
)
def test_reads_through_links_that_leave_are_refused(tmp_path: Path, target: str) -> None:
    root = tmp_path / "ws"
    (root / "sub").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("TOPSECRET\n")
    (root / "self").symlink_to(".", target_is_directory=True)
    (root / "loop").symlink_to("loop")
    (root / "link").symlink_to(target)
    registry = _registry(root)
    for name, arguments in [
        ("read", {"path": "link/secret.txt"}),
        ("glob", {"pattern": "*", "path": "link"}),
        ("grep", {"pattern": "TOPSECRET", "path": "link"}),
    ]:
        result = registry.call_tool(name, **arguments)
        assert result.status == "error", (name, target, result)
        assert "TOPSECRET" not in repr(result)
    grep = registry.call_tool("grep", pattern="TOPSECRET")
    assert grep.data["matches"] == []


def test_dotdot_is_still_refused_for_writers(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    registry = _registry(root)
    for path in ("../evil.txt", "a/../../evil.txt", str(tmp_path / "evil.txt")):
        result = registry.call_tool("write", path=path, content="x")
        assert result.status == "error" and result.error is not None
        assert "outside the workspace" in result.error.message
    assert registry.call_tool("write", path="a/../ok.txt", content="x").data["path"] == "ok.txt"
    assert not (tmp_path / "evil.txt").exists()
