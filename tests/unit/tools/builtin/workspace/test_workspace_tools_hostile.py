"""Every workspace tool, called as the model calls it, with hostile input."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tools import LocalToolRegistry
from tools.builtin.workspace import SkillLibrary, TodoStore, Workspace, register_workspace_tools
from tools.routing import CODING_TOOL_MANUALS_BY_NAME


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("x = 1\ny = 2\nx = 1\n")
    (tmp_path / "secret.txt").write_text("secret")
    return root


@pytest.fixture
def registry(ws: Path) -> LocalToolRegistry:
    reg = LocalToolRegistry()
    register_workspace_tools(reg, Workspace(ws, todos=TodoStore(), skills=SkillLibrary()))
    return reg


def error(registry: LocalToolRegistry, tool: str, **arguments: Any) -> str:
    result = registry.call_tool(tool, **arguments)
    assert result.status == "error", result
    assert result.error is not None
    return result.error.message


def test_each_tool_ships_its_coding_manual(registry: LocalToolRegistry) -> None:
    for name in registry.names():
        manual = registry.get_manual(name)
        assert manual is not None
        assert manual.category == CODING_TOOL_MANUALS_BY_NAME[name].category


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("read", {"path": "../secret.txt"}),
        ("write", {"path": "../evil.txt", "content": "x"}),
        ("edit", {"path": "src/../../secret.txt", "old_string": "secret", "new_string": "x"}),
        ("glob", {"pattern": "*", "path": ".."}),
        ("grep", {"pattern": "secret", "path": "../"}),
    ],
)
def test_dotdot_is_refused_naming_the_path(registry: LocalToolRegistry, tool: str, arguments: dict[str, Any]) -> None:
    message = error(registry, tool, **arguments)
    assert "outside the workspace" in message
    assert repr(arguments["path"]) in message


def test_absolute_paths_outside_are_refused_inside_are_fine(registry: LocalToolRegistry, ws: Path) -> None:
    assert "outside the workspace" in error(registry, "read", path="/etc/passwd")
    assert registry.call_tool("read", path=str(ws / "src" / "app.py")).status == "success"


def test_symlinks_that_leave_are_refused(registry: LocalToolRegistry, ws: Path, tmp_path: Path) -> None:
    (ws / "link").symlink_to(tmp_path / "secret.txt")
    (ws / "dirlink").symlink_to(tmp_path, target_is_directory=True)
    assert "through a symlink" in error(registry, "read", path="link")
    assert "through a symlink" in error(registry, "write", path="dirlink/new.txt", content="x")
    assert not (tmp_path / "new.txt").exists()
    grep = registry.call_tool("grep", pattern="secret").data
    assert grep["matches"] == []  # the walk does not follow the links


def test_binary_files_are_refused(registry: LocalToolRegistry, ws: Path) -> None:
    (ws / "blob.bin").write_bytes(b"\x00\x01\x02" * 100)
    assert "binary" in error(registry, "read", path="blob.bin")
    assert "binary" in error(registry, "edit", path="blob.bin", old_string="a", new_string="b")


def test_a_ten_megabyte_file_is_read_in_numbered_pages(registry: LocalToolRegistry, ws: Path) -> None:
    line = "y" * 99 + "\n"
    (ws / "big.txt").write_text(line * 100_000)  # 10 MB
    first = registry.call_tool("read", path="big.txt").data
    assert first["first_line"] == 1 and first["last_line"] == 2000 and first["next_offset"] == 2001
    assert first["content"].splitlines()[0] == "     1| " + "y" * 99
    last = registry.call_tool("read", path="big.txt", offset=99_990).data
    assert (last["last_line"], last["total_lines"], last["next_offset"]) == (100_000, 100_000, None)
    assert "over the" in error(registry, "edit", path="big.txt", old_string="y", new_string="z")


def test_ambiguous_edits_are_refused_with_the_lines(registry: LocalToolRegistry, ws: Path) -> None:
    message = error(registry, "edit", path="src/app.py", old_string="x = 1", new_string="x = 2")
    assert "occurs 2 times" in message and "lines 1, 3" in message
    assert "not found" in error(registry, "edit", path="src/app.py", old_string="z = 9", new_string="q")
    assert (ws / "src" / "app.py").read_text() == "x = 1\ny = 2\nx = 1\n"
    done = registry.call_tool("edit", path="src/app.py", old_string="x = 1", new_string="x = 2", replace_all=True)
    assert done.data["replacements"] == 2


def test_a_patch_that_half_applies_applies_nothing(registry: LocalToolRegistry, ws: Path) -> None:
    (ws / "b.py").write_text("a\nb\nc\n")
    diff = (
        "--- a/src/app.py\n+++ b/src/app.py\n@@ -2,1 +2,1 @@\n-y = 2\n+y = 3\n"
        "--- a/b.py\n+++ b/b.py\n@@ -1,2 +1,2 @@\n a\n-NOT THERE\n+b2\n"
    )
    message = error(registry, "patch", diff=diff)
    assert "Hunk 1 of 'b.py' does not match" in message and "Nothing was changed" in message
    assert (ws / "src" / "app.py").read_text() == "x = 1\ny = 2\nx = 1\n"
    assert (ws / "b.py").read_text() == "a\nb\nc\n"
    assert "No unified diff" in error(registry, "patch", diff="just some text")
    good = registry.call_tool("patch", diff=diff.replace("NOT THERE", "b"))
    assert good.data["changed"] == ["src/app.py", "b.py"]
    assert (ws / "b.py").read_text() == "a\nb2\nc\n"


def test_patch_creates_and_deletes_files(registry: LocalToolRegistry, ws: Path) -> None:
    diff = "--- /dev/null\n+++ b/new.py\n@@ -0,0 +1,2 @@\n+one\n+two\n"
    assert registry.call_tool("patch", diff=diff).data["created"] == ["new.py"]
    assert (ws / "new.py").read_text() == "one\ntwo\n"
    delete = "--- a/new.py\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-one\n-two\n"
    assert registry.call_tool("patch", diff=delete).data["deleted"] == ["new.py"]


def test_grep_refuses_a_bad_pattern_and_finishes_a_catastrophic_one(ws: Path) -> None:
    (ws / "slow.txt").write_text("a" * 40 + "!\n")
    reg = LocalToolRegistry()
    register_workspace_tools(reg, Workspace(ws))
    assert "not a valid regular expression" in error(reg, "grep", pattern="(unclosed")
    result = reg.call_tool("grep", pattern="(a|aa)+b")  # exponential for a backtracking engine
    assert result.status == "success" and result.data["matches"] == []


def test_glob_does_not_follow_symlinks_out(registry: LocalToolRegistry, ws: Path, tmp_path: Path) -> None:
    (ws / "out").symlink_to(tmp_path, target_is_directory=True)
    files = registry.call_tool("glob", pattern="**/*.txt").data["files"]
    assert files == []
    assert registry.call_tool("glob", pattern="**/*.py").data["files"] == ["src/app.py"]


def test_write_scope_refuses_production_paths(ws: Path) -> None:
    reg = LocalToolRegistry()
    register_workspace_tools(reg, Workspace(ws, write_scope=("tests/*",)))
    assert "may only change files matching tests/*" in error(reg, "write", path="src/app.py", content="x")
    assert reg.call_tool("write", path="tests/test_x.py", content="x").status == "success"


def test_skill_and_todo_tools(registry: LocalToolRegistry) -> None:
    skill = registry.call_tool("skill", name="code-review").data
    assert "NO APPROVAL WITHOUT FULL REVIEW FIRST" in skill["content"]
    assert skill["references"] == ["security-patterns.md"]
    assert "Skills: approach-evaluation" in error(registry, "skill", name="nope")
    todos = [{"content": "write tests", "status": "in_progress"}]
    assert registry.call_tool("todowrite", todos=todos).data == {"todos": todos}
    assert registry.call_tool("todoread").data == {"todos": todos}


def test_nul_bytes_and_empty_paths(registry: LocalToolRegistry) -> None:
    assert "NUL" in error(registry, "read", path="a\x00b")
    assert "empty" in error(registry, "read", path=" ")
    assert os.path.exists("/etc/passwd")


def test_fifos_are_never_opened(registry: LocalToolRegistry, ws: Path) -> None:
    os.mkfifo(ws / "pipe")  # opening one to read would block until a writer comes
    assert "not a regular file" in error(registry, "read", path="pipe")
    assert "not a regular file" in error(registry, "write", path="pipe", content="x")
    assert "not a regular file" in error(registry, "edit", path="pipe", old_string="a", new_string="b")
    assert registry.call_tool("grep", pattern="x").data["matches"] == [
        {"path": "src/app.py", "line": 1, "text": "x = 1"},
        {"path": "src/app.py", "line": 3, "text": "x = 1"},
    ]
