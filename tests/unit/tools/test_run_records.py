"""Run records (``tools.runs``): the model, what only the file store has (files, modes, bad
files, the data directory), redaction, bounds. The contract both run stores keep (round trips,
newest first, filters, hostile ids, bounds by age and count, concurrent writers) runs against
the files and PostgreSQL in tests/integration/postgres/test_runs_backends.py."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from tools.runs import (
    FileRunStore,
    RecordedApproval,
    RecordedStep,
    RecordedToolCall,
    RunRecord,
    RunStore,
    RunStoreError,
    bounded_arguments,
    bounded_text,
    data_dir_from_env,
    redacted,
)

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)


def record(
    run_id: str = "run_" + "a" * 32, *, status: str = "answered", at: datetime = T0, **fields: object
) -> RunRecord:
    values: dict[str, object] = {
        "id": run_id,
        "status": status,
        "question": "What is 2+3?",
        "model": "TestModel",
        "started_at": at,
        "updated_at": at,
        "turns": 2,
        "tool_calls": [RecordedToolCall(call_id="c1", name="add", arguments={"a": 2, "b": 3}, status="success")],
        "answer": "5",
    }
    values.update(fields)
    return RunRecord.model_validate(values)


def test_the_file_store_writes_one_private_json_file_per_run(tmp_path: Path) -> None:
    store = FileRunStore(tmp_path / "runs")
    assert isinstance(store, RunStore)
    saved = record(
        approvals=[RecordedApproval(call_id="c2", tool="wipe", risk="dangerous", decision="pending")],
        steps=[RecordedStep(cycle=1, agent="reviewer", verdict="REJECT", findings=["BLOCKER a.py:1 bug"])],
    )
    store.save(saved)
    assert store.get(saved.id) == saved
    path = tmp_path / "runs" / f"{saved.id}.json"
    assert json.loads(path.read_text())["status"] == "answered"
    assert path.stat().st_mode & 0o777 == 0o600  # records can hold personal data


def test_bad_files_are_named_or_skipped(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    store = FileRunStore(tmp_path)
    store.save(record("run_good"))
    (tmp_path / "run_bad.json").write_text("{not json")
    (tmp_path / "run_other.json").write_text(json.dumps(record("run_elsewhere").model_dump(mode="json")))
    (tmp_path / "run_newer.json").write_text(json.dumps({"version": 99, "id": "run_newer"}))
    with pytest.raises(RunStoreError, match=r"run_bad.json is not valid JSON"):
        store.get("run_bad")
    with pytest.raises(RunStoreError, match="holds run 'run_elsewhere'"):
        store.get("run_other")
    with pytest.raises(RunStoreError, match="format version 99, newer than"):
        store.get("run_newer")
    assert [r.id for r in store.list()] == ["run_good"]
    assert "skipping run record run_bad.json" in caplog.text


def test_an_unwritable_directory_says_how_to_fix_it(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(
        RunStoreError, match=r"set TOOLDECK_DATA_DIR to a writable directory, or turn recording off \(--no-record\)"
    ):
        FileRunStore(blocker / "runs").save(record())


def test_the_data_directory_follows_the_environment(tmp_path: Path) -> None:
    assert data_dir_from_env({"TOOLDECK_DATA_DIR": str(tmp_path / "d")}) == tmp_path / "d"
    assert data_dir_from_env({"XDG_DATA_HOME": str(tmp_path)}) == tmp_path / "tooldeck"
    assert data_dir_from_env({"HOME": str(tmp_path)}) == tmp_path / ".local" / "share" / "tooldeck"
    assert FileRunStore.from_env({"XDG_DATA_HOME": str(tmp_path)}).directory == tmp_path / "tooldeck" / "runs"


KEY = "sk-proj-" + "Q" * 40


def test_redaction_masks_known_and_secret_looking_values_in_content_only() -> None:
    dirty = record(
        question=f"use my key {KEY} and the password hunter2-xyz",
        answer="Authorization: Bearer abcdefghijklmnop",
        error="api_key=supersecretvalue",
        tool_calls=[
            RecordedToolCall(
                call_id="c1",
                name="login",
                arguments={"token": "hunter2-xyz", "note": f"k={KEY}"},
                status="success",
                result=f'{{"status": "success", "data": "logged in with {KEY}"}}',
            )
        ],
        approvals=[
            RecordedApproval(
                call_id="c1", tool="login", reason="hunter2-xyz", decision="pending", arguments_hash="f" * 64
            )
        ],
        state_file="/data/paused/run_" + "a" * 32 + ".json",
    )
    clean = redacted(dirty, secrets=["hunter2-xyz", "", "ab"])
    text = json.dumps(clean.model_dump(mode="json"))
    assert KEY not in text and "hunter2-xyz" not in text and "abcdefghijklmnop" not in text
    assert "supersecretvalue" not in text
    assert clean.tool_calls[0].arguments["token"] == "***"
    assert clean.tool_calls[0].result == '{"status": "success", "data": "logged in with ***"}'
    assert clean.id == dirty.id and clean.state_file == dirty.state_file  # our own ids and paths stay
    assert clean.approvals[0].arguments_hash == "f" * 64
    assert "What" not in clean.question and "use my key" in clean.question


def test_bounds() -> None:
    assert bounded_text("x" * 30, 10) == "x" * 10 + "... (20 more characters not kept)"
    assert bounded_text(None) is None
    assert bounded_arguments({"a": 1}) == {"a": 1}
    cut = bounded_arguments({"blob": "y" * 10_000}, 100)
    assert isinstance(cut, str) and cut.endswith("more characters not kept)")


def test_arguments_named_like_secrets_are_masked_whatever_their_value_looks_like() -> None:
    """A tool's ``password`` argument is a secret even when it looks like words: it was stored
    as given (only secret-looking shapes and the known keys were masked)."""
    arguments = {
        "password": "correct horse battery",
        "api_key": "abcd1234",
        "db": {"Secret": 12345678, "host": "db.local"},
        "X-Auth-Token": ["t1", "t2"],
        "max_tokens": 100,
        "author": "Ana",
        "session": None,
    }
    dirty = record(
        tool_calls=[RecordedToolCall(call_id="c1", name="login", arguments=arguments, status="success")],
        approvals=[RecordedApproval(call_id="c1", tool="login", arguments=arguments, decision="pending")],
    )
    clean = redacted(dirty)
    expected = {
        "password": "***",
        "api_key": "***",
        "db": {"Secret": "***", "host": "db.local"},
        "X-Auth-Token": "***",
        "max_tokens": 100,
        "author": "Ana",
        "session": None,
    }
    assert clean.tool_calls[0].arguments == expected
    assert clean.approvals[0].arguments == expected
