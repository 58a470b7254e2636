"""Run records keep a run's timeline: which model turn asked for each call, what each call
answered, and how long each turn took (what the console draws)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from orchestrator.graph import AgentGraph
from orchestrator.runlog import RunLog
from orchestrator.testing import FunctionModel
from tools import LocalToolRegistry
from tools.runs import MAX_RESULT_CHARS, FileRunStore


def two_turns(messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]]) -> Any:
    """Turn 1 calls echo twice; turn 2 calls echo again reusing an id of turn 1; then it answers."""
    turns = sum(1 for m in messages if m.get("role") == "assistant")
    if turns == 0:
        return {"tool_calls": [
            {"id": "a", "function": {"name": "echo", "arguments": {"text": "one"}}},
            {"id": "b", "function": {"name": "echo", "arguments": {"text": "two"}}},
        ]}  # fmt: skip
    if turns == 1:
        return {"tool_calls": [{"id": "a", "function": {"name": "echo", "arguments": {"text": "x" * 5000}}}]}
    return "done"


def test_calls_are_recorded_with_their_turn_and_what_they_answered(tmp_path: Path) -> None:
    registry = LocalToolRegistry()

    def echo(text: str) -> str:
        """Say it back.

        Args:
            text: Anything.
        """
        return f"said {text}"

    registry.register(echo)
    run = AgentGraph(FunctionModel(two_turns), registry).run("go")
    store = FileRunStore(tmp_path)
    log = RunLog(store, agent="main", model="function", now=lambda: datetime(2026, 1, 1, tzinfo=timezone.utc))
    record = log.finished(run, "go")
    assert record is not None
    calls = [(c.call_id, c.turn, c.arguments) for c in record.tool_calls]
    assert calls[:2] == [("a", 1, {"text": "one"}), ("b", 1, {"text": "two"})]
    assert calls[2][:2] == ("a", 2)  # the reused id is matched by occurrence
    assert json.loads(record.tool_calls[0].result or "") == {"status": "success", "data": "said one"}
    assert json.loads(record.tool_calls[1].result or "")["data"] == "said two"
    assert len(record.tool_calls[2].result or "") <= MAX_RESULT_CHARS + 60  # bounded, saying what was left out
    assert "more characters not kept" in (record.tool_calls[2].result or "")
    assert record.turns == 3
    assert len(record.turn_ms) == 3
    assert all(ms >= 0 for ms in record.turn_ms)
    assert store.get(run.run_id) == record
