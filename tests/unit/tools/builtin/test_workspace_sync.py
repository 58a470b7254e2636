"""The workspace copy and its sync back, without a sandbox: races and hostile layouts.

The program's side is played by editing the staged copy directly; the host's side by
editing the workspace during the "run" (between ``stage`` and ``sync_back``).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.unit.tools.builtin.workspace.swapper import swapping
from tools.builtin.code_executor._workspace import WorkspaceTooLargeError, stage, sync_back

MIB = 1024 * 1024


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    (ws / "a.txt").write_text("a\n")
    (ws / "sub" / "b.txt").write_text("b\n")
    return ws


def _stage(tmp_path: Path, ws: Path, **caps: int):  # type: ignore[no-untyped-def]
    run = tmp_path / "run"
    run.mkdir(exist_ok=True)
    return stage(ws, str(run), uid=None, max_bytes=caps.get("max_bytes", MIB), max_files=caps.get("max_files", 100))


def test_a_host_directory_swapped_for_a_symlink_during_the_run_is_not_written_through(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    snapshot = _stage(tmp_path, ws)
    Path(snapshot.stage, "sub", "new.txt").write_text("from the program")
    # Meanwhile on the host: sub becomes a symlink to a directory outside the workspace.
    (ws / "sub" / "b.txt").unlink()
    (ws / "sub").rmdir()
    (ws / "sub").symlink_to(outside, target_is_directory=True)
    report = sync_back(snapshot, max_bytes=MIB, max_files=100)
    assert list(outside.iterdir()) == []
    assert ("sub/new.txt", "a path component is a symlink or not a directory on the host; not synced") in (
        report.skipped
    )


def test_a_host_file_changed_during_the_run_is_a_conflict_not_overwritten(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    snapshot = _stage(tmp_path, ws)
    Path(snapshot.stage, "a.txt").write_text("program\n")
    (ws / "a.txt").write_text("someone else, longer\n")
    report = sync_back(snapshot, max_bytes=MIB, max_files=100)
    assert (ws / "a.txt").read_text() == "someone else, longer\n"
    assert report.skipped == [("a.txt", "changed on the host during the run; not overwritten")]


def test_symlinks_in_the_workspace_are_copied_as_symlinks_never_followed(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    secret = tmp_path / "secret.txt"
    secret.write_text("secret")
    (ws / "leak").symlink_to(secret)
    snapshot = _stage(tmp_path, ws)
    staged = Path(snapshot.stage, "leak")
    assert staged.is_symlink()
    assert os.readlink(staged) == str(secret)


def test_special_files_are_not_copied(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    os.mkfifo(ws / "pipe")
    snapshot = _stage(tmp_path, ws)
    assert not Path(snapshot.stage, "pipe").exists()
    assert sync_back(snapshot, max_bytes=MIB, max_files=100).deleted == []
    assert (ws / "pipe").exists()


@pytest.mark.parametrize(("caps", "message"), [({"max_files": 2}, "more than 2 files"), ({"max_bytes": 2}, "larger")])
def test_caps_are_clear_errors(tmp_path: Path, caps: dict[str, int], message: str) -> None:
    ws = _workspace(tmp_path)
    with pytest.raises(WorkspaceTooLargeError, match=message):
        _stage(tmp_path, ws, **caps)


def test_a_file_replacing_a_directory_on_the_host_is_skipped_not_destroyed(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    snapshot = _stage(tmp_path, ws)
    stage_sub = Path(snapshot.stage, "sub")
    (stage_sub / "b.txt").unlink()
    stage_sub.rmdir()
    stage_sub.write_text("now a file")
    (ws / "sub" / "keep.txt").write_text("host only")
    report = sync_back(snapshot, max_bytes=MIB, max_files=100)
    assert (ws / "sub" / "keep.txt").read_text() == "host only"
    assert report.deleted == ["sub/b.txt"]
    reasons = [reason for path, reason in report.skipped if path == "sub"]
    assert "a directory on the host; not replaced" in reasons


# --- symlinks the program made: resolved against the real tree, not lexically ---


@pytest.mark.parametrize(
    ("links", "refused"),
    [
        ({"self": ".", "leak": "self/../outside"}, {"leak"}),  # lexically 'outside' (inside); really ../outside
        ({"a-leak": "z-self/../outside", "z-self": "."}, {"a-leak"}),  # the helper link is synced after it
        ({"deep": "sub/../../outside"}, {"deep"}),
        ({"hop": "host-out/x"}, {"hop"}),  # through a link the host already has
        ({"fine": "sub/b.txt", "alias": "self2/sub", "self2": "."}, set()),
    ],
)
def test_program_symlinks_are_resolved_against_the_real_tree(
    tmp_path: Path, links: dict[str, str], refused: set[str]
) -> None:
    ws = _workspace(tmp_path)
    (tmp_path / "outside").mkdir()
    (ws / "host-out").symlink_to(tmp_path / "outside", target_is_directory=True)
    snapshot = _stage(tmp_path, ws)
    for name, target in links.items():
        os.symlink(target, Path(snapshot.stage, name))
    report = sync_back(snapshot, max_bytes=MIB, max_files=100)
    skipped = {path for path, reason in report.skipped if "leaves the workspace" in reason}
    assert skipped == refused
    assert set(report.written) == set(links) - refused
    for name in set(links) - refused:
        assert os.readlink(ws / name) == links[name]
    for name in refused:
        assert not (ws / name).is_symlink()


def test_a_symlink_chain_that_loops_is_not_synced(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    snapshot = _stage(tmp_path, ws)
    os.symlink("b", Path(snapshot.stage, "a"))
    os.symlink("a", Path(snapshot.stage, "b"))
    report = sync_back(snapshot, max_bytes=MIB, max_files=100)
    assert {path for path, _ in report.skipped} == {"a", "b"}


def test_a_sync_racing_a_directory_swapped_for_a_symlink_never_writes_outside(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    written = skipped = 0
    with swapping(ws / "sub", outside):
        for round_ in range(400):
            run = tmp_path / f"run{round_}"
            run.mkdir()
            try:
                snapshot = stage(ws, str(run), uid=None, max_bytes=MIB, max_files=10_000)
            except OSError:  # the copy-in met the swap; nothing to sync back
                continue
            staged = Path(snapshot.stage, "sub")
            if staged.is_symlink():  # copied while it was the link: the program writes elsewhere
                continue
            (staged / f"new{round_}.txt").write_text("from the program")
            report = sync_back(snapshot, max_bytes=MIB, max_files=10_000)
            written += f"sub/new{round_}.txt" in report.written
            skipped += any(path == f"sub/new{round_}.txt" for path, _ in report.skipped)
            if written >= 10 and skipped >= 10:
                break
    assert written >= 10 and skipped >= 10, (written, skipped)
    assert list(outside.iterdir()) == []
