"""``grep`` and ``glob`` are bounded (issue 20, items 6 and 9): linear-time RE2 within size
limits, a child process killed at the call's timeout, and bad patterns as validation
errors that never trip the breaker. Every ``grep`` test runs on both engines: the RE2
worker, and ripgrep when it is installed."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path
from typing import Any

import pytest

from tools import LocalToolRegistry
from tools.builtin.workspace import GlobTool, GrepTool, Workspace, WorkspaceLimits
from tools.builtin.workspace._grepengine import _verified

RG = shutil.which("rg", path="/usr/local/bin:/usr/bin:/bin")
ENGINES = [
    pytest.param(False, id="re2"),
    pytest.param(True, id="ripgrep", marks=pytest.mark.skipif(RG is None, reason="ripgrep is not installed (apt)")),
]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "src" / "deep").mkdir(parents=True)
    (ws / "src" / "app.py").write_text("def add_total(a, b):\n    return a + b\n\nTOTAL = add_total(1, 2)\n")
    (ws / "src" / "deep" / "mod.py").write_text("# nothing\nclass Total:\n    pass\n")
    (ws / "README.md").write_text("Add totals.\r\nSee src/app.py\n")
    (ws / "blob.bin").write_bytes(b"\x00total\x00" * 10)
    return ws


def _registry(root: Path, rg: bool, **limits: Any) -> LocalToolRegistry:
    registry = LocalToolRegistry()
    workspace = Workspace(root, limits=WorkspaceLimits(**limits))
    registry.register(GrepTool(workspace, ripgrep=rg))
    registry.register(GlobTool(workspace))
    return registry


def _error(registry: LocalToolRegistry, tool: str, **arguments: Any) -> tuple[str, str, bool | None]:
    result = registry.call_tool(tool, **arguments)
    assert result.status == "error" and result.error is not None, result
    return result.error.type, result.error.message, result.error.trips_breaker


@pytest.mark.parametrize("rg", ENGINES)
def test_both_engines_find_the_same_lines(root: Path, rg: bool) -> None:
    registry = _registry(root, rg)
    found = registry.call_tool("grep", pattern=r"(?i)\btotal\b|def \w+_total").data
    assert found["engine"] == ("ripgrep" if rg else "re2")
    assert [(m["path"], m["line"], m["text"]) for m in found["matches"]] == [
        ("src/app.py", 1, "def add_total(a, b):"),
        ("src/app.py", 4, "TOTAL = add_total(1, 2)"),
        ("src/deep/mod.py", 2, "class Total:"),
    ]
    sub = registry.call_tool("grep", pattern="^TOTAL = ", path="src").data["matches"]
    assert sub == [{"path": "src/app.py", "line": 4, "text": "TOTAL = add_total(1, 2)"}]
    one = registry.call_tool("grep", pattern="pass$", path="src/deep/mod.py").data["matches"]
    assert one == [{"path": "src/deep/mod.py", "line": 3, "text": "    pass"}]
    crlf = registry.call_tool("grep", pattern=r"add TOTALS\.", ignore_case=True).data["matches"]
    assert crlf == [{"path": "README.md", "line": 1, "text": "Add totals."}]
    empty = "\n\nsecond empty line above\n\n"
    (root / "empty.txt").write_text(empty)
    lines = registry.call_tool("grep", pattern="^$", path="empty.txt").data["matches"]
    assert [m["line"] for m in lines] == [1, 2, 4]
    only_py = registry.call_tool("grep", pattern="a", include="mod.py").data["matches"]
    assert {m["path"] for m in only_py} == {"src/deep/mod.py"}
    (root / "src" / "{a,b}[x.py").write_text("a\n")
    literal = registry.call_tool("grep", pattern="a", include="{a,b}[x.py").data["matches"]
    assert literal == [{"path": "src/{a,b}[x.py", "line": 1, "text": "a"}]
    in_deep = registry.call_tool("grep", pattern="a", include="src/*/[l-n]od.py").data["matches"]
    assert {m["path"] for m in in_deep} == {"src/deep/mod.py"}


@pytest.mark.parametrize("rg", ENGINES)
def test_many_matches_are_cut_at_the_limit_with_line_numbers_right(root: Path, rg: bool) -> None:
    (root / "many.txt").write_text("".join(f"line {i}\n" if i % 3 else f"hit {i}\n" for i in range(30_000)))
    registry = _registry(root, rg, max_results=50)
    found = registry.call_tool("grep", pattern=r"^hit \d+$", path="many.txt").data
    assert found["truncated"] is True
    assert [(m["line"], m["text"]) for m in found["matches"]] == [(i + 1, f"hit {i}") for i in range(0, 150, 3)]


@pytest.mark.parametrize("rg", ENGINES)
@pytest.mark.parametrize(
    ("pattern", "says"),
    [
        ("x{4294967294}", "at most 1000"),
        ("x{2147483648,}", "at most 1000"),
        ("x{1001}", "at most 1000"),
        ("(x{1000}){1000}", "too large"),
        (r"\pL{1000}", "too large"),
        ("a" * 1001, "over the 1000 allowed"),
        ("(unclosed", "not a valid regular expression"),
        (r"(a)\1", "not a valid regular expression"),
    ],
)
def test_oversized_or_invalid_patterns_are_validation_errors(root: Path, rg: bool, pattern: str, says: str) -> None:
    kind, message, trips = _error(_registry(root, rg), "grep", pattern=pattern)
    assert (kind, trips) == ("validation_error", False)
    assert says in message


@pytest.mark.parametrize("rg", ENGINES)
@pytest.mark.parametrize("pattern", ["(a+)+$", "(a|aa)+b", "(x+x+)+y", "^(a|a?)+$"])
def test_catastrophic_backtracking_patterns_finish(root: Path, rg: bool, pattern: str) -> None:
    (root / "long.txt").write_text("a" * 200_000 + "!\n" + "x" * 50_000 + "\n")
    found = _registry(root, rg).call_tool("grep", pattern=pattern, path="long.txt")
    assert found.status == "success" and found.data["matches"] == [], found.error


def _worker_children() -> list[int]:
    """Live children of this process running the grep worker or a stand-in ripgrep."""
    pids = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            status = Path(f"/proc/{entry.name}/status").read_text()
            cmdline = Path(f"/proc/{entry.name}/cmdline").read_bytes()
        except OSError:
            continue
        ppid = int(next(line.split()[1] for line in status.splitlines() if line.startswith("PPid:")))
        if ppid == os.getpid() and (b"_grepworker" in cmdline or b"slow-rg" in cmdline):
            pids.append(int(entry.name))
    return pids


def test_a_search_past_its_time_is_stopped_and_its_process_killed(root: Path) -> None:
    (root / "big.txt").write_text("ab" * 1_000_000 + "\n")  # RE2 needs minutes for this one
    registry = _registry(root, False, grep_timeout_s=0.5)
    kind, message, trips = _error(registry, "grep", pattern="(.*){1000}$", path="big.txt")
    assert (kind, trips) == ("timeout", False)
    assert "grep stopped after 0.5 s" in message
    assert _worker_children() == []


def test_a_hung_ripgrep_is_killed_at_the_time_limit(root: Path, tmp_path: Path) -> None:
    slow = tmp_path / "slow-rg"
    slow.write_text("#!/bin/sh\nexec sleep 600\n")  # fault injection: an engine that never answers
    slow.chmod(slow.stat().st_mode | stat.S_IXUSR)
    registry = LocalToolRegistry()
    registry.register(GrepTool(Workspace(root, limits=WorkspaceLimits(grep_timeout_s=0.5)), ripgrep=str(slow)))
    kind, _, trips = _error(registry, "grep", pattern="x")
    assert (kind, trips) == ("timeout", False)
    assert _worker_children() == []


def test_the_registry_bound_comes_after_the_tools_own_deadline(root: Path) -> None:
    limits = WorkspaceLimits(grep_timeout_s=3.0)
    assert GrepTool(Workspace(root, limits=limits), ripgrep=False).timeout == 3.0 + 5.0


@pytest.mark.parametrize("rg", ENGINES)
def test_a_bad_class_in_an_include_glob_is_a_validation_error(root: Path, rg: bool) -> None:
    registry = _registry(root, rg)
    kind, message, trips = _error(registry, "grep", pattern="x", include="[z-a].py")
    assert (kind, trips) == ("validation_error", False)
    assert "'z-a', which is backwards" in message
    assert "over the 1000 allowed" in _error(registry, "grep", pattern="x", include="*" * 1001)[1]


@pytest.mark.parametrize("tool", ["glob", "grep"])
def test_bad_classes_never_open_the_breaker(root: Path, tool: str) -> None:
    registry = _registry(root, False)
    arguments = {"pattern": "[z-a]*"} if tool == "glob" else {"pattern": "x", "include": "[9-0]"}
    for _ in range(12):
        kind, _, trips = _error(registry, tool, **arguments)
        assert (kind, trips) == ("validation_error", False)
    good = {"pattern": "**/*.py"} if tool == "glob" else {"pattern": "pass"}
    assert registry.call_tool(tool, **good).status == "success"


def test_glob_classes_ranges_and_negation(root: Path) -> None:
    registry = _registry(root, False)
    assert registry.call_tool("glob", pattern="src/[a-c]*.py").data["files"] == ["src/app.py"]
    assert registry.call_tool("glob", pattern="[!s]*").data["files"] == ["README.md", "blob.bin"]
    assert registry.call_tool("glob", pattern="**/[]m]od.py").data["files"] == ["src/deep/mod.py"]
    assert registry.call_tool("glob", pattern="[unclosed").data["files"] == []


def test_a_glob_that_backtracks_exponentially_elsewhere_finishes(root: Path) -> None:
    deep = root.joinpath(*["a" * 60] * 3)
    deep.mkdir(parents=True)
    (deep / ("a" * 100)).write_text("x")
    registry = LocalToolRegistry()
    registry.register(GlobTool(Workspace(root)), timeout=60)  # a backtracking matcher would hang here
    found = registry.call_tool("glob", pattern="**a" * 25 + "b")
    assert found.status == "success" and found.data["files"] == []


def test_ripgrep_lines_are_kept_only_when_the_same_bytes_are_inside(tmp_path: Path) -> None:
    root, outside = tmp_path / "ws", tmp_path / "outside"
    (root / "d").mkdir(parents=True)
    outside.mkdir()
    (root / "d" / "note.txt").write_text("public\nsecond line\n")
    (outside / "note.txt").write_text("TOPSECRET\n")
    (root / "link").symlink_to(outside, target_is_directory=True)
    (root / "alias.txt").symlink_to("d/note.txt")
    reported = [
        ("d/note.txt", 1, 0, b"public"),
        ("d/note.txt", 2, 7, b"second line"),
        ("d/note.txt", 1, 0, b"TOPSECRET"),  # read outside during a swap: not what is inside
        ("link/note.txt", 1, 0, b"TOPSECRET"),  # through a symlink
        ("alias.txt", 1, 0, b"public"),  # a symlink leaf
        ("../outside/note.txt", 1, 0, b"TOPSECRET"),
        ("missing.txt", 1, 0, b"x"),
    ]
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        kept = _verified(reported, fd, False, 4)
    finally:
        os.close(fd)
    assert kept == [("d/note.txt", 1, "publ"), ("d/note.txt", 2, "seco")]
