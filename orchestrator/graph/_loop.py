"""The bookkeeping of one agent run: messages, the open turn, trace records and timings.

`AgentGraph.run`, `arun`, `resume` and `aresume` all drive a `Loop` the same way; a paused
run is a `Loop` written out as a `PausedRun` (and read back from one).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Literal

from orchestrator.graph._calls import PendingCall, pending_calls
from orchestrator.graph.run import AgentRun, StepRecord, StopReason
from orchestrator.graph.state import Decided, PausedRun, call_key
from orchestrator.graph.tools_node import ToolCallRecord
from orchestrator.llm import ChatResponse, Message
from tools.approvals import ApprovalRequest, StateSigner


@dataclass
class Turn:
    """The tool calls of the model's last turn and what has answered them so far.

    Attributes:
        number: The model turn (1-based) the calls belong to.
        calls: Every call of the turn, in order.
        answered: Tool messages by call position.
        held: Calls waiting for a person, by call position.
    """

    number: int
    calls: list[PendingCall]
    answered: dict[int, Message] = field(default_factory=dict)
    held: dict[int, ApprovalRequest] = field(default_factory=dict)


class Loop:
    """The state of one run (over its resumes).

    Args:
        messages: The conversation so far (owned by the loop from now on).
        run_id: The run's id.
        clock: Seconds, for durations.
        max_iterations: The model-turn budget.
    """

    def __init__(
        self, messages: list[Message], *, run_id: str, clock: Callable[[], float], max_iterations: int
    ) -> None:
        self.messages = messages
        self.run_id = run_id
        self.clock = clock
        self.max_iterations = max_iterations
        self.tool_results: list[ToolCallRecord] = []
        self.steps: list[StepRecord] = []
        self.iteration = 0
        self.turn: Turn | None = None
        self.decided: dict[str, Decided] = {}
        self.earlier_ms = 0.0  # time spent in earlier segments of a resumed run
        self.started = clock()

    @classmethod
    def from_paused(cls, paused: PausedRun, *, clock: Callable[[], float], max_iterations: int) -> Loop:
        """The loop of a paused run, with its open turn."""
        loop = cls(paused.messages, run_id=paused.run_id, clock=clock, max_iterations=max_iterations)
        loop.tool_results = list(paused.tool_results)
        loop.steps = list(paused.steps)
        loop.iteration = paused.iterations
        loop.decided = dict(paused.decided)
        loop.earlier_ms = paused.elapsed_ms
        loop.turn = Turn(paused.iterations, paused.calls, dict(paused.answered), dict(paused.pending))
        return loop

    # ------------------------------------------------------------------ steps

    def record(self, node: Literal["agent", "tools"], since: float) -> None:
        duration = round((self.clock() - since) * 1000, 3)
        self.steps.append(StepRecord(node, self.iteration, duration))

    def took_turn(self, response: ChatResponse) -> list[PendingCall]:
        """Append the model's turn; its tool calls (an empty list when it answered)."""
        self.iteration += 1
        self.messages.append(dict(response.message))
        if not response.tool_calls:
            return []
        calls = pending_calls(self.messages[-1:])
        self.turn = Turn(self.iteration, calls)
        return calls

    def took_answers(self, calls: Sequence[PendingCall], update: Mapping[str, Any]) -> None:
        """Keep the node's answers to ``calls`` (given to it re-numbered ``0..n-1``)."""
        turn = self.turn
        if turn is None:  # pragma: no cover - the graph opens a turn first
            raise RuntimeError("no open turn to answer")
        for call, message in zip(calls, update["messages"], strict=True):
            turn.answered[call.index] = message
            turn.held.pop(call.index, None)
        self.tool_results.extend(update["tool_results"])

    def decided_now(self, calls: Sequence[PendingCall], how: Mapping[int, Decided]) -> None:
        """Record which held calls a resume decided (``decided`` in the state)."""
        number = self.turn.number if self.turn is not None else self.iteration
        for call in calls:
            if call.index in how:
                self.decided[call_key(number, call.id)] = how[call.index]

    def close_turn(self) -> bool:
        """When every call of the open turn has its answer, add the answers in call order and
        return True; False while calls are held."""
        turn = self.turn
        if turn is None:
            return True
        if turn.held:
            return False
        self.messages.extend(turn.answered[call.index] for call in turn.calls)
        self.turn = None
        return True

    # ------------------------------------------------------------------ endings

    def _timings(self) -> dict[str, float]:
        total = self.earlier_ms + (self.clock() - self.started) * 1000
        model_ms = sum(s.duration_ms for s in self.steps if s.node == "agent")
        tools_ms = sum(s.duration_ms for s in self.steps if s.node == "tools")
        return {"total_ms": round(total, 3), "model_ms": round(model_ms, 3), "tools_ms": round(tools_ms, 3)}

    def finish(self, stop_reason: StopReason) -> AgentRun:
        if stop_reason == "max_iterations":
            self.messages.append({"role": "assistant", "content": self._exhausted()})
        return AgentRun(
            messages=self.messages,
            tool_results=self.tool_results,
            iterations=self.iteration,
            stop_reason=stop_reason,
            steps=self.steps,
            timings=self._timings(),
            run_id=self.run_id,
        )

    def pause(self, agent: str, now: datetime, signer: StateSigner) -> AgentRun:
        """The run as it waits for decisions about the open turn's held calls (its state
        signed by ``signer``)."""
        turn = self.turn
        if turn is None or not turn.held:  # pragma: no cover - the graph pauses only then
            raise RuntimeError("nothing is held")
        timings = self._timings()
        paused = PausedRun(
            run_id=self.run_id,
            agent=agent,
            paused_at=now,
            iterations=self.iteration,
            messages=self.messages,
            answered=dict(turn.answered),
            pending=dict(turn.held),
            decided=dict(self.decided),
            tool_results=self.tool_results,
            steps=self.steps,
            elapsed_ms=timings["total_ms"],
        )
        state = paused.to_signed_dict(signer)
        return AgentRun(
            messages=state["messages"],
            tool_results=state["tool_results"],
            iterations=self.iteration,
            stop_reason="awaiting_approval",
            steps=list(self.steps),
            timings=timings,
            run_id=self.run_id,
            pending_approvals=[turn.held[i] for i in sorted(turn.held)],
            state=state,
        )

    def _exhausted(self) -> str:
        n = self.max_iterations
        text = (
            f"I stopped before reaching a final answer: the model was still calling tools "
            f"after {n} turns, the iteration budget (raise it with max_iterations or "
            "--max-iterations)."
        )
        last = self.tool_results[-3:]
        if last:
            shown = [f"{r['name']} -> {r['error_type'] or r['status']}" for r in last]
            text += " Last tool calls: " + "; ".join(shown) + "."
        return text


def renumbered(calls: Sequence[PendingCall]) -> list[PendingCall]:
    """``calls`` numbered ``0..n-1`` (what `ToolsNode` expects of a batch)."""
    return [replace(call, index=number) for number, call in enumerate(calls)]
