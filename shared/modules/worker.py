"""The host's handle on one module's worker: :class:`ModuleWorker`.

One long-lived worker process per loaded module (not a process per call), started by
:class:`~shared.modules.worker_pool.ModuleWorkers`. A call writes a
``call`` frame and reads frames until its ``result``, answering the worker's ``http``
requests in between through the module's :class:`~shared.modules.forwarding.RequestForwarder`,
all within the call's time limit. A call that runs past it kills the worker (a hung module
cannot be interrupted otherwise); a worker that died, however, is started again on the next
call, up to ``WorkerLimits.max_restarts`` times per ``restart_window``. Stopping a worker
kills its whole process group.

Everything the worker sends is untrusted: frames are size-capped and checked, and a frame
that breaks the protocol ends the worker.
"""

from __future__ import annotations

import collections
import logging
import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, NoReturn

from shared.module_worker.protocol import PROTOCOL_VERSION, FrameReader, FrameTimeout, ProtocolError, write_frame
from shared.modules.egress import ModuleEgress
from shared.modules.forwarding import CallSecrets, RequestForwarder
from shared.modules.worker_launch import WORKER_PROGRAM, WorkerLauncher, WorkerLimits, WorkerProcess, WorkerStartError

__all__ = ["ModuleLoadError", "ModuleWorker", "WorkerCallError", "WorkerSpec"]

logger = logging.getLogger(__name__)

_STDERR_TAIL = 8192
#: Seconds to wait for a process whose pipe closed to be seen as ended (for its exit reason).
_EXIT_GRACE = 2.0
_MAX_REASON = 300
#: Why a call failed: the module raised, it ran out of time, its worker died or is refused.
FailureKind = Literal["module", "timeout", "crashed", "unavailable"]


class ModuleLoadError(Exception):
    """The module's code did not load in its worker; the message says why (safe to show)."""


class WorkerCallError(Exception):
    """A call into a worker failed.

    Attributes:
        kind: ``module`` (the module raised), ``timeout``, ``crashed`` or ``unavailable``.
        error_type: The exception type the module raised (``kind == "module"``).
        shape: The module raised one of the "wrong shape" errors (``TypeError``,
            ``KeyError``, ``ValueError``, ``AttributeError``, ``IndexError``).
        detail: The ``AdapterError`` message the module raised, if any (untrusted text).
    """

    def __init__(
        self, kind: FailureKind, message: str, *, error_type: str = "", shape: bool = False, detail: str | None = None
    ) -> None:
        super().__init__(message)
        self.kind: FailureKind = kind
        self.error_type = error_type
        self.shape = shape
        self.detail = detail


@dataclass(frozen=True, slots=True)
class WorkerSpec:
    """What a worker runs: one verified module version.

    Attributes:
        module_id: The module.
        version_id: Its version.
        source: ``adapter.py``, verified against the signed version record.
        adapter_class: The class ``adapter.py`` defines.
        api_url: The only base URL its requests may reach.
    """

    module_id: str
    version_id: str
    source: str
    adapter_class: str
    api_url: str


def _clean(text: object) -> str:
    shown = "".join(ch if ch.isprintable() else " " for ch in str(text))
    return shown[:_MAX_REASON]


class ModuleWorker:
    """One module's worker process, started on demand and restarted when it dies.

    Usually made by :meth:`~shared.modules.worker_pool.ModuleWorkers.start`, which also
    starts it the first time.

    Args:
        spec: The module version it runs.
        launcher: Starts the process.
        egress: Sends its HTTP requests.
        limits: Time limits and restart budget.
        python_path: Returns the worker's import path.
    """

    def __init__(
        self,
        spec: WorkerSpec,
        *,
        launcher: WorkerLauncher,
        egress: ModuleEgress,
        limits: WorkerLimits,
        python_path: Callable[[], list[str]],
    ) -> None:
        self.spec = spec
        self._launcher = launcher
        self._python_path = python_path
        self._limits = limits
        self._forwarder = RequestForwarder(base_url=spec.api_url, egress=egress, max_timeout=limits.http_timeout)
        self._lock = threading.Lock()
        self._process: WorkerProcess | None = None
        self._reader: FrameReader | None = None
        self._stderr = bytearray()
        self._starts: collections.deque[float] = collections.deque()
        self._next_id = 0
        self._call_limit = limits.call_timeout
        self._stopped = False
        self.overrides: frozenset[str] = frozenset()
        self.worker_pid: int | None = None
        self.worker_uid: int | None = None
        self.restarts = -1

    def __repr__(self) -> str:
        return f"ModuleWorker({self.spec.module_id} {self.spec.version_id}, pid={self.host_pid})"

    @property
    def host_pid(self) -> int | None:
        """The process id (and group) of the running worker as the host sees it."""
        return self._process.pid if self._process is not None else None

    @property
    def stopped(self) -> bool:
        """Whether :meth:`stop` was called (the worker will not run again)."""
        return self._stopped

    def alive(self) -> bool:
        """Whether the worker process is running."""
        process = self._process
        return process is not None and process.poll() is None

    def start(self) -> None:
        """Start the worker and load the module.

        Raises:
            WorkerStartError: No worker could be started.
            ModuleLoadError: The module's code did not load.
        """
        with self._lock:
            self._launch()

    def call(
        self, method: str, args: Mapping[str, Any], *, secrets: CallSecrets | None = None, timeout: float | None = None
    ) -> Any:
        """Run ``method`` in the worker and return its (JSON) value.

        Args:
            method: ``fetch``, ``fetch_raw``, ``transform``, ``merge_records``,
                ``context_payload`` or ``normalize_for_tools``.
            args: Its JSON arguments.
            secrets: The credentials the worker's requests may use in this call.
            timeout: Seconds (default ``WorkerLimits.call_timeout``).

        Raises:
            WorkerCallError: The module raised, or the worker timed out, died or can't start.
        """
        with self._lock:
            if self._stopped:
                raise WorkerCallError("unavailable", f"the module {self.spec.module_id} was unloaded")
            if not self.alive():
                self._restart()
            return self._call(method, dict(args), secrets or CallSecrets({}), timeout or self._limits.call_timeout)

    def stop(self) -> None:
        """Kill the worker (its whole process group); later calls fail. Idempotent."""
        with self._lock:
            self._stopped = True
            self._kill()

    # -- internals (the lock is held) ---------------------------------------------------

    def _restart(self) -> None:
        now = time.monotonic()
        while self._starts and now - self._starts[0] > self._limits.restart_window:
            self._starts.popleft()
        if len(self._starts) > self._limits.max_restarts:
            raise WorkerCallError(
                "unavailable",
                f"the module {self.spec.module_id}'s worker stopped {len(self._starts)} times within "
                f"{self._limits.restart_window:g} s; it is not started again for now",
            )
        logger.info("module %s (%s): restarting its worker", self.spec.module_id, self.spec.version_id)
        try:
            self._launch()
        except (WorkerStartError, ModuleLoadError) as exc:
            raise WorkerCallError("unavailable", f"the module {self.spec.module_id} could not restart: {exc}") from None

    def _launch(self) -> None:
        self._kill()
        self._starts.append(time.monotonic())
        self.restarts += 1
        process = self._launcher.launch(program=WORKER_PROGRAM, python_path=self._python_path())
        self._process, self._reader = process, FrameReader(process.stdout)
        self._stderr = bytearray()
        os.set_blocking(process.stdin, False)
        threading.Thread(target=self._drain, args=(process.stderr, self._stderr), daemon=True).start()
        try:
            self._handshake(process)
        except BaseException:
            self._kill()
            raise

    def _handshake(self, process: WorkerProcess) -> None:
        deadline = time.monotonic() + self._limits.start_timeout
        hello = self._read(deadline, starting=True)
        if hello.get("op") != "hello" or hello.get("protocol") != PROTOCOL_VERSION:
            raise WorkerStartError("the worker did not introduce itself")
        self.worker_pid = hello.get("pid") if isinstance(hello.get("pid"), int) else None
        self.worker_uid = hello.get("uid") if isinstance(hello.get("uid"), int) else None
        spec = self.spec
        init = {
            "op": "init",
            "module_id": spec.module_id,
            "version_id": spec.version_id,
            "source": spec.source,
            "adapter_class": spec.adapter_class,
            "http_timeout": self._limits.http_timeout,
            "max_attempts": 1,
        }
        self._write(init, deadline, starting=True)
        answer = self._read(deadline, starting=True)
        if answer.get("op") == "load_error":
            raise ModuleLoadError(_clean(answer.get("reason") or "the module did not load"))
        overrides = answer.get("overrides")
        if answer.get("op") != "ready" or not isinstance(overrides, list):
            raise WorkerStartError("the worker did not load the module")
        self.overrides = frozenset(str(item) for item in overrides)
        logger.info("module %s (%s): worker started (host pid %s)", spec.module_id, spec.version_id, process.pid)

    def _call(self, method: str, args: dict[str, Any], secrets: CallSecrets, timeout: float) -> Any:
        deadline = time.monotonic() + timeout
        self._call_limit = timeout
        self._next_id += 1
        call_id = self._next_id
        self._write({"op": "call", "id": call_id, "method": method, "args": args}, deadline)
        while True:
            frame = self._read(deadline)
            op = frame.get("op")
            if op == "http":
                self._write(self._forwarder.handle(frame, secrets, deadline=deadline), deadline)
            elif op == "result" and frame.get("id") == call_id:
                return self._result(frame)
            else:
                self._fail("crashed", "its worker broke the protocol")

    def _result(self, frame: Mapping[str, Any]) -> Any:
        error = frame.get("error")
        if error is None:
            return frame.get("value")
        if not isinstance(error, dict):
            self._fail("crashed", "its worker broke the protocol")
        error_type = _clean(error.get("type") or "Exception")[:100]
        detail = error.get("message") if error_type == "AdapterError" else None
        raise WorkerCallError(
            "module",
            f"the module {self.spec.module_id} raised {error_type}",
            error_type=error_type,
            shape=error.get("shape") is True,
            detail=str(detail)[:2000] if detail is not None else None,
        )

    def _read(self, deadline: float, *, starting: bool = False) -> dict[str, Any]:
        reader = self._reader
        if reader is None:
            self._fail("crashed", "", starting=starting)
        try:
            frame = reader.read(max(0.0, deadline - time.monotonic()))
        except FrameTimeout:
            self._fail("timeout", "", starting=starting)
        except (ProtocolError, OSError):
            self._fail("crashed", "its worker broke the protocol", starting=starting)
        if frame is None:
            self._fail("crashed", "", starting=starting)
        return frame

    def _write(self, message: dict[str, Any], deadline: float, *, starting: bool = False) -> None:
        process = self._process
        if process is None:
            self._fail("crashed", "", starting=starting)
        try:
            write_frame(process.stdin, message, deadline=deadline)
        except FrameTimeout:
            self._fail("timeout", "", starting=starting)
        except ValueError as exc:
            raise WorkerCallError(
                "module", f"the call to module {self.spec.module_id} cannot be sent ({exc})"
            ) from None
        except OSError:
            self._fail("crashed", "", starting=starting)

    def _fail(self, kind: Literal["timeout", "crashed"], why: str, *, starting: bool = False) -> NoReturn:
        """Kill the worker and raise the matching error."""
        ended = self._exit_reason() if kind == "crashed" and not why else ""
        self._kill()
        module = self.spec.module_id
        if kind == "timeout":
            limit = self._limits.start_timeout if starting else self._call_limit
            message = f"the module {module} did not answer within {limit:g} s; its worker was stopped"
        else:
            message = f"the module {module}'s worker stopped" + (f" ({why or ended})" if why or ended else "")
        logger.warning("module %s (%s): %s", module, self.spec.version_id, message)
        if self._stderr:  # no secret reaches a worker; at start it says what is missing (an import...)
            logger.log(
                logging.WARNING if starting else logging.DEBUG,
                "module %s worker stderr: %s",
                module,
                self._stderr.decode("utf-8", "replace")[-2000:],
            )
        if starting:
            raise WorkerStartError(message.replace(f"the module {module}'s worker stopped", "the worker stopped"))
        raise WorkerCallError(kind, message)

    def _exit_reason(self) -> str:
        """Why the process ended, once it has (its pipe closes a moment before it exits)."""
        process = self._process
        if process is None:
            return ""
        deadline = time.monotonic() + _EXIT_GRACE
        while process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        return process.exit_reason() if process.poll() is not None else ""

    def _kill(self) -> None:
        process, self._process, self._reader = self._process, None, None
        if process is not None:
            process.stop()

    @staticmethod
    def _drain(fd: int, tail: bytearray) -> None:
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                return
            if not chunk:
                return
            tail += chunk
            del tail[:-_STDERR_TAIL]
