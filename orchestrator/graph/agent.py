"""The agent loop: agent node -> tools node -> agent ... until an answer or the budget ends."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from orchestrator.graph.tools_node import ToolCallRecord, ToolRunner, ToolsNode
from orchestrator.llm import ChatModel, ChatResponse, Message, ToolChoice

__all__ = ["AgentGraph", "AgentRun", "StepRecord", "StopReason", "ToolRegistry", "run_agent"]

StopReason = Literal["final_answer", "max_iterations"]


class ToolRegistry(ToolRunner, Protocol):
    """A `ToolRunner` that also exports OpenAI tool definitions (`tools.LocalToolRegistry`)."""

    def to_openai_tools(self, *, strict: bool = False) -> list[dict[str, Any]]:
        """Chat Completions tool definitions for every registered tool."""
        ...


@dataclass(frozen=True, slots=True)
class StepRecord:
    """One node execution of a run: ``node`` is ``"agent"`` or ``"tools"``."""

    node: Literal["agent", "tools"]
    iteration: int
    duration_ms: float


@dataclass(frozen=True)
class AgentRun:
    """The outcome of `AgentGraph.run`.

    Attributes:
        messages: The whole conversation, OpenAI format, ending with an assistant message.
        tool_results: One trace record per executed tool call, in execution order.
        iterations: Model calls made.
        stop_reason: ``"final_answer"`` (the model answered without tool calls) or
            ``"max_iterations"`` (the budget ran out; the last message says so).
        steps: Every node execution with its duration.
        timings: ``total_ms``, ``model_ms`` and ``tools_ms``.
    """

    messages: list[Message]
    tool_results: list[ToolCallRecord]
    iterations: int
    stop_reason: StopReason
    steps: list[StepRecord] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def answer(self) -> str:
        """The text of the final assistant message ("" when it had none)."""
        for message in reversed(self.messages):
            if message.get("role") == "assistant":
                content = message.get("content")
                return content if isinstance(content, str) else ""
        return ""

    def to_dict(self) -> dict[str, Any]:
        """The run as JSON-compatible data (what ``python -m orchestrator --json`` prints)."""
        return {
            "answer": self.answer,
            "stop_reason": self.stop_reason,
            "iterations": self.iterations,
            "timings": dict(self.timings),
            "steps": [{"node": s.node, "iteration": s.iteration, "duration_ms": s.duration_ms} for s in self.steps],
            "tool_results": [dict(r) for r in self.tool_results],
            "messages": self.messages,
        }


class _Loop:
    """The state of one run; `AgentGraph.run` and `arun` drive it the same way."""

    def __init__(self, graph: AgentGraph, messages: list[Message]) -> None:
        self.graph = graph
        self.messages = messages
        self.tool_results: list[ToolCallRecord] = []
        self.steps: list[StepRecord] = []
        self.iteration = 0
        self.started = graph.clock()

    def model_kwargs(self) -> dict[str, Any]:
        tools = self.graph.tool_definitions()
        choice = self.graph.tool_choice
        if self.iteration == 0 and self.graph.initial_tool_choice is not None:
            choice = self.graph.initial_tool_choice
        return {"tools": tools or None, "tool_choice": choice if tools else None}

    def record(self, node: Literal["agent", "tools"], since: float) -> None:
        duration = round((self.graph.clock() - since) * 1000, 3)
        self.steps.append(StepRecord(node, self.iteration, duration))

    def took_turn(self, response: ChatResponse) -> bool:
        """Append the model's turn; True when tools must run next."""
        self.iteration += 1
        self.messages.append(dict(response.message))
        return bool(response.tool_calls)

    def took_tools(self, update: Mapping[str, Any]) -> None:
        self.messages.extend(update["messages"])
        self.tool_results.extend(update["tool_results"])

    def finish(self, stop_reason: StopReason) -> AgentRun:
        if stop_reason == "max_iterations":
            self.messages.append({"role": "assistant", "content": self._exhausted()})
        total = round((self.graph.clock() - self.started) * 1000, 3)
        model_ms = sum(s.duration_ms for s in self.steps if s.node == "agent")
        tools_ms = sum(s.duration_ms for s in self.steps if s.node == "tools")
        return AgentRun(
            messages=self.messages,
            tool_results=self.tool_results,
            iterations=self.iteration,
            stop_reason=stop_reason,
            steps=self.steps,
            timings={
                "total_ms": total,
                "model_ms": round(model_ms, 3),
                "tools_ms": round(tools_ms, 3),
            },
        )

    def _exhausted(self) -> str:
        n = self.graph.max_iterations
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


class AgentGraph:
    """agent -> tools -> agent ... until the model answers without tool calls.

    The model is offered the registry's OpenAI tool definitions (strict when the model
    `supports_strict_tools`), or the ``tools`` given here. Each model turn that calls tools
    is followed by a `ToolsNode` run answering every call; the loop ends when a turn has no
    tool calls (``stop_reason="final_answer"``) or after ``max_iterations`` model turns
    (``"max_iterations"``), in which case a final assistant message says the budget ran
    out: the run ends with a message, never with an exception for that.

    Example:
        >>> graph = AgentGraph(OfflineModel(), registry)  # doctest: +SKIP
        >>> graph.run("What is 12*(3+4)?").answer  # doctest: +SKIP
        '12*(3+4) = 84'
    """

    def __init__(
        self,
        model: ChatModel,
        registry: ToolRegistry,
        *,
        tools_node: ToolsNode | None = None,
        max_iterations: int = 10,
        system_prompt: str | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        tool_choice: ToolChoice | None = None,
        initial_tool_choice: ToolChoice | None = None,
        strict: bool | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        """Wire the loop.

        Args:
            model: The chat model (`OpenAIChatModel`, `OfflineModel`, or any `ChatModel`).
            registry: Executes the calls and provides the tool definitions.
            tools_node: The node that runs calls (default: ``ToolsNode(registry)``).
            max_iterations: Most model turns per run (>= 1).
            system_prompt: Prepended as a system message when the input has none.
            tools: Tool definitions to offer instead of the whole registry (e.g. a
                routed subset); an empty list offers none.
            tool_choice: Sent on every turn (None: the model decides).
            initial_tool_choice: Sent on the first turn only, overriding ``tool_choice``
                (force a first call, then let the model answer).
            strict: Export strict schemas; default: ``model.supports_strict_tools``.
            clock: Seconds, for timings (injectable).

        Raises:
            ValueError: For ``max_iterations < 1``.
        """
        if max_iterations < 1:
            raise ValueError(f"max_iterations must be >= 1, got {max_iterations}")
        self.model = model
        self.registry = registry
        self.tools_node = tools_node if tools_node is not None else ToolsNode(registry)
        self.max_iterations = max_iterations
        self.system_prompt = system_prompt
        self._tools = [dict(t) for t in tools] if tools is not None else None
        self.tool_choice = tool_choice
        self.initial_tool_choice = initial_tool_choice
        self.strict = strict
        self.clock = clock

    def tool_definitions(self) -> list[dict[str, Any]]:
        """The tool definitions the model is given on each turn."""
        if self._tools is not None:
            return [dict(t) for t in self._tools]
        strict = self.strict if self.strict is not None else self.model.supports_strict_tools
        return self.registry.to_openai_tools(strict=strict)

    def _start(self, question: str | Sequence[Mapping[str, Any]]) -> _Loop:
        if isinstance(question, str):
            messages: list[Message] = [{"role": "user", "content": question}]
        else:
            messages = [dict(m) for m in question]
        if self.system_prompt and not (messages and messages[0].get("role") == "system"):
            messages.insert(0, {"role": "system", "content": self.system_prompt})
        return _Loop(self, messages)

    def run(self, question: str | Sequence[Mapping[str, Any]]) -> AgentRun:
        """Run the loop to the end.

        Args:
            question: A user message text, or a whole conversation (OpenAI format; copied,
                never modified).

        Returns:
            The finished run.

        Raises:
            ChatModelError: The model could not produce a turn (unreachable endpoint, HTTP
                error after retries, malformed response). Tool failures never raise.
        """
        loop = self._start(question)
        while loop.iteration < self.max_iterations:
            since = self.clock()
            response = self.model.chat(loop.messages, **loop.model_kwargs())
            loop.record("agent", since)
            if not loop.took_turn(response):
                return loop.finish("final_answer")
            since = self.clock()
            loop.took_tools(self.tools_node({"messages": loop.messages}))
            loop.record("tools", since)
        return loop.finish("max_iterations")

    async def arun(self, question: str | Sequence[Mapping[str, Any]]) -> AgentRun:
        """Async twin of `run`: the model call runs in a worker thread (or the model's own
        ``achat`` when it has one), tool calls on the running loop."""
        loop = self._start(question)
        achat = getattr(self.model, "achat", None)
        while loop.iteration < self.max_iterations:
            since = self.clock()
            kwargs = loop.model_kwargs()
            if achat is not None:
                response = await achat(loop.messages, **kwargs)
            else:
                response = await asyncio.to_thread(self.model.chat, loop.messages, **kwargs)
            loop.record("agent", since)
            if not loop.took_turn(response):
                return loop.finish("final_answer")
            since = self.clock()
            loop.took_tools(await self.tools_node.ainvoke({"messages": loop.messages}))
            loop.record("tools", since)
        return loop.finish("max_iterations")


def run_agent(
    model: ChatModel,
    registry: ToolRegistry,
    question: str | Sequence[Mapping[str, Any]],
    **options: Any,
) -> AgentRun:
    """One-shot helper: ``AgentGraph(model, registry, **options).run(question)``."""
    graph = AgentGraph(model, registry, **options)
    try:
        return graph.run(question)
    finally:
        if "tools_node" not in options:  # the node was made here: release its threads
            graph.tools_node.close()
