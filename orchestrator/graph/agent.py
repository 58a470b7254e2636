"""The agent loop: agent node -> tools node -> agent ... until an answer, the budget ends, or
calls wait for a person's approval (then `AgentGraph.resume` continues the run)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any, Protocol

from orchestrator.graph._approvals import Approvals, Decision, GraphApprover, Triage
from orchestrator.graph._calls import PendingCall
from orchestrator.graph._loop import Loop, renumbered
from orchestrator.graph.claims import ClaimStore, ClaimStoreError, claims_beside
from orchestrator.graph.hooks import ModelFinished, ModelStarted, RunHooks, safely
from orchestrator.graph.run import AgentRun, StepRecord, StopReason
from orchestrator.graph.state import PausedRun, ResumeError, call_key, new_run_id
from orchestrator.graph.tools_node import ToolRunner, ToolsNode
from orchestrator.llm import ChatModel, ChatResponse, Message, StreamingChatModel, ToolChoice
from tools.approvals import ApprovalRequest, Approve, Deny, StateSigner

if TYPE_CHECKING:
    from tools.telemetry import ToolTracer

__all__ = ["AgentGraph", "AgentRun", "StepRecord", "StopReason", "ToolRegistry", "run_agent"]


class ToolRegistry(ToolRunner, Protocol):
    """A `ToolRunner` that also exports OpenAI tool definitions (`tools.LocalToolRegistry`)."""

    def to_openai_tools(self, *, strict: bool = False) -> list[dict[str, Any]]:
        """Chat Completions tool definitions for every registered tool."""
        ...


def _utc_now() -> datetime:
    return datetime.now(timezone.utc)


class AgentGraph:
    """agent -> tools -> agent ... until the model answers without tool calls.

    The model is offered the registry's OpenAI tool definitions (strict when the model
    `supports_strict_tools`), or the ``tools`` given here. Each model turn that calls tools
    is followed by a `ToolsNode` run answering every call; the loop ends when a turn has no
    tool calls (``stop_reason="final_answer"``) or after ``max_iterations`` model turns
    (``"max_iterations"``), in which case a final assistant message says the budget ran
    out: the run ends with a message, never with an exception for that.

    Human in the loop: when the registry (or agent view) has an approval policy
    (`tools.approvals.ApprovalPolicy`), a call it says needs a person's approval is asked
    about (``approver``) or *held*: the turn's other calls still run, and the run ends with
    ``stop_reason="awaiting_approval"``, its ``pending_approvals`` and a JSON-serialisable
    ``state``. `resume` takes that state and ``{call_id: Approve() | Approve(arguments=...) |
    Deny("why")}``: approved calls run once, with exactly the approved arguments; denied ones
    are answered with ``permission_denied`` and the person's words; once every held call of
    the turn is decided, the answers go into the conversation in call order and the model
    continues. Each decision is claimed in ``claims`` first, so resuming the same state twice
    never runs a call twice (see `orchestrator.graph.claims`).

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
        agent_name: str = "main",
        approver: GraphApprover | None = None,
        hold_for_approval: bool = True,
        claims: ClaimStore | None = None,
        max_state_age: timedelta | None = timedelta(days=30),
        state_signer: StateSigner | None = None,
        tracer: ToolTracer | None = None,
        provider: str | None = None,
        hooks: RunHooks | None = None,
        clock: Callable[[], float] = time.perf_counter,
        now: Callable[[], datetime] = _utc_now,
    ) -> None:
        """Wire the loop.

        Args:
            model: The chat model (`OpenAIChatModel`, `OfflineModel`, or any `ChatModel`).
            registry: Executes the calls and provides the tool definitions; its approval
                policy (``registry.policy``, a view's own or its registry's) says which calls
                need a person.
            tools_node: The node that runs calls (default: ``ToolsNode(registry)``).
            max_iterations: Most model turns per run (>= 1).
            system_prompt: Prepended as a system message when the input has none.
            tools: Tool definitions to offer instead of the whole registry (e.g. a
                routed subset); an empty list offers none.
            tool_choice: Sent on every turn (None: the model decides).
            initial_tool_choice: Sent on the first turn only, overriding ``tool_choice``
                (force a first call, then let the model answer).
            strict: Export strict schemas; default: ``model.supports_strict_tools``.
            agent_name: The agent type (trace spans, and a paused state resumes only in a
                graph of the same agent type).
            approver: Asked, on the calling thread, one call at a time in call order, about
                each call that needs approval: `Approve`, `Deny`, or None to hold the call.
                Default: the registry's ``approver`` if it has one; else calls are held.
            hold_for_approval: False: never pause; calls that need approval (and that no
                approver decided) are left to the registry, which refuses them with
                ``permission_denied`` (for runs nobody can resume).
            claims: Where resumes claim the calls they decide (default: beside the
                approvals of the registry's policy, see `claims_beside`: the ledger file
                next to the approvals file, or their PostgreSQL database, so every graph,
                process and host sharing the approvals runs an approved call once; in this
                graph's memory when the approvals are kept nowhere).
            max_state_age: A paused state older than this is refused by `resume` (claims
                are kept as long; None: no limit).
            state_signer: Signs paused states and verifies them on `resume` (an edited state is
                refused). Default: a key of this graph's own, in memory, so its states resume
                only through this graph; give every graph that resumes a state the same signer
                (``StateSigner.from_env(os.environ)``: the user's key file) to resume in
                another process.
            tracer: Opens an ``invoke_agent`` span around each run and resume and a
                ``chat`` span around each model request (give the registry the same
                tracer for its tool spans: one question is one trace).
            provider: ``gen_ai.provider.name`` of the model's spans (e.g. ``openai``).
            hooks: Told when each model request starts and ends (and its streamed text,
                for a model that streams), and, through the tools node this graph makes,
                about each tool call (give a ``tools_node`` built with the same hooks).
            clock: Seconds, for timings (injectable).
            now: The current UTC time, for the state's ``paused_at`` (injectable).

        Raises:
            ValueError: For ``max_iterations < 1``, or a ``max_state_age`` longer than the
                claim store's ``retention``.
        """
        if max_iterations < 1:
            raise ValueError(f"max_iterations must be >= 1, got {max_iterations}")
        self.model = model
        self.registry = registry
        self.tools_node = tools_node if tools_node is not None else ToolsNode(registry, hooks=hooks)
        self.max_iterations = max_iterations
        self.system_prompt = system_prompt
        self._tools = [dict(t) for t in tools] if tools is not None else None
        self.tool_choice = tool_choice
        self.initial_tool_choice = initial_tool_choice
        self.strict = strict
        self.agent_name = agent_name
        self.approver = approver if approver is not None else getattr(registry, "approver", None)
        self.hold_for_approval = hold_for_approval
        self.claims: ClaimStore = claims if claims is not None else _default_claims(registry, max_state_age)
        self.max_state_age = max_state_age
        self.state_signer = state_signer if state_signer is not None else StateSigner.ephemeral()
        self.tracer = tracer
        self.provider = provider
        self.hooks = hooks
        self.clock = clock
        self.now = now
        retention = getattr(self.claims, "retention", None)
        if isinstance(retention, timedelta) and (max_state_age is None or max_state_age > retention):
            raise ValueError(
                f"max_state_age ({max_state_age}) must not exceed the claim store's retention ({retention}): a "
                "state older than the claims kept could be resumed twice"
            )
        self._approvals = Approvals(registry, self.approver)

    def tool_definitions(self) -> list[dict[str, Any]]:
        """The tool definitions the model is given on each turn."""
        if self._tools is not None:
            return [dict(t) for t in self._tools]
        strict = self.strict if self.strict is not None else self.model.supports_strict_tools
        return self.registry.to_openai_tools(strict=strict)

    # ------------------------------------------------------------------ entry points

    def run(self, question: str | Sequence[Mapping[str, Any]], *, run_id: str | None = None) -> AgentRun:
        """Run the loop until an answer, the budget's end, or calls that wait for a person.

        Args:
            question: A user message text, or a whole conversation (OpenAI format; copied,
                never modified).
            run_id: The run's id (default: a new ``run_`` id), e.g. one already recorded.

        Returns:
            The finished run, or a paused one (``status == "awaiting_approval"``).

        Raises:
            ChatModelError: The model could not produce a turn (unreachable endpoint, HTTP
                error after retries, malformed response). Tool failures never raise.
        """
        loop = self._start(question, run_id)
        with self._agent_span(loop.run_id):
            return self._drive(loop)

    async def arun(self, question: str | Sequence[Mapping[str, Any]], *, run_id: str | None = None) -> AgentRun:
        """Async twin of `run`: the model call runs in a worker thread (or the model's own
        ``achat`` when it has one), tool calls on the running loop, the approver in a worker
        thread."""
        loop = self._start(question, run_id)
        with self._agent_span(loop.run_id):
            return await self._adrive(loop)

    def resume(self, state: Mapping[str, Any], decisions: Mapping[str, Approve | Deny] | None = None) -> AgentRun:
        """Continue a paused run with a person's decisions about its held calls.

        Args:
            state: ``AgentRun.state`` of a run that ended ``awaiting_approval`` (as
                returned, or after a JSON round trip; the whole ``AgentRun.to_dict()`` is
                accepted too). Never modified.
            decisions: Call id -> `Approve` (``arguments=`` to run edited arguments,
                ``remember=True`` to store the approval for the tool's version,
                ``shown_hash=`` to refuse arguments other than those shown) or `Deny`. Calls
                not decided here are asked about (``approver``) or stay held.

        Returns:
            The run, finished or paused again (undecided calls, or new calls of a later
            turn that need approval); its ``state`` is the one to resume next.

        Raises:
            ResumeError: The state was altered or belongs to another agent, is too old, a
                decision names no held call or approves other arguments than shown, or a
                decided call was claimed before (resumed already, here or in another
                process). Nothing ran.
            ChatModelError: As for `run`, once the model continues.
        """
        paused, chosen = self._prepare_resume(state, decisions)
        loop = Loop.from_paused(paused, clock=self.clock, max_iterations=self.max_iterations)
        with self._agent_span(loop.run_id):
            undecided = [i for i in sorted(paused.pending) if i not in chosen]
            asked = self._ask_all([paused.pending[i] for i in undecided])
            chosen.update({i: d for i, d in zip(undecided, asked, strict=True) if isinstance(d, (Approve, Deny))})
            out = self._decide(loop, paused, chosen)
            self._run_batch(loop, out)
            return self._drive(loop)

    async def aresume(
        self, state: Mapping[str, Any], decisions: Mapping[str, Approve | Deny] | None = None
    ) -> AgentRun:
        """Async twin of `resume`."""
        import asyncio

        paused, chosen = self._prepare_resume(state, decisions)
        loop = Loop.from_paused(paused, clock=self.clock, max_iterations=self.max_iterations)
        with self._agent_span(loop.run_id):
            undecided = [i for i in sorted(paused.pending) if i not in chosen]
            asked = [await asyncio.to_thread(self._ask, paused.pending[i]) for i in undecided]
            chosen.update({i: d for i, d in zip(undecided, asked, strict=True) if isinstance(d, (Approve, Deny))})
            out = self._decide(loop, paused, chosen)
            await self._arun_batch(loop, out)
            return await self._adrive(loop)

    # ------------------------------------------------------------------ the loop

    def _start(self, question: str | Sequence[Mapping[str, Any]], run_id: str | None = None) -> Loop:
        if isinstance(question, str):
            messages: list[Message] = [{"role": "user", "content": question}]
        else:
            messages = [dict(m) for m in question]
        if self.system_prompt and not (messages and messages[0].get("role") == "system"):
            messages.insert(0, {"role": "system", "content": self.system_prompt})
        return Loop(messages, run_id=run_id or new_run_id(), clock=self.clock, max_iterations=self.max_iterations)

    def _model_kwargs(self, loop: Loop) -> dict[str, Any]:
        tools = self.tool_definitions()
        choice = self.tool_choice
        if loop.iteration == 0 and self.initial_tool_choice is not None:
            choice = self.initial_tool_choice
        kwargs: dict[str, Any] = {"tools": tools or None, "tool_choice": choice if tools else None}
        if self.hooks is not None and isinstance(self.model, StreamingChatModel) and self.model.streams:
            kwargs["on_delta"] = self.hooks.on_model_delta
        return kwargs

    def _model_name(self) -> str:
        name = getattr(self.model, "model", None)
        return name if isinstance(name, str) else type(self.model).__name__

    def _tell_start(self, loop: Loop) -> None:
        if self.hooks is not None:
            event = ModelStarted(self.agent_name, loop.iteration + 1, self.max_iterations, self._model_name())
            safely(self.hooks.on_model_start, event)

    def _tell_end(self, loop: Loop, since: float, calls: int) -> None:
        if self.hooks is not None:
            duration = round((self.clock() - since) * 1000, 3)
            safely(self.hooks.on_model_end, ModelFinished(self.agent_name, loop.iteration, duration, calls))

    def _drive(self, loop: Loop) -> AgentRun:
        while True:
            if not loop.close_turn():
                return loop.pause(self.agent_name, self.now(), self.state_signer)
            if loop.iteration >= self.max_iterations:
                return loop.finish("max_iterations")
            since = self.clock()
            self._tell_start(loop)
            with self._chat_span() as span:
                response = self.model.chat(loop.messages, **self._model_kwargs(loop))
                self._record_response(span, response)
            loop.record("agent", since)
            calls = loop.took_turn(response)
            self._tell_end(loop, since, len(calls))
            if not calls:
                return loop.finish("final_answer")
            out = self._triage(calls)
            if out.asks:
                self._approvals.settle(out, self._ask_all([request for _, request in out.asks]))
            self._hold(loop, out)
            self._run_batch(loop, out)

    async def _adrive(self, loop: Loop) -> AgentRun:
        import asyncio

        achat = getattr(self.model, "achat", None)
        while True:
            if not loop.close_turn():
                return loop.pause(self.agent_name, self.now(), self.state_signer)
            if loop.iteration >= self.max_iterations:
                return loop.finish("max_iterations")
            since = self.clock()
            kwargs = self._model_kwargs(loop)
            self._tell_start(loop)
            with self._chat_span() as span:
                if achat is not None:
                    response = await achat(loop.messages, **kwargs)
                else:
                    response = await asyncio.to_thread(self.model.chat, loop.messages, **kwargs)
                self._record_response(span, response)
            loop.record("agent", since)
            calls = loop.took_turn(response)
            self._tell_end(loop, since, len(calls))
            if not calls:
                return loop.finish("final_answer")
            out = self._triage(calls)
            if out.asks:
                asked = [await asyncio.to_thread(self._ask, request) for _, request in out.asks]
                self._approvals.settle(out, asked)
            self._hold(loop, out)
            await self._arun_batch(loop, out)

    def _triage(self, calls: list[PendingCall]) -> Triage:
        if getattr(self.registry, "policy", None) is None:
            return Triage(run=list(calls))  # no approval gate: nothing to look at
        out = self._approvals.triage(calls)
        if not self.hold_for_approval and out.held:  # nobody can resume: the registry refuses them
            out.run.extend(call for call in calls if call.index in out.held)
            out.run.sort(key=lambda call: call.index)
            out.held = {}
        return out

    @staticmethod
    def _hold(loop: Loop, out: Triage) -> None:
        if loop.turn is not None:
            loop.turn.held.update(out.held)

    def _run_batch(self, loop: Loop, out: Triage) -> None:
        if not out.run and not out.refused:
            return
        since = self.clock()
        if out.run:
            loop.took_answers(out.run, self.tools_node._run_calls(renumbered(out.run)))
        self._answer_refused(loop, out)
        loop.record("tools", since)

    async def _arun_batch(self, loop: Loop, out: Triage) -> None:
        if not out.run and not out.refused:
            return
        since = self.clock()
        if out.run:
            loop.took_answers(out.run, await self.tools_node._arun_calls(renumbered(out.run)))
        self._answer_refused(loop, out)
        loop.record("tools", since)

    def _answer_refused(self, loop: Loop, out: Triage) -> None:
        if out.refused:
            calls = [call for call, _ in out.refused]
            update = self.tools_node._answer_calls(renumbered(calls), [result for _, result in out.refused])
            loop.took_answers(calls, update)

    # ------------------------------------------------------------------ approvals

    def _ask(self, request: ApprovalRequest) -> object:
        """The approver's answer (None when there is none). An exception it raised is
        returned: during a run the call is then refused as "asking failed"; during a resume
        it stays held."""
        approver = self.approver
        if approver is None:
            return None
        try:
            return approver(request)
        except Exception as exc:
            return exc

    def _ask_all(self, requests: Sequence[ApprovalRequest]) -> list[object]:
        return [self._ask(request) for request in requests]

    def _prepare_resume(
        self, state: Mapping[str, Any], decisions: Mapping[str, Approve | Deny] | None
    ) -> tuple[PausedRun, dict[int, Decision]]:
        """The checked state and decisions (nothing claimed or run yet)."""
        paused = PausedRun.from_dict(state, signer=self.state_signer)
        if paused.agent != self.agent_name:
            raise ResumeError(
                f"run {paused.run_id} was paused by the {paused.agent!r} agent; resume it with that agent's graph "
                f"(python -m orchestrator --agent {paused.agent}), not the {self.agent_name!r} agent's"
            )
        self._check_age(paused)
        chosen = self._approvals.check_decisions(paused, decisions or {})
        if not chosen and self.approver is None:
            waiting = ", ".join(repr(r.call_id) for r in paused.pending.values())
            raise ResumeError(f"no decisions given: decide each held call ({waiting}) with Approve() or Deny('why')")
        return paused, chosen

    def _check_age(self, paused: PausedRun) -> None:
        now = self.now()
        if paused.paused_at > now + timedelta(days=1):
            raise ResumeError(
                f"run {paused.run_id} claims to have paused at {paused.paused_at:%Y-%m-%d %H:%M} UTC, in the future; "
                "the state was altered or the clock is wrong, so nothing was run"
            )
        limit = self.max_state_age
        if limit is not None and now - paused.paused_at > limit:
            raise ResumeError(
                f"run {paused.run_id} paused on {paused.paused_at:%Y-%m-%d}, longer ago than {limit.days} days; its "
                "held calls are no longer resumed (ask the question again)"
            )

    def _decide(self, loop: Loop, paused: PausedRun, chosen: Mapping[int, Decision]) -> Triage:
        """Claim every decided call (all or none), then turn the decisions into calls to run
        and refusals.

        Raises:
            ResumeError: a decided call was claimed before; nothing is claimed then.
        """
        for index, decision in chosen.items():  # an approver's answers are checked like given ones
            if isinstance(decision, Approve):
                self._approvals._check_approve(paused.pending[index], decision)
        calls = paused.calls
        keys = [call_key(paused.iterations, calls[i].id) for i in sorted(chosen)]
        if keys:
            try:
                taken = self.claims.claim(paused.run_id, keys)
            except ClaimStoreError as exc:
                raise ResumeError(str(exc)) from exc
            if taken:
                shown = ", ".join(repr(key.split("/", 1)[1]) for key in taken)
                raise ResumeError(
                    f"call(s) {shown} of run {paused.run_id} were resumed before (here or in another process); "
                    "an approved call runs once, so nothing was run. If that resume paused again, continue from "
                    "the state it returned."
                )
        loop.decided_now(calls, {i: ("approved" if isinstance(d, Approve) else "denied") for i, d in chosen.items()})
        return self._approvals.decided(paused, chosen)

    # ------------------------------------------------------------------ tracing

    def _agent_span(self, run_id: str) -> contextlib.AbstractContextManager[Any]:
        if self.tracer is None:
            return contextlib.nullcontext()
        return self.tracer.agent_span(self.agent_name, conversation_id=run_id)

    @contextlib.contextmanager
    def _chat_span(self) -> Iterator[Any]:
        if self.tracer is None:
            yield None
            return
        with self.tracer.chat_span(self._model_name(), provider=self.provider) as span:
            yield span

    def _record_response(self, span: Any, response: ChatResponse) -> None:
        if span is None or self.tracer is None:
            return
        usage = response.usage or {}
        self.tracer.record_chat_response(
            span,
            response_model=response.model,
            finish_reasons=[response.finish_reason] if response.finish_reason else None,
            input_tokens=_int_or_none(usage.get("prompt_tokens")),
            output_tokens=_int_or_none(usage.get("completion_tokens")),
        )


def _default_claims(registry: ToolRegistry, max_state_age: timedelta | None) -> ClaimStore:
    """`claims_beside` the approvals of the registry's policy, kept at least as long as a
    state may be resumed."""
    store = getattr(getattr(registry, "policy", None), "store", None)
    keep = timedelta(days=36_500) if max_state_age is None else max(max_state_age, timedelta(days=30))
    return claims_beside(store, retention=keep)


def _int_or_none(value: object) -> int | None:
    return value if type(value) is int else None


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
