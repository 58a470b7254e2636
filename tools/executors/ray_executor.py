"""`RayExecutor`: tool calls on a Ray cluster (extra ``ray``), gated and counted in the driver.

A registry given a `RayExecutor` hands it every tool at registration; the executor ships
the tool to the cluster once (``ray.put``) and then runs each call's lifecycle there:

* a **stateless** tool (a plain function, or a tool instance without collaborators) runs
  each call as an independent Ray **task**, so calls spread over every core of the cluster;
* a **stateful** tool (an instance holding a client, a store, a cache: see
  `tools.executors.is_stateful`, or set ``stateful = True`` / ``False`` on the tool) lives
  in **one Ray actor per tool instance**, created on its first call, so its state stays in
  one place and its calls run there (concurrently, in the actor's threads, as they would
  locally).

Results come back as the same `ToolResult` envelopes. A call that does not finish within its
timeout (the registry's per-tool timeout; queueing on the cluster included) is cancelled
with ``ray.cancel`` and answered with a ``timeout`` error; a task is interrupted, a stateful
tool's call is cancelled in its actor (its thread, which cannot be killed, finishes in the
background as it would locally). A worker or actor that dies is an ``execution_error`` the
model may retry (the actor is started again on the next call). The approval gate, the
circuit breaker, retries, metrics and spans all stay in the calling process.

A tool that cannot be pickled cannot be shipped: registering it is a
:class:`~tools.errors.ToolDefinitionError` naming the tool. Ray's workers import tooldeck
and the tools' modules by name, so the cluster's Python environment needs them (the same
image, or ``runtime_env``). Ray is imported when the executor is created, never by
``import tools``.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from tools.errors import ToolDefinitionError
from tools.executors.base import is_stateful
from tools.result import ErrorInfo, ToolResult

if TYPE_CHECKING:
    import concurrent.futures

    from tools.base import Arguments, BaseTool

logger = logging.getLogger(__name__)
#: Seconds an actor gets to close its tool before it is killed.
_CLOSE_TIMEOUT = 30.0


class RayExecutor:
    """Runs tool calls on a Ray cluster (a `tools.executors.RemoteExecutor`).

    Args:
        address: The cluster to join (``ray://head:10001``, ``auto``, or a head node's
            ``host:port``); None: a Ray already initialised in this process, else a local
            one started now with ``num_cpus`` (default: this machine's cores) and stopped
            by `close`.
        num_cpus: CPUs of the local Ray started when there is no address.
        task_options: ``.options(...)`` of stateless calls (e.g. ``{"num_cpus": 0.25}`` for
            tools that mostly wait on I/O; default: one CPU per call).
        actor_options: ``.options(...)`` of the actors of stateful tools (e.g.
            ``{"max_concurrency": 8}``).
        init_options: More ``ray.init`` arguments (``runtime_env``, ``namespace`` ...).

    Raises:
        ImportError: Ray is not installed (``pip install -e '.[ray]' in a tooldeck checkout``).
    """

    def __init__(
        self,
        *,
        address: str | None = None,
        num_cpus: int | None = None,
        task_options: Mapping[str, Any] | None = None,
        actor_options: Mapping[str, Any] | None = None,
        init_options: Mapping[str, Any] | None = None,
    ) -> None:
        try:
            import ray
        except ImportError:
            raise ImportError("RayExecutor needs Ray: pip install -e '.[ray]' in a tooldeck checkout") from None
        from tools.executors import _ray_worker

        self._ray = ray
        self._owns_ray = False
        if address is not None or not ray.is_initialized():
            options: dict[str, Any] = {
                "include_dashboard": False,
                "log_to_driver": False,
                "logging_level": logging.WARNING,
            }
            if address is None:
                options["num_cpus"] = num_cpus if num_cpus is not None else (os.cpu_count() or 1)
            options.update(init_options or {})
            ray.init(address=address, **options)
            self._owns_ray = True
        self._task = ray.remote(_ray_worker.run_tool).options(max_retries=0, **dict(task_options or {}))
        self._actor_class = ray.remote(_ray_worker.ToolActor).options(max_restarts=0, **dict(actor_options or {}))
        self._placed: list[RayTool] = []
        self._lock = threading.Lock()
        self._closed = False

    def __repr__(self) -> str:
        return f"RayExecutor(tools={len(self._placed)}, owns_cluster={self._owns_ray})"

    def prepare(self, tool: BaseTool[Any, Any]) -> RayTool:
        """Pickle ``tool`` into the cluster's object store; returns its handle.

        Raises:
            ToolDefinitionError: the executor was closed, or the tool cannot be pickled.
        """
        if self._closed:
            raise ToolDefinitionError(f"tool {tool.name!r}: this RayExecutor was closed; create a new one")
        try:
            ref = self._ray.put(tool)
        except Exception as exc:
            reason = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
            raise ToolDefinitionError(
                f"tool {tool.name!r} cannot run on Ray: it cannot be pickled ({type(exc).__name__}: {reason}). Ray "
                "ships a tool to its workers by pickling it: give it collaborators that can be pickled (open clients "
                "lazily, on first use), or register it with executor=None to run it in this process"
            ) from exc
        placed = RayTool(self, tool, ref, stateful=is_stateful(tool))
        with self._lock:
            self._placed.append(placed)
        return placed

    def close(self) -> None:
        """Stop the actors of stateful tools, and the local Ray this executor started."""
        with self._lock:
            placed, self._placed = self._placed, []
            self._closed = True
        for handle in placed:
            handle.stop()
        if self._owns_ray:
            self._ray.shutdown()
            self._owns_ray = False

    def __enter__(self) -> RayExecutor:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class RayTool:
    """One tool placed on a `RayExecutor` (a `tools.executors.RemoteTool`).

    Attributes:
        name: The tool's name.
        stateful: True: its calls run on one actor; False: each call is a task.
    """

    def __init__(self, executor: RayExecutor, tool: BaseTool[Any, Any], ref: Any, *, stateful: bool) -> None:
        self._executor = executor
        self._ray = executor._ray
        self._tool = tool
        self._ref = ref
        self.name = tool.name
        self.stateful = stateful
        self._actor: Any = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"RayTool({self.name!r}, {'actor' if self.stateful else 'tasks'})"

    # ------------------------------------------------------------------ calls

    def run(self, arguments: Arguments, timeout: float | None) -> ToolResult:
        """See `tools.executors.RemoteTool.run`."""
        t0, started = time.perf_counter_ns(), time.time()
        try:
            ref = self._submit(arguments)
            ready, _ = self._ray.wait([ref], timeout=timeout)
            if not ready:
                return self._cancelled_after(ref, timeout, t0, started)
            return self._collect(ref, t0, started)
        except Exception as exc:
            return self._failed(exc, t0, started)

    async def arun(self, arguments: Arguments, timeout: float | None) -> ToolResult:
        """See `tools.executors.RemoteTool.arun`."""
        t0, started = time.perf_counter_ns(), time.time()
        try:
            ref = self._submit(arguments)
            future: concurrent.futures.Future[Any] = ref.future()
            try:
                done, _ = await asyncio.wait((asyncio.wrap_future(future),), timeout=timeout)
            except asyncio.CancelledError:
                self._ray.cancel(ref)
                raise
            if not done:
                return self._cancelled_after(ref, timeout, t0, started)
            return self._collect(ref, t0, started)
        except Exception as exc:
            return self._failed(exc, t0, started)

    def stop(self, *, graceful: bool = True) -> None:
        """Stop this tool's actor, if it has one (the next call would start another): the
        tool's ``close()`` runs there first (bounded), then the actor is killed."""
        with self._lock:
            actor, self._actor = self._actor, None
        if actor is None:
            return
        if graceful:
            try:
                self._ray.get(actor.close.remote(), timeout=_CLOSE_TIMEOUT)
            except Exception as exc:  # a dead or stuck actor: killed below all the same
                logger.info("tool %r: its actor did not close cleanly (%s)", self.name, type(exc).__name__)
        self._ray.kill(actor)

    # ------------------------------------------------------------------ internals

    def _submit(self, arguments: Arguments) -> Any:
        if not self.stateful:
            return self._executor._task.remote(self._ref, arguments)
        with self._lock:
            if self._actor is None:
                self._actor = self._executor._actor_class.remote(self._ref)
            actor = self._actor
        return actor.run.remote(arguments)

    def _collect(self, ref: Any, t0: int, started: float) -> ToolResult:
        result = self._ray.get(ref)
        if not isinstance(result, ToolResult):  # pragma: no cover - the worker returns envelopes only
            raise TypeError(f"the Ray worker returned {type(result).__name__}, not a ToolResult")
        return result._with_trusted_metadata(executor="ray")

    def _cancelled_after(self, ref: Any, timeout: float | None, t0: int, started: float) -> ToolResult:
        from tools.base import _timed_out

        self._ray.cancel(ref)
        logger.warning("tool %r: cancelled its Ray %s after %g s", self.name, self._kind(), timeout or 0)
        return self._tool._error_result(_timed_out(self.name, timeout), t0, started)._with_trusted_metadata(
            executor="ray"
        )

    def _failed(self, exc: Exception, t0: int, started: float) -> ToolResult:
        """The envelope of a call the cluster could not complete (the cause goes to the log)."""
        errors = self._ray.exceptions
        if isinstance(exc, errors.TaskCancelledError):
            info = ErrorInfo("cancelled", f"The call of '{self.name}' was cancelled before it finished.", True, None)
            return self._envelope(info, t0, started)
        if isinstance(exc, errors.RayActorError):
            self.stop(graceful=False)  # a dead actor: the next call starts a fresh one
        retryable = not isinstance(exc, errors.RayTaskError)  # a task that raised will raise again
        logger.error("tool %r: its Ray %s failed: %s", self.name, self._kind(), type(exc).__name__, exc_info=exc)
        message = f"The tool '{self.name}' could not run: the worker running it failed ({type(exc).__name__}). " + (
            "Try again." if retryable else "This was not caused by your arguments; take another approach."
        )
        return self._envelope(ErrorInfo("execution_error", message, retryable, None), t0, started)

    def _envelope(self, info: ErrorInfo, t0: int, started: float) -> ToolResult:
        metadata = {**self._tool._metadata(t0, started), "executor": "ray"}
        return ToolResult._trusted("error", None, info, metadata)

    def _kind(self) -> str:
        return "actor" if self.stateful else "task"
