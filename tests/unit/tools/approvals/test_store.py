"""The approvals file: round trips, fresh reads, corrupt and hostile files (an error naming
the file; never overwritten), hostile approval ids, symlinks, the XDG location."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from tools.approvals import (
    MAX_APPROVALS_BYTES,
    ApprovalError,
    ApprovalsFileError,
    ApprovalsStore,
    FreedomLevel,
    InvalidApprovalIdError,
    InvalidFreedomLevelError,
)

H1 = "a" * 64
H2 = "b" * 64
WHEN = datetime(2026, 5, 1, 10, 0, tzinfo=timezone.utc)


def fixed_store(path: Path) -> ApprovalsStore:
    return ApprovalsStore(path, clock=lambda: WHEN)


def test_a_missing_file_is_empty_and_is_not_created_by_reading(approvals_path: Path) -> None:
    store = ApprovalsStore(approvals_path)
    assert store.freedom() is None
    assert store.approvals() == {}
    assert store.get("weather") is None
    assert not store.is_approved("weather", H1)
    assert not approvals_path.exists()


def test_round_trip_and_the_written_file(approvals_path: Path) -> None:
    store = fixed_store(approvals_path)
    approval = store.approve("weather", H1, risk="moderate")
    assert approval.approved_at == WHEN
    store.set_freedom("HIGH")
    store.approve("shell", H2)
    assert store.freedom() is FreedomLevel.HIGH
    assert store.is_approved("weather", H1)
    assert not store.is_approved("weather", H2)  # bound to the version hash
    assert list(store.approvals()) == ["shell", "weather"]
    doc = json.loads(approvals_path.read_text())
    assert doc == {
        "version": 1,
        "freedom": "high",
        "approvals": {
            "shell": {"version_hash": H2, "approved_at": "2026-05-01T10:00:00Z"},
            "weather": {"version_hash": H1, "approved_at": "2026-05-01T10:00:00Z", "risk": "moderate"},
        },
    }
    assert approvals_path.read_text().endswith("}\n")
    assert stat.S_IMODE(approvals_path.stat().st_mode) == 0o600  # a new file is private
    assert store.revoke("weather") is not None
    assert store.revoke("weather") is None
    assert store.set_freedom(None) is None
    assert json.loads(approvals_path.read_text()) == {
        "version": 1,
        "approvals": {"shell": {"version_hash": H2, "approved_at": "2026-05-01T10:00:00Z"}},
    }


def test_reads_are_fresh_when_another_process_changes_the_file(approvals_path: Path) -> None:
    reader, writer = ApprovalsStore(approvals_path), ApprovalsStore(approvals_path)
    assert reader.freedom() is None
    writer.set_freedom("low")
    assert reader.freedom() is FreedomLevel.LOW
    writer.approve("weather", H1)
    assert reader.is_approved("weather", H1)
    approvals_path.write_text(json.dumps({"version": 1, "freedom": "high", "approvals": {}}))
    assert reader.freedom() is FreedomLevel.HIGH
    assert reader.get("weather") is None


def test_from_env_honours_xdg_config_home(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    assert ApprovalsStore.from_env(env).path == tmp_path / "xdg" / "tooldeck" / "approvals.json"
    env = {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": "relative/ignored"}
    assert ApprovalsStore.from_env(env).path == tmp_path / "home" / ".config" / "tooldeck" / "approvals.json"


CORRUPT = {
    "not json": ("{nope", "is not valid JSON", 1),
    "truncated": ('{\n  "version": 1,\n  "approvals": {\n', "is not valid JSON", 4),
    "empty": ("  \n", "is empty", 1),
    "a list": ("[]", "(top level)", 1),
    "bad level": ('{"version": 1,\n "freedom": "max"}', "freedom: Input should be 'low', 'medium' or 'high'", 2),
    "bad hash": (
        '{"approvals": {"t": {"version_hash": "abc", "approved_at": "2026-01-01T00:00:00Z"}}}',
        "approvals.t.version_hash",
        1,
    ),
    "id not a tool name": (
        '{"approvals": {"../../etc/passwd": {"version_hash": "' + H1 + '", "approved_at": "2026-01-01T00:00:00Z"}}}',
        "is not a tool name",
        1,
    ),
    "unknown key": ('{"version": 1,\n\n "freedom_level": "low"}', "freedom_level", 3),
    "newer schema": ('{"version": 7}', "schema version 7, newer than", 1),
    "deep nesting": ("[" * 100_000 + "]" * 100_000, "", None),
}


@pytest.mark.parametrize("case", CORRUPT, ids=list(CORRUPT))
def test_a_corrupt_file_is_an_error_naming_it_and_is_never_overwritten(approvals_path: Path, case: str) -> None:
    text, problem, line = CORRUPT[case]
    approvals_path.parent.mkdir(parents=True)
    approvals_path.write_text(text)
    before = approvals_path.read_bytes()
    store = ApprovalsStore(approvals_path)
    for attempt in (
        store.load,
        store.freedom,
        lambda: store.approve("weather", H1),
        lambda: store.revoke("weather"),
        lambda: store.set_freedom("high"),
    ):
        with pytest.raises(ApprovalsFileError) as caught:
            attempt()
        message = str(caught.value)
        assert str(approvals_path) in message
        assert problem in message
        assert "never overwrites" in message
        assert caught.value.line == line
    assert approvals_path.read_bytes() == before


def test_a_non_utf8_file_names_the_line(approvals_path: Path) -> None:
    approvals_path.parent.mkdir(parents=True)
    approvals_path.write_bytes(b'{\n"version": 1,\n"x": "\xff"}')
    with pytest.raises(ApprovalsFileError, match=r"approvals\.json:3: is not UTF-8"):
        ApprovalsStore(approvals_path).load()


def test_a_10_mb_file_is_refused_unread_and_kept(approvals_path: Path, mocker: Any) -> None:
    approvals_path.parent.mkdir(parents=True)
    entry = {"version_hash": H1, "approved_at": "2026-01-01T00:00:00Z"}
    doc = {"version": 1, "approvals": {f"tool_{i}": entry for i in range(120_000)}}
    approvals_path.write_text(json.dumps(doc))
    size = approvals_path.stat().st_size
    assert size > 10_000_000 > MAX_APPROVALS_BYTES
    opened = mocker.spy(__import__("builtins"), "open")
    store = ApprovalsStore(approvals_path)
    with pytest.raises(ApprovalsFileError, match=f"is larger than {MAX_APPROVALS_BYTES} bytes"):
        store.freedom()
    with pytest.raises(ApprovalsFileError, match="larger than"):
        store.approve("weather", H1)
    assert not [c for c in opened.call_args_list if str(c.args[0]) == str(approvals_path)]
    assert approvals_path.stat().st_size == size


@pytest.mark.parametrize(
    "bad_id",
    ["", "../../etc/passwd", "a b", "x" * 65, "x" * 10_000, "tool\nname", "outil_é", "a/b", "名前", None, 42],
)
def test_approval_ids_that_are_not_tool_names_are_refused(approvals_path: Path, bad_id: Any) -> None:
    store = ApprovalsStore(approvals_path)
    attempts: list[Callable[[], object]] = [lambda: store.approve(bad_id, H1), lambda: store.revoke(bad_id)]
    for attempt in attempts:
        with pytest.raises(InvalidApprovalIdError) as caught:
            attempt()
        assert "is not a tool name" in str(caught.value)
        assert len(str(caught.value)) < 400
    assert store.get(bad_id) is None
    assert not approvals_path.exists()


@pytest.mark.parametrize("bad_hash", ["", "A" * 64, "a" * 63, "g" * 64, "a" * 64 + "\n"])
def test_version_hashes_must_be_sha256_hex(approvals_path: Path, bad_hash: str) -> None:
    with pytest.raises(ApprovalError, match="is not a SHA-256 hex digest"):
        ApprovalsStore(approvals_path).approve("weather", bad_hash)
    assert not approvals_path.exists()


def test_set_freedom_refuses_unknown_levels(approvals_path: Path) -> None:
    with pytest.raises(InvalidFreedomLevelError, match="use one of: low"):
        ApprovalsStore(approvals_path).set_freedom("maximum")
    assert not approvals_path.exists()


def test_a_symlinked_file_is_followed_and_the_link_kept(tmp_path: Path) -> None:
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    real = dotfiles / "approvals.json"
    real.write_text('{"version": 1, "freedom": "low"}')
    real.chmod(0o644)
    link = tmp_path / "cfg" / "approvals.json"
    link.parent.mkdir()
    link.symlink_to(real)
    store = ApprovalsStore(link)
    assert store.freedom() is FreedomLevel.LOW
    store.approve("weather", H1)
    assert link.is_symlink()
    assert os.path.realpath(link) == str(real)
    assert json.loads(real.read_text())["approvals"]["weather"]["version_hash"] == H1
    assert stat.S_IMODE(real.stat().st_mode) == 0o644  # the file's mode is kept


def test_a_dangling_symlink_is_an_error_not_a_new_file(tmp_path: Path) -> None:
    link = tmp_path / "approvals.json"
    target = tmp_path / "elsewhere" / "approvals.json"
    link.symlink_to(target)
    store = ApprovalsStore(link)
    for attempt in (store.load, lambda: store.approve("weather", H1)):
        with pytest.raises(ApprovalsFileError, match=r"is a symlink to .* which does not exist"):
            attempt()
    assert not target.exists()


def test_a_world_writable_file_is_refused(approvals_path: Path) -> None:
    approvals_path.parent.mkdir(parents=True)
    approvals_path.write_text('{"version": 1, "freedom": "high"}')
    approvals_path.chmod(0o666)
    with pytest.raises(ApprovalsFileError, match=r"writable by every user .*chmod o-w"):
        ApprovalsStore(approvals_path).freedom()
    approvals_path.chmod(0o644)
    assert ApprovalsStore(approvals_path).freedom() is FreedomLevel.HIGH


def test_a_fifo_or_a_directory_is_refused_without_blocking(approvals_path: Path) -> None:
    approvals_path.parent.mkdir(parents=True)
    os.mkfifo(approvals_path)
    with pytest.raises(ApprovalsFileError, match="not a regular file"):
        ApprovalsStore(approvals_path).load()
    approvals_path.unlink()
    approvals_path.mkdir()
    with pytest.raises(ApprovalsFileError, match="is a directory"):
        ApprovalsStore(approvals_path).approve("weather", H1)


def test_a_held_lock_times_out_with_a_clear_error(approvals_path: Path) -> None:
    from filelock import FileLock

    approvals_path.parent.mkdir(parents=True)
    with FileLock(str(approvals_path) + ".lock"):
        store = ApprovalsStore(approvals_path, lock_timeout=0.05)
        with pytest.raises(ApprovalError, match=r"held its lock for 0\.05 s; retry"):
            store.approve("weather", H1)
