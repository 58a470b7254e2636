"""``tooldeck runs list | show`` over records in the data directory (``tools.runs``): pipeline runs
with their steps, verdicts and validation; filters; ids by prefix; errors that say what to do."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

from tests.integration.store.conftest import Tooldeck, base_env
from tools.cli.runs_cmds import Status
from tools.runs import (
    RUN_STATUSES,
    FileRunStore,
    RecordedApproval,
    RecordedStep,
    RecordedToolCall,
    RunRecord,
)

T0 = datetime(2026, 5, 1, 8, 0, tzinfo=timezone.utc)


def save(data: Path, record: RunRecord) -> None:
    FileRunStore(data / "runs").save(record)


def pipeline_record() -> RunRecord:
    return RunRecord(
        id="run_" + "c" * 32,
        kind="pipeline",
        status="rejected",
        question="make add() handle negative numbers",
        agent="pipeline",
        model="smollm2",
        started_at=T0,
        updated_at=T0 + timedelta(minutes=3),
        duration_ms=94_000,
        turns=9,
        workspace="/work/proj",
        steps=[
            RecordedStep(
                cycle=1,
                agent="coder",
                turns=3,
                stop_reason="final_answer",
                changed_files=["calc.py"],
                tool_calls=[
                    RecordedToolCall(name="edit", arguments={"path": "calc.py"}, status="success", agent="coder")
                ],
            ),
            RecordedStep(
                cycle=1,
                agent="reviewer",
                turns=3,
                stop_reason="final_answer",
                verdict="REJECT",
                findings=["BLOCKER calc.py:2 still subtracts"],
            ),
        ],
        cycles=1,
        max_cycles=1,
        verdicts=["REJECT"],
    )


def test_the_status_choices_are_the_record_statuses() -> None:
    assert tuple(s.value for s in Status) == RUN_STATUSES


def test_a_pipeline_run_is_shown_with_its_steps_and_verdicts(tooldeck: Tooldeck, tmp_path: Path) -> None:
    data = tmp_path / "data"
    save(data, pipeline_record())
    shown = tooldeck("runs", "show", "run_cccccc", "--data-dir", str(data))
    assert shown.code == 0, shown.err
    lines = shown.out.splitlines()
    assert lines[0] == "pipeline run run_" + "c" * 32 + ": rejected"
    assert "task: make add() handle negative numbers" in lines
    assert "workspace: /work/proj" in lines
    assert "cycle 1: coder, 3 turn(s), 1 tool call(s), stop: final_answer" in lines
    assert '    [coder] edit {"path": "calc.py"} -> success, 0.0 ms' in lines
    assert "    changed: calc.py" in lines
    assert "    verdict: REJECT" in lines
    assert "      - BLOCKER calc.py:2 still subtracts" in lines


def test_a_paused_pipeline_run_says_how_to_resume_it(tooldeck: Tooldeck, tmp_path: Path) -> None:
    data = tmp_path / "data"
    held = RecordedApproval(call_id="e1", tool="edit", risk="moderate", decision="pending")
    paused = pipeline_record().model_copy(
        update={"status": "paused", "steps": [], "verdicts": [], "approvals": [held], "state_file": "/d/p.json"}
    )
    save(data, paused)
    shown = tooldeck("runs", "show", "--data-dir", str(data))
    assert shown.code == 0, shown.err
    lines = shown.out.splitlines()
    assert lines[0] == "pipeline run run_" + "c" * 32 + ": paused"
    hint = lines.index("waiting for a person's approval; continue with (and the run's own --base-url / --model flags):")
    assert lines[hint + 1] == "  python -m orchestrator --resume run_" + "c" * 32 + " --approve-call e1"


def test_list_filters_and_finds_the_data_directory_from_the_environment(tooldeck: Tooldeck, tmp_path: Path) -> None:
    data = tmp_path / "xdg" / "tooldeck"
    save(data, pipeline_record())
    paused = RunRecord(
        id="run_" + "d" * 32, status="paused", question="wipe it", started_at=T0, updated_at=T0 + timedelta(hours=1),
        approvals=[RecordedApproval(call_id="c1", tool="wipe", risk="dangerous", decision="pending")],
    )  # fmt: skip
    save(data, paused)
    env = base_env(tmp_path / "home", XDG_DATA_HOME=str(tmp_path / "xdg"))
    listed = tooldeck("runs", "list", env=env)
    assert [line.split("\t")[:2] for line in listed.out.splitlines()] == [
        ["run_" + "d" * 32, "paused"],
        ["run_" + "c" * 32, "rejected"],
    ]
    only = tooldeck("runs", "list", "--status", "paused", "--json", env=env)
    assert [r["id"] for r in json.loads(only.out)] == ["run_" + "d" * 32]
    bad = tooldeck("runs", "list", "--status", "sleeping", env=env)
    assert bad.code == 2 and "'sleeping' is not one of" in bad.err
    shown = tooldeck("runs", "show", env=env)  # the latest
    assert shown.out.splitlines()[0] == "run run_" + "d" * 32 + " (main agent): paused"
    assert "python -m orchestrator --resume run_" + "d" * 32 + " --approve-call c1" in shown.out


def test_ids_errors_and_an_empty_store(tooldeck: Tooldeck, tmp_path: Path) -> None:
    data = tmp_path / "data"
    flag = ["--data-dir", str(data)]
    empty = tooldeck("runs", "list", *flag)
    assert (empty.code, empty.out) == (0, "No runs recorded yet. Runs of python -m orchestrator are recorded unless "
                                          "--no-record is given.\n")  # fmt: skip
    none = tooldeck("runs", "show", *flag)
    assert none.code == 2 and "no runs are recorded yet" in none.err
    for suffix in ("a1", "a2"):
        save(data, RunRecord(id=f"run_abcdef{suffix}", status="answered", started_at=T0, updated_at=T0))
    ambiguous = tooldeck("runs", "show", "run_abcdef", *flag)
    assert ambiguous.code == 2 and "matches 2 runs" in ambiguous.err
    short = tooldeck("runs", "show", "run_", *flag)
    assert short.code == 2 and "give at least 6 characters" in short.err
    hostile = tooldeck("runs", "show", "../../etc/passwd", *flag)
    assert hostile.code == 2 and "is not a run id" in hostile.err
    missing = tooldeck("runs", "show", "run_ffffffffff", *flag)
    assert missing.code == 2 and "tooldeck runs list" in missing.err
