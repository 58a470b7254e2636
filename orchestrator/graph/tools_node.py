"""`ToolsNode`: the graph node that executes a model's tool calls through a registry."""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypedDict, cast

from orchestrator.graph._calls import PendingCall, messages_of, pending_calls
from orchestrator.graph._content import encode_view, model_view, shown_name, trace_arguments
from orchestrator.graph._pool import DaemonPool, PoolExhausted
from orchestrator.graph._threaded import run_in_pool
from orchestrator.graph._truncate import MIN_OUTPUT_CHARS, dumps
from orchestrator.graph._watch import CallWatch, watches
from tools.base import BaseTool
from tools.errors import ErrorType
from tools.result import ToolResult

if TYPE_CHECKING:  # asyncio is imported on first use: importing the graph stays light
    import asyncio

    from orchestrator.graph.hooks import RunHooks
    from tools.approvals import ApprovedCall
    from tools.artifacts import ResultBudget

__all__ = ["ToolCallRecord", "ToolRunner", "ToolsNode"]

_log = logging.getLogger(__name__)

RawArguments = str | bytes | Mapping[str, Any] | None


class ToolRunner(Protocol):
    """What `ToolsNode` needs from a registry (`tools.LocalToolRegistry` and its agent views
    provide it).

    A runner with approvals also takes ``approved=`` (a `tools.approvals.ApprovedCall`: a
    person's approval of exactly this call) on both call methods; the node passes it only for
    approved calls, which come only from a runner with an approval policy, so a runner
    without approvals leaves it out.
    """

    def call_tool_raw(self, name: str, arguments: RawArguments, /, *, call_id: str | None = None) -> ToolResult:
        """Run a tool with arguments as the model sent them; never raises.

        ``call_id`` is the model's ``tool_call`` id (for the call's trace span).
        """
        ...

    async def acall_tool_raw(self, name: str, arguments: RawArguments, /, *, call_id: str | None = None) -> ToolResult:
        """Async twin of `call_tool_raw`."""
        ...

    def get_tool(self, name: str, /) -> Any:
        """The registered tool object, or None."""
        ...


class _ApprovingRunner(Protocol):
    """A `ToolRunner` with approvals (what runs an approved call)."""

    def call_tool_raw(
        self, name: str, arguments: RawArguments, /, *, call_id: str | None = None, approved: ApprovedCall | None = None
    ) -> ToolResult: ...

    async def acall_tool_raw(
        self, name: str, arguments: RawArguments, /, *, call_id: str | None = None, approved: ApprovedCall | None = None
    ) -> ToolResult: ...


class ToolCallRecord(TypedDict):
    """One executed call, for tracing (the ``tool_results`` entries of the node's update).

    ``arguments`` is a dict when the model's arguments parsed as a JSON object, else the
    text as sent (cut past 20,000 characters). ``metadata`` is the result envelope's
    metadata (``tool_name``, ``tool_version``, ``request_id``, ``started_at``,
    ``duration_ms``, ``attempts`` ...), which the tool message leaves out;
    ``request_id`` is repeated at the top for log correlation. ``duration_ms`` is the time
    the node spent on the call (queueing included).
    """

    tool_call_id: str
    name: str
    arguments: Any
    status: str
    error_type: str | None
    request_id: str | None
    duration_ms: float
    truncated: bool
    metadata: dict[str, Any]


def _failure(name: str, error_type: ErrorType, message: str, *, retryable: bool = False) -> ToolResult:
    return ToolResult.failure(error_type, message, retryable=retryable, metadata={"tool_name": name})


class ToolsNode:
    """Runs the tool calls of the last assistant message and answers each one.

    A plain callable ``state -> update`` usable in the project's `AgentGraph`, as a node of
    a LangGraph ``StateGraph``, or on its own. ``state["messages"]`` is a list of OpenAI
    chat messages (LangChain message objects are read too); the update is::

        {"messages": [{"role": "tool", "tool_call_id": ..., "content": "<compact JSON>"}, ...],
         "tool_results": [ToolCallRecord, ...]}

    with one message per call of the last assistant message, in call order (calls already
    answered by later tool messages are skipped). The content is what the model can use:
    ``{"status": "success", "data": ...}`` or ``{"status": "error", "error": "<message>",
    "error_type": ...}``; the envelope's metadata goes to ``tool_results`` only.

    Guarantees: every ``tool_call_id`` is answered exactly once and the node never raises
    for what a model or a tool can do wrong: an unknown or hostile tool name, arguments that
    are not JSON or not a JSON object (nested thousands deep, NaN, lone surrogates, many
    megabytes), validation errors, tool exceptions (also one escaping a tool's own error
    handling), timeouts (``call_timeout``), a pool whose workers are all stuck, or a
    cancelled run (calls not finished are answered with ``cancelled`` errors). A state
    without messages or without pending calls gives an empty update. Content is strict
    JSON that UTF-8 can carry; oversized results are cut to ``max_output_chars`` while
    staying valid JSON with a ``truncated`` note saying how much was cut.

    Concurrency: independent calls run concurrently, at most ``max_parallel`` at a time;
    sync tools run on the node's own worker threads (daemon threads, so a hung tool never
    blocks interpreter exit), async tools on the event loop; a tool with ``sequential =
    True`` (or ``run_in_thread = False``) runs alone, after the calls before it and before
    the calls after it. ``call_timeout`` bounds the time from handing a call to the workers
    to its answer (queueing included). A timed-out sync call cannot be killed: its thread
    is abandoned (it finishes in the background, its result dropped) and a new worker takes
    its place, at most ``max_abandoned`` times over while those threads are still stuck;
    past that, calls are answered at once with an ``execution_error`` saying so.
    """

    def __init__(
        self,
        registry: ToolRunner,
        *,
        max_parallel: int = 16,
        max_output_chars: int = 20_000,
        call_timeout: float | None = None,
        max_abandoned: int | None = None,
        name: str = "tools",
        hooks: RunHooks | None = None,
        budget: ResultBudget | None = None,
    ) -> None:
        """Configure the node.

        Args:
            registry: Where calls are executed (`tools.LocalToolRegistry`).
            max_parallel: Most calls running at once (also the number of worker threads).
            max_output_chars: Longest tool message content; at least 512.
            call_timeout: Seconds a single call may take in this node, waiting for a
                worker included, on top of the registry's per-tool timeouts; None for no
                node-level limit.
            max_abandoned: Most worker threads left running in timed-out calls at once
                (each is replaced by a new worker); default ``max_parallel``.
            name: The node's name in traces and graphs.
            hooks: Told when each call starts, reports progress (``tools.progress``) and
                ends (`orchestrator.graph.hooks.RunHooks`); None: no hooks, no cost.
            budget: A result budget (`tools.artifacts.ResultBudget`): a successful result
                over its call's budget is stored as an artifact and the model is shown its
                start, size and handle (``read_artifact``/``search_artifact`` read the
                rest) instead of a cut; None: results are cut to ``max_output_chars``.

        Raises:
            ValueError: For ``max_parallel < 1``, ``max_output_chars < 512``, a
                non-positive ``call_timeout`` or a negative ``max_abandoned``.
        """
        if max_parallel < 1:
            raise ValueError(f"max_parallel must be >= 1, got {max_parallel}")
        if max_output_chars < MIN_OUTPUT_CHARS:
            raise ValueError(f"max_output_chars must be >= {MIN_OUTPUT_CHARS}")
        if call_timeout is not None and call_timeout <= 0:
            raise ValueError(f"call_timeout must be > 0 seconds or None, got {call_timeout}")
        if max_abandoned is not None and max_abandoned < 0:
            raise ValueError(f"max_abandoned must be >= 0 or None, got {max_abandoned}")
        self._registry = registry
        self._max_abandoned = max_abandoned
        self._max_parallel = max_parallel
        self._max_output_chars = max_output_chars
        self._call_timeout = call_timeout
        self._budget = budget
        self.name = name
        self.hooks = hooks
        self._pool: DaemonPool | None = None
        self._pool_lock = threading.Lock()

    def __repr__(self) -> str:
        return (
            f"ToolsNode(max_parallel={self._max_parallel}, "
            f"max_output_chars={self._max_output_chars}, call_timeout={self._call_timeout})"
        )

    # ------------------------------------------------------------------ entry points

    def __call__(self, state: Any) -> dict[str, Any]:
        """Run the pending calls synchronously and return the update.

        Works inside a running event loop too (no loop is created: calls run on worker
        threads, a single call inline). A ``KeyboardInterrupt`` while waiting propagates;
        calls already running finish in the background.
        """
        return self._run_calls(pending_calls(messages_of(state)))

    def _run_calls(self, calls: Sequence[PendingCall]) -> dict[str, Any]:
        """Run ``calls`` (positions ``0..n-1``) and return the update answering each, in order.

        What `__call__` does with the pending calls of a state; `AgentGraph` gives it the calls
        of a turn that may run now (without the ones held for a person, with the approved ones).
        """
        calls = list(calls)
        if not calls:
            return {"messages": [], "tool_results": []}
        watched = watches(self.hooks, calls)
        if len(calls) == 1 and self._call_timeout is None:
            return self._update(calls, [self._run_inline(calls[0], watched.get(0))], watched)
        outcomes: list[tuple[ToolResult, float]] = []
        for group in self._groups(calls):
            tool = self._registry.get_tool(group[0].name) if group[0].name else None
            if len(group) == 1 and tool is not None and not getattr(tool, "run_in_thread", True):
                # thread-affine: on the caller's thread
                outcomes.append(self._run_inline(group[0], watched.get(group[0].index)))
                continue
            outcomes += run_in_pool(
                self._worker_pool(),
                [self._job(call, watched.get(call.index)) for call in group],
                timeout=self._call_timeout,
                on_timeout=functools.partial(self._timed_out_in, group),
                on_error=functools.partial(self._escaped_in, group),
                labels=[call.name for call in group],
            )
        return self._update(calls, outcomes, watched)

    async def ainvoke(self, state: Any) -> dict[str, Any]:
        """Async entry: run the pending calls on the running loop and return the update.

        Cancelling the awaiting task cancels the calls still running; the node then still
        returns a complete update (``cancelled`` errors for unfinished calls) instead of
        raising `asyncio.CancelledError`.
        """
        return await self._arun_calls(pending_calls(messages_of(state)))

    async def _arun_calls(self, calls: Sequence[PendingCall]) -> dict[str, Any]:
        """Async twin of `run_calls`."""
        calls = list(calls)
        if not calls:
            return {"messages": [], "tool_results": []}
        return await self._ainvoke(calls)

    def _answer_calls(self, calls: Sequence[PendingCall], results: Sequence[ToolResult]) -> dict[str, Any]:
        """The update answering ``calls`` with ``results`` that were decided without running
        them (a call a person denied); content is encoded and cut like any answer."""
        return self._update(calls, [(result, 0.0) for result in results], watches(self.hooks, calls))

    def close(self) -> None:
        """Release the worker threads (busy ones finish their current call first)."""
        with self._pool_lock:
            if self._pool is not None:
                self._pool.shutdown()
                self._pool = None

    def __enter__(self) -> ToolsNode:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # ------------------------------------------------------------------ scheduling

    async def _ainvoke(self, calls: list[PendingCall]) -> dict[str, Any]:
        import asyncio

        outcomes: list[tuple[ToolResult, float] | None] = [None] * len(calls)
        semaphore = asyncio.Semaphore(self._max_parallel)
        watched = watches(self.hooks, calls)
        try:
            for group in self._groups(calls):
                await asyncio.gather(*(self._run_one(c, semaphore, outcomes, watched.get(c.index)) for c in group))
        except asyncio.CancelledError:
            task = asyncio.current_task()
            uncancel = getattr(task, "uncancel", None)
            if uncancel is not None:  # Python >= 3.11: we handled this cancellation
                uncancel()
            _log.warning("tool calls cancelled; answering the unfinished ones as cancelled")
        message = "The call was cancelled before it finished because the run was stopped."
        done = [
            outcome if outcome is not None else (_failure(call.name, "cancelled", message, retryable=True), 0.0)
            for call, outcome in zip(calls, outcomes, strict=True)
        ]
        return self._update(calls, done, watched)

    def _groups(self, calls: list[PendingCall]) -> list[list[PendingCall]]:
        """Consecutive parallel calls form one group; a sequential call is a group alone."""
        groups: list[list[PendingCall]] = []
        current: list[PendingCall] = []
        for call in calls:
            if self._is_alone(call.name):
                if current:
                    groups.append(current)
                    current = []
                groups.append([call])
            else:
                current.append(call)
        if current:
            groups.append(current)
        return groups

    def _is_alone(self, name: str) -> bool:
        tool = self._registry.get_tool(name) if name else None
        return tool is not None and (
            bool(getattr(tool, "sequential", False)) or not getattr(tool, "run_in_thread", True)
        )

    async def _run_one(
        self,
        call: PendingCall,
        semaphore: asyncio.Semaphore,
        outcomes: list[tuple[ToolResult, float] | None],
        watch: CallWatch | None = None,
    ) -> None:
        import asyncio

        started = time.perf_counter()
        try:
            if self._call_timeout is None:
                result = await self._execute_limited(call, semaphore, watch)
            else:  # the deadline covers waiting for the semaphore and a worker too
                result = await asyncio.wait_for(self._execute_limited(call, semaphore, watch), self._call_timeout)
        except asyncio.TimeoutError:
            result = self._timed_out(call)
        except PoolExhausted as exc:
            result = self._exhausted(call, exc)
        except Exception as exc:
            result = self._escaped(call, exc)
        outcomes[call.index] = (result, (time.perf_counter() - started) * 1000)

    async def _execute_limited(
        self, call: PendingCall, semaphore: asyncio.Semaphore, watch: CallWatch | None = None
    ) -> ToolResult:
        async with semaphore:
            return await self._execute(call, watch)

    def _job(self, call: PendingCall, watch: CallWatch | None = None) -> Callable[[], ToolResult]:
        return functools.partial(self._call_sync, call, watch)

    def _call_sync(self, call: PendingCall, watch: CallWatch | None = None) -> ToolResult:
        if watch is not None:
            with watch.running():
                return watch.ended(self._call_sync(call))
        if call.approved is None:
            return self._registry.call_tool_raw(call.name, call.arguments, call_id=call.id)
        runner = cast("_ApprovingRunner", self._registry)
        return runner.call_tool_raw(call.name, call.arguments, call_id=call.id, approved=call.approved)

    async def _call_async(self, call: PendingCall, watch: CallWatch | None = None) -> ToolResult:
        if watch is not None:
            with watch.running():
                return watch.ended(await self._call_async(call))
        if call.approved is None:
            return await self._registry.acall_tool_raw(call.name, call.arguments, call_id=call.id)
        runner = cast("_ApprovingRunner", self._registry)
        return await runner.acall_tool_raw(call.name, call.arguments, call_id=call.id, approved=call.approved)

    def _timed_out_in(self, group: Sequence[PendingCall], index: int) -> ToolResult:
        return self._timed_out(group[index])

    def _escaped_in(self, group: Sequence[PendingCall], index: int, exc: BaseException) -> ToolResult:
        if isinstance(exc, PoolExhausted):
            return self._exhausted(group[index], exc)
        return self._escaped(group[index], exc)

    def _timed_out(self, call: PendingCall) -> ToolResult:
        return _failure(
            call.name,
            "timeout",
            f"The tool '{shown_name(call.name)}' did not finish within {self._call_timeout:g} seconds. "
            "Try again with a smaller request, or take another approach.",
            retryable=True,
        )

    def _exhausted(self, call: PendingCall, exc: PoolExhausted) -> ToolResult:
        _log.warning("tool call %s (%r) not run: %s", call.id, shown_name(call.name), exc)
        why = (
            f"there is no worker free, because {exc.abandoned} earlier tool calls timed out and are still running"
            if exc.label is None
            else f"{exc.abandoned} earlier calls of it timed out and are still running"
        )
        return _failure(
            call.name,
            "execution_error",
            f"The tool '{shown_name(call.name)}' was not run: {why}. Try again later, or take another approach.",
            retryable=True,
        )

    async def _execute(self, call: PendingCall, watch: CallWatch | None = None) -> ToolResult:
        import asyncio

        tool = self._registry.get_tool(call.name) if call.name else None
        if tool is not None and _runs_on_loop(tool):
            return await self._call_async(call, watch)
        pool = self._worker_pool()
        future = pool.submit(functools.partial(self._call_sync, call, watch), label=call.name)
        try:
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:  # timed out or the run was cancelled
            pool.abandon(future)
            raise

    def _run_inline(self, call: PendingCall, watch: CallWatch | None = None) -> tuple[ToolResult, float]:
        started = time.perf_counter()
        try:
            result = self._call_sync(call, watch)
        except Exception as exc:
            result = self._escaped(call, exc)
        return result, (time.perf_counter() - started) * 1000

    def _escaped(self, call: PendingCall, exc: BaseException) -> ToolResult:
        _log.error(
            "tool call %s (%r) raised %s past the registry",
            call.id,
            shown_name(call.name),
            type(exc).__name__,
            exc_info=exc,
        )
        return _failure(
            call.name,
            "execution_error",
            f"The tool '{shown_name(call.name)}' failed with an internal error. This was not caused by "
            "your arguments; try again later or take another approach.",
        )

    def _worker_pool(self) -> DaemonPool:
        with self._pool_lock:
            if self._pool is None:
                self._pool = DaemonPool(self._max_parallel, max_abandoned=self._max_abandoned)
            return self._pool

    # ------------------------------------------------------------------ answers

    def _update(
        self,
        calls: Sequence[PendingCall],
        outcomes: Sequence[tuple[ToolResult, float]],
        watched: Mapping[int, CallWatch] | None = None,
    ) -> dict[str, Any]:
        messages: list[dict[str, Any]] = []
        records: list[ToolCallRecord] = []
        for call, (outcome, duration_ms) in zip(calls, outcomes, strict=True):
            if watched and (watch := watched.get(call.index)) is not None:
                watch.ended(outcome)  # timeouts, cancellations, refusals: answered here
            content, truncated, result = self._content(call, outcome)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": content})
            metadata = dict(result.metadata)
            request_id = metadata.get("request_id")
            records.append(
                ToolCallRecord(
                    tool_call_id=call.id,
                    name=call.name,
                    arguments=trace_arguments(call.arguments),
                    status=result.status,
                    error_type=result.error.type if result.error is not None else None,
                    request_id=request_id if isinstance(request_id, str) else None,
                    duration_ms=round(duration_ms, 3),
                    truncated=truncated,
                    metadata=metadata,
                )
            )
        return {"messages": messages, "tool_results": records}

    def _content(self, call: PendingCall, result: ToolResult) -> tuple[str, bool, ToolResult]:
        try:
            view = model_view(result)
            stored = self._budget.apply(view, call.name) if self._budget is not None else None
            text, truncated = encode_view(stored or view, self._max_output_chars)
            truncated = truncated or stored is not None
        except (TypeError, ValueError, RecursionError) as exc:
            _log.error("tool %r returned a result that is not JSON: %s", shown_name(call.name), type(exc).__name__)
            result = ToolResult.failure(
                "execution_error",
                f"The tool '{shown_name(call.name)}' produced a result that could not be encoded as JSON.",
                metadata={"tool_name": call.name, **result.metadata},
            )
            text, truncated = dumps(model_view(result)), False
        return text, truncated, result


def _runs_on_loop(tool: BaseTool[Any, Any]) -> bool:
    """Async tools (and thread-affine sync ones) run on the event loop, others on workers."""
    return not tool.run_in_thread or tool.is_async
