"""``LocalToolRegistry``: explicit registration, one call path, cached schema export.

The registry keeps registration, lookup and the call paths here; what ``register()`` makes
of what it is given is :func:`tools._registration.registered_tool`, the schema export is
:class:`tools._registry_export.RegistryExport` and the approval checks and refusals are
:class:`tools._registry_approvals.RegistryApprovals` (both part of the registry's API).
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, overload

from tools._bound import BoundTool
from tools._executor import ToolExecutor
from tools._exports import ExportCache
from tools._registration import registered_tool
from tools._registry_approvals import RegistryApprovals
from tools._registry_export import RegistryExport
from tools._runner import CallContext, ToolEntry
from tools.base import Arguments, BaseTool
from tools.errors import DuplicateToolError, ToolDefinitionError
from tools.metrics import MetricsSink
from tools.resilience import CircuitBreaker, RetryPolicy
from tools.result import ToolResult

if TYPE_CHECKING:
    from tools.approvals import ApprovalPolicy, ApprovedCall, Approver
    from tools.approvals._gate import ApprovalGate
    from tools.executors import RemoteExecutor
    from tools.routing import ToolManual, ToolRouter, ToolView
    from tools.telemetry import ToolTracer

_UNSET: Any = object()
_F = TypeVar("_F", bound=Callable[..., Any])


class LocalToolRegistry(RegistryExport, RegistryApprovals):
    """Tools by name, each behind a circuit breaker, retry policy, timeout and metrics.

    Args:
        metrics: Sink that receives every call's result (none by default).
        failure_threshold: Consecutive failures that open a tool's circuit breaker.
        reset_timeout: Seconds an open breaker waits before letting a probe call through.
        default_timeout: Seconds a call may take when neither the tool nor the registration
            sets a timeout (None: no limit).
        max_workers: Worker threads shared by this registry's calls that need one (sync
            tools with a timeout, sync tools called from async code). Calls that find every
            worker busy (or abandoned by a timed-out call) are refused at once, never queued.
        max_workers_per_tool: Workers one tool may hold at once, its timed-out calls still
            running included (default: half of ``max_workers``): a tool that hangs fills its
            own share and is then refused, never the whole pool.
        tracer: Opens one OpenTelemetry span per call (a :class:`tools.telemetry.ToolTracer`,
            extra ``otel``); None: no tracing, no cost.
        policy: Consulted before every call (:class:`tools.approvals.ApprovalPolicy`): a call
            that needs a person's approval is a ``permission_denied`` result saying so (not
            run, not counted by the breaker), unless ``approver`` approves it. None: every
            call runs, at no cost.
        approver: Asked synchronously when a call needs approval
            (``(ApprovalRequest) -> Approve | Deny``); needs ``policy``.
        executor: Where registered tools' calls run by default: None for this process,
            or a :class:`~tools.executors.RemoteExecutor` such as
            :class:`~tools.executors.RayExecutor` (the gate, breakers, retries and metrics
            stay here); ``register(..., executor=None)`` keeps one tool here.
        clock: Monotonic clock for the breakers (injectable for tests).
        sleep: Blocking sleep used between retries (injectable for tests).
        async_sleep: Async sleep used between retries of async calls (default ``asyncio.sleep``).
        export_cache_size: Name sets whose exports are kept (least recently used ones are
            dropped); each tool's definitions are kept once per format whatever the sets.
    """

    def __init__(
        self,
        *,
        metrics: MetricsSink | None = None,
        failure_threshold: int = 5,
        reset_timeout: float = 30.0,
        default_timeout: float | None = None,
        max_workers: int = 32,
        max_workers_per_tool: int | None = None,
        tracer: ToolTracer | None = None,
        policy: ApprovalPolicy | None = None,
        approver: Approver | None = None,
        executor: RemoteExecutor | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        async_sleep: Callable[[float], Awaitable[None]] | None = None,
        export_cache_size: int = 256,
    ) -> None:
        self.metrics = metrics
        self._failure_threshold = failure_threshold
        self._reset_timeout = reset_timeout
        self._default_timeout = default_timeout
        self._clock = clock
        self._default_router: ToolRouter | None = None
        self._executor = ToolExecutor(max_workers, max_per_tool=max_workers_per_tool, name="tooldeck-tool")
        self._context = CallContext(
            executor=self._executor,
            metrics=metrics,
            sleep=sleep,
            async_sleep=async_sleep,
            new_breaker=self._new_breaker,
            tracer=tracer,
        )
        self.tracer = tracer
        if approver is not None and policy is None:
            raise ToolDefinitionError("approver= needs policy=: without a policy no call needs approval")
        self.policy = policy
        self.approver = approver
        self.executor = executor
        self._gate: ApprovalGate | None = None
        if policy is not None:
            from tools.approvals._gate import ApprovalGate

            self._gate = ApprovalGate(policy, approver)
        self._entries: dict[str, ToolEntry] = {}
        self._lock = threading.RLock()
        self._exports = ExportCache(export_cache_size)
        self._version = 0

    # ----------------------------------------------------------------- registration

    def register(
        self,
        tool: BaseTool[Any, Any] | Callable[..., Any],
        /,
        *,
        name: str | None = None,
        description: str | None = None,
        parameters: Mapping[str, Any] | None = None,
        preset: Mapping[str, Any] | None = None,
        replace: bool = False,
        timeout: float | None = _UNSET,
        retry: RetryPolicy | None = _UNSET,
        breaker: CircuitBreaker | None = None,
        manual: ToolManual | None = None,
        hidden: bool = False,
        expose_errors: Sequence[type[BaseException] | str] = (),
        executor: RemoteExecutor | None = _UNSET,
    ) -> BaseTool[Any, Any]:
        """Register a tool instance or a plain function; returns the registered tool.

        Args:
            tool: A :class:`~tools.base.BaseTool` instance or a plain function (wrapped in
                a :class:`~tools.function_tool.FunctionTool`).
            name: Register under another name: an alias, e.g. an old name kept callable.
                The alias shares the tool's collaborators but has its own breaker.
            description: Override the description shown to the model.
            parameters: Override the exported schema with a hand-written JSON schema
                (checked against the meta-schema).
            preset: Arguments fixed by this registration: merged under the model's
                arguments on every call and hidden from the exported schema.
            replace: Replace an existing registration of the same name.
            timeout: Seconds per call (default: the tool's ``timeout``, else the
                registry's ``default_timeout``).
            retry: Retry policy for retryable errors (default: the tool's ``retry``).
            breaker: A circuit breaker (default: a fresh one with the registry's settings).
            manual: The manual of this registration, declared by the operator (default: the
                tool's own ``get_manual()``); renamed to the registered name for aliases.
            hidden: Callable on every path but not offered to models: left out of the
                exports unless asked for (``include_hidden=True``). For old names kept so that
                stored conversations replay, without spending prompt tokens on them.
            expose_errors: Exception classes (or dotted class names) whose text the tool's
                author wrote for the model, e.g. a ported tool's own ``ToolError``; other
                unexpected exceptions stay redacted (see :mod:`tools._foreign_errors`).
            executor: Where this tool's calls run (default: the registry's ``executor``);
                None: in this process.

        Raises:
            InvalidToolNameError: the name does not match ``^[a-zA-Z0-9_-]{1,64}$``.
            DuplicateToolError: the name is taken and ``replace`` is false.
            ToolDefinitionError: ``tool`` is neither a tool nor a function, the
                ``parameters`` schema is invalid, or the executor cannot run the tool (it
                cannot be pickled for Ray, say).
        """
        key, instance = registered_tool(tool, name, description, parameters, expose_errors)
        remote = self.executor if executor is _UNSET else executor
        entry = ToolEntry(
            tool=instance,
            remote=remote.prepare(instance) if remote is not None else None,
            breaker=breaker or self._new_breaker(),
            context=self._context,
            retry=instance.retry if retry is _UNSET else retry,
            timeout=(instance.timeout or self._default_timeout) if timeout is _UNSET else timeout,
            preset=dict(preset or {}),
            given_manual=manual.declared_by_operator() if manual is not None else None,
            hidden=hidden,
        )
        with self._lock:
            if key in self._entries and not replace:
                raise DuplicateToolError(
                    f"a tool named {key!r} is already registered; pass replace=True to replace it "
                    "or register this one under another name=."
                )
            self._entries[key] = entry
            self._changed(key)
        return instance

    @overload
    def tool(self, func: _F, /) -> _F: ...

    @overload
    def tool(
        self,
        func: None = None,
        /,
        *,
        name: str | None = None,
        description: str | None = None,
        parameters: Mapping[str, Any] | None = None,
        manual: ToolManual | None = None,
        **options: Any,
    ) -> Callable[[_F], _F]: ...

    def tool(
        self,
        func: _F | None = None,
        /,
        *,
        name: str | None = None,
        description: str | None = None,
        parameters: Mapping[str, Any] | None = None,
        manual: ToolManual | None = None,
        **options: Any,
    ) -> _F | Callable[[_F], _F]:
        """Register a function as a tool, as a decorator; the function is returned unchanged.

        Use it bare (``@registry.tool``) or with options
        (``@registry.tool(name="convert", description="...", manual=ToolManual(...))``);
        other keyword options are those of :meth:`register` (``timeout``, ``retry``, ...).

        Raises:
            ToolDefinitionError: what :meth:`register` raises, at decoration time.
        """

        def decorate(target: _F) -> _F:
            self.register(target, name=name, description=description, parameters=parameters, manual=manual, **options)
            return target

        return decorate if func is None else decorate(func)

    def unregister(self, name: str, /) -> bool:
        """Remove a registration; returns whether it existed."""
        with self._lock:
            removed = self._entries.pop(name, None) is not None
            if removed:
                self._changed(name)
            return removed

    def _new_breaker(self) -> CircuitBreaker:
        return CircuitBreaker(self._failure_threshold, self._reset_timeout, clock=self._clock)

    def _changed(self, name: str) -> None:
        self._exports.forget(name)
        self._version += 1

    @property
    def version(self) -> int:
        """A counter that changes on every (un)registration (for caches keyed on the tool set)."""
        return self._version

    # ----------------------------------------------------------------- lookup

    def get(self, name: str, /) -> BoundTool | None:
        """The tool bound to this registry (call it with keyword arguments), or None."""
        entry = self._entries.get(name)
        return None if entry is None else BoundTool(entry, self)

    def get_tool(self, name: str, /) -> BaseTool[Any, Any] | None:
        """The registered tool instance, or None."""
        entry = self._entries.get(name)
        return None if entry is None else entry.tool

    def get_manual(self, name: str, /) -> ToolManual | None:
        """The manual of a registration, or None."""
        entry = self._entries.get(name)
        return None if entry is None else entry.manual

    def manuals(self) -> list[ToolManual]:
        """The manual of every registration, in registration order."""
        return [entry.manual for entry in list(self._entries.values())]

    def for_agent(
        self,
        agent_type: str,
        router: ToolRouter | None = None,
        *,
        policy: ApprovalPolicy | None = None,
        approver: Approver | None = None,
    ) -> ToolView:
        """A view that exports and calls only the tools of ``agent_type`` (DESIGN section 8).

        Args:
            agent_type: The agent type (``"coder"``, ``"reviewer"``, ...; an unknown type
                gets every category).
            router: Decides the agent's tools (default: the registry's own
                ``ToolRouter()``, shared by its views: the default profiles, no user
                overrides).
            policy: The approval policy of this agent's calls (default: the registry's).
            approver: Asked when a call needs approval (default: the registry's).

        Raises:
            RoutingConfigError: the router's config names tools that are not registered.
        """
        from tools.routing import ToolRouter, ToolView

        if router is None:
            # One default router per registry: its routing index (built once per set of
            # manuals) serves every view, so a new view costs a lookup, not a re-index.
            router = self._default_router
            if router is None:
                router = self._default_router = ToolRouter()
        return ToolView(self, agent_type, router=router, policy=policy, approver=approver)

    def breaker(self, name: str, /, action: str | None = None) -> CircuitBreaker | None:
        """The circuit breaker of a registration (of one ``action`` of a multi-action tool,
        which has one breaker per action), or None."""
        entry = self._entries.get(name)
        return None if entry is None else entry.breaker_for(action)

    def stats(self) -> dict[str, Any]:
        """The registry's own figures: tools; its worker threads (``max_workers``, ``busy``,
        ``abandoned`` by timed-out calls and still running, ``abandoned_total``,
        ``saturated_total``: calls refused because every worker was busy or the tool held
        its share, ``max_per_tool``, ``by_tool``: workers held per tool); and the export
        cache (``sets``, ``max_sets``, ``definitions``)."""
        workers = self._executor.stats()
        return {
            "tools": len(self._entries),
            "workers": dataclasses.asdict(workers),
            "exports": self._exports.stats(),
        }

    def close(self) -> None:
        """Stop the worker threads (calls still running finish in the background)."""
        self._executor.shutdown()

    def __enter__(self) -> LocalToolRegistry:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def names(self) -> list[str]:
        """Registered names in registration order."""
        return list(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._entries))

    # ----------------------------------------------------------------- calls

    def __call__(self, name: str, /, **arguments: Any) -> dict[str, Any]:
        """``call_tool(name, **arguments).to_dict()``."""
        entry = self._entries.get(name)
        if entry is not None and self._gate is None:
            return entry.call(arguments).to_dict()
        return self.call_tool(name, **arguments).to_dict()

    def call_tool(self, name: str, /, **arguments: Any) -> ToolResult:
        """Call a tool by name with keyword arguments; never raises for bad calls."""
        entry = self._entries.get(name)
        if entry is None:
            return self._unknown(name)
        if self._gate is None:
            return entry.call(arguments)
        return self._gated(entry, arguments, None, None, self._gate)

    async def acall_tool(self, name: str, /, **arguments: Any) -> ToolResult:
        """Async twin of :meth:`call_tool`."""
        entry = self._entries.get(name)
        if entry is None:
            return self._unknown(name)
        if self._gate is None:
            return await entry.acall(arguments)
        return await self._agated(entry, arguments, None, None, self._gate)

    def call_tool_raw(
        self,
        name: str,
        /,
        arguments: Arguments,
        *,
        call_id: str | None = None,
        approved: ApprovedCall | None = None,
    ) -> ToolResult:
        """Call a tool with the arguments as the model sent them (JSON text or a dict).

        Text that is not JSON, or not a JSON object, is a ``validation_error`` result.
        ``call_id`` is the model's ``tool_call`` id (recorded on the call's span).
        ``approved`` (an :class:`tools.approvals.ApprovedCall`) runs a call a person approved
        despite the policy, only if ``arguments`` are exactly the approved ones and the tool
        has not changed since; otherwise the call is refused with ``permission_denied``.
        """
        entry = self._entries.get(name)
        if entry is None:
            return self._unknown(name, call_id)
        if self._gate is None and approved is None:
            return entry.call(arguments, call_id)
        return self._gated(entry, arguments, call_id, approved, self._gate)

    async def acall_tool_raw(
        self,
        name: str,
        /,
        arguments: Arguments,
        *,
        call_id: str | None = None,
        approved: ApprovedCall | None = None,
    ) -> ToolResult:
        """Async twin of :meth:`call_tool_raw`."""
        entry = self._entries.get(name)
        if entry is None:
            return self._unknown(name, call_id)
        if self._gate is None and approved is None:
            return await entry.acall(arguments, call_id)
        return await self._agated(entry, arguments, call_id, approved, self._gate)

    # ----------------------------------------------------------------- gated calls

    def _gated(
        self,
        entry: ToolEntry,
        arguments: Arguments,
        call_id: str | None,
        approved: ApprovedCall | None,
        gate: ApprovalGate | None,
    ) -> ToolResult:
        """Run ``entry`` if ``gate`` (its policy, its approver) or ``approved`` lets it."""
        from tools.approvals._gate import run_gated

        return run_gated(self, entry, arguments, call_id=call_id, approved=approved, gate=gate)

    async def _agated(
        self,
        entry: ToolEntry,
        arguments: Arguments,
        call_id: str | None,
        approved: ApprovedCall | None,
        gate: ApprovalGate | None,
    ) -> ToolResult:
        """Async twin of :meth:`_gated`."""
        from tools.approvals._gate import arun_gated

        return await arun_gated(self, entry, arguments, call_id=call_id, approved=approved, gate=gate)

    def _call_gated(
        self, name: str, arguments: Arguments, call_id: str | None, approved: ApprovedCall | None, gate: ApprovalGate
    ) -> ToolResult:
        """A call through another gate than the registry's (a view's own policy)."""
        entry = self._entries.get(name)
        return self._unknown(name, call_id) if entry is None else self._gated(entry, arguments, call_id, approved, gate)

    async def _acall_gated(
        self, name: str, arguments: Arguments, call_id: str | None, approved: ApprovedCall | None, gate: ApprovalGate
    ) -> ToolResult:
        """Async twin of :meth:`_call_gated`."""
        entry = self._entries.get(name)
        if entry is None:
            return self._unknown(name, call_id)
        return await self._agated(entry, arguments, call_id, approved, gate)
