"""The console's runner: a run paused for approval, resumed exactly once, across runners too.

Real services (`OrchestratorService`), a real signed state in the data directory, the shared
claim ledger file; the model is a small scripted `ChatModel` (call a tool, then answer with
what the tool said).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from orchestrator import OrchestratorService, Settings
from orchestrator.llm import ChatResponse
from orchestrator.ui.runner import RunnerBusyError, ServiceRunner
from tests.integration.ui._agents import closed_port
from tools import LocalToolRegistry
from tools.approvals import ApprovalPolicy, ApprovalsStore, Approve, Deny, StateSigner

WAIT = 120.0


class NoteTaker:
    """Calls ``write_note`` with the question, then answers with what the tool message said."""

    model = "note-taker"
    supports_strict_tools = False

    def __init__(self, told: list[str]) -> None:
        self.told = told

    def chat(self, messages: Sequence[Mapping[str, Any]], **_: Any) -> ChatResponse:
        last = messages[-1]
        if last.get("role") == "tool":
            self.told.append(str(last["content"]))
            return ChatResponse(message={"role": "assistant", "content": f"told: {last['content']}"})
        question = next(m["content"] for m in reversed(messages) if m.get("role") == "user")
        function = {"name": "write_note", "arguments": json.dumps({"text": question})}
        call = {"id": "call_1", "type": "function", "function": function}
        return ChatResponse(message={"role": "assistant", "content": None, "tool_calls": [call]})


class Setup:
    def __init__(self, root: Path) -> None:
        self.data = root / "data"
        self.approvals = ApprovalsStore(root / "config" / "approvals.json")
        self.signer = StateSigner.from_file(root / "config" / "state.key")
        self.written: list[str] = []
        self.told: list[str] = []
        self.context = f"http://127.0.0.1:{closed_port()}"

    def service(self, agent: str | None) -> OrchestratorService:
        registry = LocalToolRegistry(policy=ApprovalPolicy(None, self.approvals))

        def write_note(text: str) -> str:
            """Write a note in the user's notebook.

            Args:
                text: What to write.
            """
            self.written.append(text)
            return f"wrote {text!r}"

        registry.register(write_note)  # undeclared: moderate, held at the default level (medium)
        settings = Settings(data_dir=self.data, context_url=self.context, agent=agent)
        return OrchestratorService(
            settings,
            model=NoteTaker(self.told),
            registry=registry,
            approvals=self.approvals,  # the claim ledger lives beside it: shared by every runner here
            state_signer=self.signer,
        )

    def runner(self) -> ServiceRunner:
        return ServiceRunner(self.service, data_dir=self.data, signer=self.signer)


def _paused(runner: ServiceRunner, question: str) -> str:
    runner.ask(question)
    assert runner.wait(WAIT)
    (activity,) = runner.activities()
    assert (activity.outcome, activity.problem) == ("paused", None)
    assert activity.run_id is not None
    return activity.run_id


def test_a_paused_run_is_approved_once_even_when_decided_twice(tmp_path: Path) -> None:
    setup = Setup(tmp_path)
    runner = setup.runner()
    try:
        run_id = _paused(runner, "buy milk")
        held = runner.held(run_id)
        assert held.problem is None
        (request,) = held.requests
        assert (request.tool, request.arguments) == ("write_note", {"text": "buy milk"})
        assert setup.written == []
        runner.decide(run_id, {"call_1": Approve(shown_hash=request.arguments_hash)})
        with pytest.raises(RunnerBusyError):  # a double click while the first resume runs
            runner.decide(run_id, {"call_1": Approve(shown_hash=request.arguments_hash)})
        assert runner.wait(WAIT)
        assert setup.written == ["buy milk"]
        assert runner.activities()[0].outcome == "answered"
        assert setup.told == ['{"status":"success","data":"wrote \'buy milk\'"}']
        assert not (setup.data / "paused" / f"{run_id}.json").exists()
        assert "no saved state" in (runner.held(run_id).problem or "")
    finally:
        runner.close()


def test_the_claim_ledger_stops_a_second_runner_resuming_the_same_state(tmp_path: Path) -> None:
    """Two consoles (or a console and a terminal) resuming one saved state: the call runs once."""
    setup = Setup(tmp_path)
    first, second = setup.runner(), setup.runner()
    try:
        run_id = _paused(first, "call mum")
        state = setup.data / "paused" / f"{run_id}.json"
        saved = state.read_bytes()
        (request,) = first.held(run_id).requests
        first.decide(run_id, {"call_1": Approve(shown_hash=request.arguments_hash)})
        assert first.wait(WAIT)
        state.write_bytes(saved)  # the same signed state, resumed again elsewhere
        second.decide(run_id, {"call_1": Approve(shown_hash=request.arguments_hash)})
        assert second.wait(WAIT)
        assert setup.written == ["call mum"]
        assert "were resumed before" in (second.activities()[0].problem or "")
    finally:
        first.close()
        second.close()


def test_a_decision_bound_to_other_arguments_runs_nothing(tmp_path: Path) -> None:
    setup = Setup(tmp_path)
    runner = setup.runner()
    try:
        run_id = _paused(runner, "pay the rent")
        runner.decide(run_id, {"call_1": Approve(shown_hash="0" * 64)})
        assert runner.wait(WAIT)
        assert setup.written == []
        assert "hash" in (runner.activities()[0].problem or "")
        assert runner.held(run_id).problem is None  # still paused, still decidable
    finally:
        runner.close()


def test_a_denied_call_tells_the_model_why(tmp_path: Path) -> None:
    setup = Setup(tmp_path)
    runner = setup.runner()
    try:
        run_id = _paused(runner, "delete everything")
        runner.decide(run_id, {"call_1": Deny("not today")})
        assert runner.wait(WAIT)
        assert setup.written == []
        assert runner.activities()[0].outcome == "answered"
        (told,) = setup.told
        assert json.loads(told)["error_type"] == "permission_denied"
        assert "was not approved: not today" in json.loads(told)["error"]
    finally:
        runner.close()


def test_an_edited_state_is_refused(tmp_path: Path) -> None:
    setup = Setup(tmp_path)
    runner = setup.runner()
    try:
        run_id = _paused(runner, "water the plants")
        state = setup.data / "paused" / f"{run_id}.json"
        state.write_text(state.read_text().replace("water the plants", "sell the house"))
        assert "edited" in (runner.held(run_id).problem or "")
        runner.decide(run_id, {"call_1": Approve()})
        assert runner.wait(WAIT)
        assert setup.written == []
        assert "edited" in (runner.activities()[0].problem or "")
    finally:
        runner.close()
        shutil.rmtree(setup.data, ignore_errors=True)
