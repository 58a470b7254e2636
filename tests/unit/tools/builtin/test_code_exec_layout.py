"""The sandbox's parts: the allow-listed layout, bwrap's command line, masks, memory plans."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

from tools.builtin.code_executor._bwrap import bwrap_argv, prlimit_argv
from tools.builtin.code_executor._layout import (
    Layout,
    build_layout,
    reachable_by_others,
    revealing,
    sandbox_executable,
    system_tree,
    world_writable_dirs,
)
from tools.builtin.code_executor._masks import _find_argv, _walk, masked_entries
from tools.builtin.code_executor._memory import (
    NODE_FLAGS,
    BudgetTooSmallError,
    CgroupParent,
    MemoryPlan,
    enter_argv,
    own_cgroup,
    plan_memory,
)

MIB = 1024 * 1024


def test_the_layout_binds_the_system_trees_and_nothing_else() -> None:
    layout = build_layout(hidden_dirs=["/nonexistent"], disk_mb=32, home=None)
    assert "/usr" in layout.system and "/etc" in layout.system
    scratch = dict(layout.scratch)
    assert {path: scratch.get(path) for path in ("/tmp", "/var/tmp", "/dev/shm")} == {
        "/tmp": 32, "/var/tmp": 32, "/dev/shm": 32,
    }  # fmt: skip
    others = [path for path in scratch if path not in ("/tmp", "/var/tmp", "/dev/shm")]
    assert all(any(path.startswith(top + "/") for top in layout.system) for path in others), others
    for path in ("/run/dbus/system_bus_socket", "/var/run/docker.sock", "/home/x/.ssh/id_rsa", "/root", "/sys/fs"):
        assert layout.shows(path) is False, path
    assert layout.shows("/usr/bin/env") is True
    assert layout.shows("/etc/passwd") is True
    if os.path.islink("/bin"):  # merged /usr: the same symlink, not a second bind
        assert ("/bin", os.readlink("/bin")) in layout.links
    assert layout.hidden == () and layout.reveal == () and layout.masked == ()


def test_top_level_symlinks_are_reproduced_and_plain_dirs_bound(tmp_path: Path) -> None:
    (tmp_path / "usr" / "lib").mkdir(parents=True)
    (tmp_path / "etc").mkdir()
    (tmp_path / "lib").symlink_to("usr/lib")
    system, links = system_tree([str(tmp_path / n) for n in ("usr", "lib", "etc", "missing")])
    assert system == (str(tmp_path / "etc"), str(tmp_path / "usr"))  # usr/lib lies inside usr
    assert links == ((str(tmp_path / "lib"), "usr/lib"),)


def test_readable_dirs_are_revealed_and_hidden_dirs_inside_them_covered(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    (tree / "data" / "nested").mkdir(parents=True)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    layout = build_layout(
        hidden_dirs=[str(tree / "data"), str(tree / "data" / "nested"), str(outside)],
        readable_dirs=[str(tree), "/usr/share"],  # /usr/share is bound already
        disk_mb=8,
        home=None,
    )
    assert layout.reveal == (str(tree),)
    assert layout.hidden == (str(tree / "data"),)  # outside any bound tree: simply not there
    assert layout.shows(str(tree / "file")) is True
    assert layout.shows(str(tree / "data" / "nested" / "x")) is False
    assert layout.shows(str(outside)) is False


def test_world_writable_dirs_are_found_one_level_down(tmp_path: Path) -> None:
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared").chmod(0o1777)
    (tmp_path / "private").mkdir(mode=0o755)
    (tmp_path / "link").symlink_to(tmp_path / "shared")
    assert world_writable_dirs([str(tmp_path)]) == [str(tmp_path / "shared")]


def test_an_interpreter_the_view_does_not_show_is_resolved_or_revealed(tmp_path: Path) -> None:
    layout = Layout(system=("/usr",), links=(), scratch=((str(tmp_path), 8),), hidden=(), reveal=())
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(sys.executable)
    assert sandbox_executable(str(venv / "bin" / "python"), layout=layout) == os.path.realpath(sys.executable)
    assert sandbox_executable("/usr/bin/env", layout=layout) == "/usr/bin/env"  # visible: kept
    copy = tmp_path / "copied" / "bin" / "python3"
    copy.parent.mkdir(parents=True)
    copy.write_bytes(b"")
    (tmp_path / "copied" / "pyvenv.cfg").write_text(f"home = {Path(sys.executable).resolve().parent}\n")
    base = sandbox_executable(str(copy), layout=layout)
    assert base == os.path.realpath(Path(sys.executable).resolve().parent / "python3")
    private = tmp_path / "opt" / "py" / "bin" / "python3"
    private.parent.mkdir(parents=True)
    private.write_bytes(b"")
    assert revealing(layout, [str(private)]).reveal == (str(tmp_path / "opt" / "py"),)
    assert revealing(layout, ["/usr/bin/env"]).reveal == ()


def test_directories_other_users_cannot_reach_are_left_out_for_the_sandbox_uid() -> None:
    base = Path(tempfile.mkdtemp(prefix="tooldeck-layout-test-"))  # in the world-traversable /tmp
    try:
        base.chmod(0o755)
        closed = base / "closed"
        (closed / "data").mkdir(parents=True)
        closed.chmod(0o700)
        reachable = base / "open"
        reachable.mkdir(mode=0o755)
        layout = Layout(
            system=("/usr",), links=(), scratch=(), hidden=(str(closed / "data"), str(reachable)),
            reveal=(str(closed / "data"), str(reachable)),
        )  # fmt: skip
        assert reachable_by_others(layout).hidden == (str(reachable),)
        assert reachable_by_others(layout).reveal == (str(reachable),)
    finally:
        shutil.rmtree(base)


def test_bwrap_command_line() -> None:
    layout = Layout(
        system=("/etc", "/usr"), links=(("/bin", "usr/bin"),), scratch=(("/tmp", 8),), hidden=("/etc/app",),
        reveal=("/opt/py",), masked=(("/etc/ssl/private", True), ("/etc/shadow", False)),
    )  # fmt: skip
    argv = bwrap_argv(
        "/usr/bin/bwrap", command=["prlimit", "--", "/usr/bin/python3", "/tmp/w/main.py"], cwd="/tmp/w",
        layout=layout, disk_mb=8, program_fd=5, status_fd=6, seccomp_fd=7,
        isolate_network=True, isolate_filesystem=True,
    )  # fmt: skip
    mib = str(MIB)
    assert argv == [
        "/usr/bin/bwrap", "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent",
        "--ro-bind", "/etc", "/etc", "--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin",
        "--dev", "/dev", "--proc", "/proc",
        "--size", str(8 * MIB), "--perms", "1777", "--tmpfs", "/tmp",
        "--ro-bind", "/opt/py", "/opt/py",
        "--size", mib, "--perms", "0755", "--tmpfs", "/etc/app",
        "--ro-bind", "/dev/null", "/etc/shadow",
        "--size", mib, "--perms", "0755", "--tmpfs", "/etc/ssl/private",
        "--size", str(8 * MIB), "--perms", "0700", "--tmpfs", "/tmp/w",
        "--perms", "0600", "--file", "5", "/tmp/w/main.py",
        "--remount-ro", "/etc/app", "--remount-ro", "/etc/ssl/private", "--remount-ro", "/",
        "--chdir", "/tmp/w", "--json-status-fd", "6", "--seccomp", "7",
        "--", "prlimit", "--", "/usr/bin/python3", "/tmp/w/main.py",
    ]  # fmt: skip
    shared = bwrap_argv(
        "bwrap", command=["x"], cwd="/w", layout=layout, disk_mb=8, program_fd=5, status_fd=6,
        seccomp_fd=None, isolate_network=False, isolate_filesystem=False,
    )  # fmt: skip
    assert shared == [
        "bwrap", "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--share-net",
        "--bind", "/", "/", "--dev-bind", "/dev", "/dev", "--proc", "/proc",
        "--chdir", "/w", "--json-status-fd", "6", "--", "x",
    ]  # fmt: skip
    limits = {"cpu": 5, "as": 1024, "nproc": 32, "core": 0}
    assert prlimit_argv("/usr/bin/prlimit", limits) == [
        "/usr/bin/prlimit", "--cpu=5:6", "--as=1024", "--nproc=32", "--core=0", "--",
    ]  # fmt: skip


# -- masks: what only the application's uid or groups may read --------------------------


def _tree(root: Path) -> None:
    (root / "open" / "deep").mkdir(parents=True)
    (root / "open" / "deep" / "public.txt").write_text("x")
    (root / "open" / "mine.txt").write_text("x")
    (root / "open" / "mine.txt").chmod(0o600)
    (root / "open" / "group-only.txt").write_text("x")
    (root / "open" / "group-only.txt").chmod(0o640)
    (root / "closed").mkdir(mode=0o750)
    (root / "closed" / "inside.txt").write_text("x")
    (root / "link").symlink_to(root / "open" / "mine.txt")


def test_masks_list_entries_only_our_uid_or_groups_may_read(tmp_path: Path) -> None:
    _tree(tmp_path)
    uid, gid = os.geteuid(), os.getegid()
    expected = (
        (str(tmp_path / "closed"), True),
        (str(tmp_path / "open" / "group-only.txt"), False),
        (str(tmp_path / "open" / "mine.txt"), False),
    )
    assert masked_entries([str(tmp_path)], uid=uid, gids=[gid]) == expected
    assert sorted(_walk([str(tmp_path)], uid, frozenset([gid]))) == [p for p, _ in expected]
    # Entries of another owner and group are out of reach anyway: nothing to mask.
    assert masked_entries([str(tmp_path)], uid=uid + 4242, gids=[gid + 4242]) == ()
    # A covered directory (hidden, scratch) needs no mask below it.
    assert masked_entries([str(tmp_path)], uid=uid, gids=[gid], skip=[str(tmp_path / "open")]) == expected[:1]


def test_the_find_command_prunes_closed_directories() -> None:
    argv = _find_argv("/usr/bin/find", ["/usr", "/etc"], 1000, frozenset({1000, 999}))
    assert argv[:5] == ["/usr/bin/find", "/usr", "/etc", "-mindepth", "1"]
    ours = ["(", "-user", "1000", "-o", "-group", "999", "-o", "-group", "1000", ")"]
    assert any(argv[i : i + len(ours)] == ours for i in range(len(argv)))
    assert argv.count("-prune") == 2


# -- memory: one budget per run ----------------------------------------------------------


@pytest.mark.parametrize(
    ("budget", "cap", "language", "expected"),
    [
        (2048, 16, "python", MemoryPlan("address-space", 2048, 128, 16)),  # the defaults
        (512, 64, "python", MemoryPlan("address-space", 512, 64, 8)),  # fewer processes, not smaller ones
        (2048, 16, "node", MemoryPlan("address-space", 2048, 256, 8, NODE_FLAGS)),
        (1024, 16, "bash", MemoryPlan("address-space", 1024, 64, 16)),
    ],
)
def test_the_address_space_budget_is_divided_over_the_process_cap(
    budget: int, cap: int, language: str, expected: MemoryPlan
) -> None:
    found = plan_memory(budget, cap, language, cgroup=False)
    assert found == expected
    assert found.process_mb * found.processes <= budget


def test_a_budget_too_small_for_two_processes_is_refused() -> None:
    with pytest.raises(BudgetTooSmallError, match="a node process needs 256 MiB"):
        plan_memory(384, 16, "node", cgroup=False)
    with pytest.raises(BudgetTooSmallError, match="a python process needs 64 MiB"):
        plan_memory(100, 16, "python", cgroup=False)
    # With a cgroup the kernel counts what is used: V8 may reserve address space freely.
    assert plan_memory(384, 16, "node", cgroup=True) == MemoryPlan("cgroup", 384, 2048, 16)
    assert plan_memory(384, 16, "python", cgroup=True) == MemoryPlan("cgroup", 384, 384, 16)


def test_a_run_cgroup_is_bounded_and_removed(tmp_path: Path) -> None:
    # A directory standing in for a delegated cgroup v2 (the kernel's files are plain files
    # here): what the sandbox writes, and that it refuses a parent without the controllers.
    parent = tmp_path / "delegated"
    parent.mkdir()
    (parent / "cgroup.controllers").write_text("cpu memory pids\n")
    (parent / "cgroup.subtree_control").write_text("memory pids\n")
    found, reason = CgroupParent.detect(str(parent))
    assert found is not None, reason
    plan = MemoryPlan("cgroup", 256, 256, 8)
    run = Path(found.create("run-1", plan))
    assert (run / "memory.max").read_text() == str(256 * MIB)
    assert (run / "memory.swap.max").read_text() == "0"
    assert (run / "pids.max").read_text() == "8"
    assert enter_argv(str(run))[-1] == str(run / "cgroup.procs")
    (parent / "cgroup.controllers").write_text("cpu\n")
    missing, why = CgroupParent.detect(str(parent))
    assert missing is None
    assert "memory and pids controllers are not available" in why


def test_this_hosts_own_cgroup_is_found_or_reported_missing() -> None:
    mine = own_cgroup()
    assert mine is None or Path(mine).is_dir()
    parent, reason = CgroupParent.detect(None)
    assert (parent is None) == reason.startswith(("no cgroup", "this process", "can't", "the memory", "/"))


def test_what_left_the_host_since_the_layout_was_made_is_not_mounted(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    for name in ("shared", "data", "closed"):
        (tree / name).mkdir(parents=True)
    (tree / "secret").write_text("x")
    layout = Layout(
        system=("/usr",), links=(), scratch=(("/tmp", 8), (str(tree / "shared"), 4)), hidden=(str(tree / "data"),),
        reveal=(str(tree),), masked=((str(tree / "closed"), True), (str(tree / "secret"), False)),
    )  # fmt: skip
    assert layout.present() == layout
    for name in ("shared", "data", "closed"):
        (tree / name).rmdir()
    (tree / "secret").unlink()
    # Nothing can be created inside a read-only bound tree to mount on; /tmp is made in the root.
    assert layout.present() == Layout(
        system=("/usr",), links=(), scratch=(("/tmp", 8),), hidden=(), reveal=(str(tree),), masked=()
    )
