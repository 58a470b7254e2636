"""A pipeline run is recorded (steps, cycles, verdicts, the validation report) and its hooks hear
each step, model turn and tool call (issue 21 items 5 and 6). Scripted models, a real workspace,
sandbox and pytest."""

from __future__ import annotations

import argparse
import io
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from orchestrator.graph.hooks import ModelStarted, RunHooks, StepFinished, StepStarted, ToolFinished
from orchestrator.runlog import RunLog
from tools.builtin.code_executor import LocalSandbox
from tools.runs import FileRunStore

from ._scripted import ScriptedModel, call

pytestmark = pytest.mark.timeout(600)


class Heard(RunHooks):
    def __init__(self) -> None:
        self.events: list[str] = []
        self._lock = threading.Lock()

    def _add(self, text: str) -> None:
        with self._lock:
            self.events.append(text)

    def on_step_start(self, event: StepStarted) -> None:
        self._add(f"step {event.cycle}/{event.max_cycles} {event.agent}")

    def on_step_end(self, event: StepFinished) -> None:
        self._add(f"done {event.agent} {event.verdict}")

    def on_model_start(self, event: ModelStarted) -> None:
        self._add(f"turn {event.agent} {event.turn}/{event.max_turns}")

    def on_tool_end(self, event: ToolFinished) -> None:
        self._add(f"tool {event.name} {event.status}")


class ByAgent:
    """One scripted model per agent type, chosen by the system prompt (what build_model would do)."""

    supports_strict_tools = False

    def __init__(self, models: dict[str, ScriptedModel]) -> None:
        self.models = models

    def chat(self, messages: Any, **options: Any) -> Any:
        system = messages[0]["content"]
        kind = "reviewer" if "reviewer" in system else "test-writer" if "test writer" in system else "coder"
        return self.models[kind].chat(messages, **options)


def test_a_pipeline_run_is_recorded_and_heard(workspace: Path, sandbox: LocalSandbox, tmp_path: Path) -> None:
    from orchestrator.agents import command

    models = {
        "coder": ScriptedModel(
            [[call("edit", path="calc.py", old_string="a - b", new_string="a + b")], "Fixed add()."]
        ),
        "test-writer": ScriptedModel(["The existing test covers it."]),
        "reviewer": ScriptedModel([[call("read", path="calc.py")], "VERDICT: APPROVE"]),
    }
    store = FileRunStore(tmp_path / "runs")
    log = RunLog(store, agent="pipeline", model="scripted", secrets=["sk-never-stored-0000"])
    heard = Heard()
    args = argparse.Namespace(
        pipeline="make add() add (key sk-never-stored-0000)", workspace=str(workspace), max_cycles=1,
        max_subagent_iterations=3, json=False,
    )  # fmt: skip
    out, err = io.StringIO(), io.StringIO()
    code = command.run_pipeline_command(
        args, env={}, model=ByAgent(models), stdout=out, stderr=err, sandbox=sandbox, hooks=heard, run_log=log
    )
    assert code == 0, out.getvalue() + err.getvalue()
    (record,) = store.list()
    assert out.getvalue().rstrip().endswith(f"run {record.id} recorded: tooldeck runs show {record.id}")
    assert (record.kind, record.status, record.cycles, record.max_cycles) == ("pipeline", "approved", 1, 1)
    assert record.workspace == str(workspace.resolve())
    assert [(s.cycle, s.agent) for s in record.steps] == [(1, "coder"), (1, "test-writer"), (1, "reviewer")]
    assert record.steps[0].changed_files == ["calc.py"]
    assert record.steps[0].tool_calls[0].name == "edit" and record.steps[0].tool_calls[0].agent == "coder"
    assert record.steps[2].verdict == "APPROVE"
    assert record.verdicts == ["APPROVE"]
    assert record.validation is not None and record.validation["summary"] == "passed"
    assert "sk-never-stored-0000" not in json.dumps(record.model_dump(mode="json"))
    assert heard.events[0] == "step 1/1 coder"
    assert heard.events[1] == "turn coder 1/3"
    assert "tool edit success" in heard.events
    assert heard.events.index("done coder None") < heard.events.index("step 1/1 test-writer")
    assert heard.events[-1] == "done reviewer APPROVE"
