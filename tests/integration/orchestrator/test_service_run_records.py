"""``OrchestratorService(runs=...)`` records every run as it goes (issue 21 item 5): running, then
answered / budget_exhausted / paused / failed; approvals asked at the terminal and decided on
resume; a broken store never fails a run; no secret reaches a record."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from orchestrator import ChatModelConnectionError, OrchestratorService, Settings
from orchestrator.testing import FunctionModel, TestModel
from tools.approvals import ApprovalsStore, Approve, Deny
from tools.runs import FileRunStore, RunRecord, RunStoreError

KEY = "sk-service-" + "Z" * 40


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path / "data", context_url="http://127.0.0.1:9", api_key=SecretStr(KEY))


@pytest.fixture
def store(tmp_path: Path) -> FileRunStore:
    return FileRunStore(tmp_path / "runs")


def only(store: FileRunStore) -> RunRecord:
    (record,) = store.list()
    return record


def test_an_answered_run(settings: Settings, store: FileRunStore) -> None:
    with OrchestratorService(settings, model=TestModel(call_tools=["math_solver"]), runs=store) as service:
        run = service.ask(f"use {KEY} and compute")
    record = only(store)
    assert (record.id, record.status, record.turns, record.agent) == (run.run_id, "answered", 2, "main")
    assert record.model == "TestModel (calls every tool once, then summarises)"
    assert [(c.name, c.status) for c in record.tool_calls] == [("math_solver", "success")]
    assert record.tool_calls[0].arguments == {"expression": "expression-example"}
    assert record.answer is not None and record.answer.startswith("I called 1 tool(s):")
    assert KEY not in json.dumps(record.model_dump(mode="json"))
    assert record.question == "use *** and compute"


def always_calls(messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]]) -> Any:
    return {"tool_calls": [{"function": {"name": "math_solver", "arguments": {"expression": "1+1"}}}]}


def test_budget_exhausted_and_failed_runs(settings: Settings, store: FileRunStore) -> None:
    short = settings.model_copy(update={"max_iterations": 2})
    with OrchestratorService(short, model=FunctionModel(always_calls), runs=store) as service:
        service.ask("loop")
    assert only(store).status == "budget_exhausted"

    def unreachable(messages: Any, tools: Any) -> Any:
        raise ChatModelConnectionError("chat model endpoint http://127.0.0.1:9 could not be reached")

    second = FileRunStore(store.directory.parent / "second")
    with OrchestratorService(settings, model=FunctionModel(unreachable), runs=second) as service:
        with pytest.raises(ChatModelConnectionError):
            service.ask("hello")
    failed = only(second)
    assert failed.status == "failed"
    assert failed.error == "ChatModelConnectionError: chat model endpoint http://127.0.0.1:9 could not be reached"


def test_approvals_asked_at_the_terminal_are_recorded(settings: Settings, store: FileRunStore, tmp_path: Path) -> None:
    low = settings.model_copy(update={"freedom": "low"})
    answers: Iterator[Approve | Deny] = iter([Approve(), Deny("not that one")])

    def person(request: Any) -> Approve | Deny:
        return next(answers)

    approvals = ApprovalsStore(tmp_path / "approvals.json")
    model = TestModel(call_tools=["math_solver", "search_knowledge"])
    with OrchestratorService(low, model=model, runs=store, approvals=approvals, approver=person) as service:
        service.ask("try")
    record = only(store)
    assert record.status == "answered"
    assert [(a.tool, a.decision, a.decided_by) for a in record.approvals] == [
        ("math_solver", "approved", "terminal"),
        ("search_knowledge", "denied", "terminal"),
    ]


def test_a_paused_run_then_its_resume_is_one_record(settings: Settings, store: FileRunStore, tmp_path: Path) -> None:
    low = settings.model_copy(update={"freedom": "low"})
    approvals = ApprovalsStore(tmp_path / "approvals.json")
    model = TestModel(call_tools=["math_solver", "search_knowledge"])
    with OrchestratorService(low, model=model, runs=store, approvals=approvals) as service:
        paused = service.ask("try")
        record = only(store)
        assert record.status == "paused" and record.answer is None
        assert [(a.call_id, a.decision) for a in record.approvals] == [
            ("call_test_0", "pending"),
            ("call_test_1", "pending"),
        ]
        service.run_log.note_state_file(paused.run_id, tmp_path / "state.json")  # type: ignore[union-attr]
        assert only(store).state_file == str(tmp_path / "state.json")
        service.resume(paused.state or {}, {"call_test_0": Approve(), "call_test_1": Deny("no")})
    record = only(store)
    assert (record.id, record.status) == (paused.run_id, "answered")
    assert [(a.call_id, a.decision, a.decided_by) for a in record.approvals] == [
        ("call_test_0", "approved", "resume"),
        ("call_test_1", "denied", "resume"),
    ]
    assert record.state_file is None


def test_held_calls_decided_at_the_terminal_on_resume_settle_their_entries(
    settings: Settings, store: FileRunStore, tmp_path: Path
) -> None:
    low = settings.model_copy(update={"freedom": "low"})
    answers: list[Approve | None] = [None, Approve()]  # nobody at first (held), then a person approves

    def person(request: Any) -> Approve | None:
        return answers.pop(0)

    approvals = ApprovalsStore(tmp_path / "approvals.json")
    model = TestModel(call_tools=["math_solver"])
    with OrchestratorService(low, model=model, runs=store, approvals=approvals, approver=person) as service:
        paused = service.ask("try")
        assert only(store).status == "paused"
        service.resume(paused.state or {})
    record = only(store)
    assert record.status == "answered"
    assert [(a.call_id, a.decision, a.decided_by) for a in record.approvals] == [
        ("call_test_0", "approved", "terminal")
    ]


async def test_the_async_path_records_too(settings: Settings, store: FileRunStore) -> None:
    with OrchestratorService(settings, model=TestModel(call_tools=["math_solver"]), runs=store) as service:
        run = await service.aask("async")
    assert (only(store).id, only(store).status) == (run.run_id, "answered")


class BrokenStore(FileRunStore):
    def save(self, record: RunRecord) -> None:
        raise RunStoreError("the disk is full")


def test_a_store_that_fails_never_fails_the_run(
    settings: Settings, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    broken = BrokenStore(tmp_path / "broken")
    with OrchestratorService(settings, model=TestModel(call_tools=["math_solver"]), runs=broken) as service:
        run = service.ask("still answers")
    assert run.stop_reason == "final_answer"
    assert "not recorded: the disk is full" in caplog.text


def test_without_a_store_nothing_is_recorded(settings: Settings) -> None:
    with OrchestratorService(settings, model=TestModel(call_tools=["math_solver"])) as service:
        assert service.run_log is None
        assert service.ask("hi").stop_reason == "final_answer"
    assert not (settings.data_dir / "runs").exists()


def test_from_env_records_in_the_data_directory(tmp_path: Path) -> None:
    env = {"TOOLDECK_DATA_DIR": str(tmp_path / "d"), "TOOLDECK_CONTEXT_URL": "http://127.0.0.1:9",
           "XDG_CONFIG_HOME": str(tmp_path / "c"), "HOME": str(tmp_path)}  # fmt: skip
    with OrchestratorService.from_env(env) as service:
        service.ask("What is 2+3?")
    assert [r.status for r in FileRunStore(tmp_path / "d" / "runs").list()] == ["answered"]
