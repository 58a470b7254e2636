"""Where sympy runs: the :class:`MathEngine` protocol and :class:`SympyWorkerPool`.

sympy can take unbounded time and memory on innocent-looking input (``expand((x+1)**5000)``,
``simplify`` of a large expression). It therefore never runs in the tool's process: a small
pool of persistent worker processes does the work, each with an address-space limit, and a
worker that exceeds the wall-clock limit is killed (with its process group) and replaced
lazily. The caller gets a :class:`~tools.errors.ToolTimeoutError`; the process it lives in
stays healthy.

Circuit breaker: a problem that times out or exhausts a worker's memory is the input's
fault, so those errors carry ``trips_breaker=False`` (a model sending five hard problems
must not disable the tool for everyone); a pool that cannot start a worker, or is shut
down, is the engine's fault and trips it.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import subprocess
import sys
import threading
import time
import weakref
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from tools._procgroup import kill_group
from tools.errors import ToolError, ToolTimeoutError

_WORKER = Path(__file__).with_name("_worker.py")
_MAX_REPLY_BYTES = 8_000_000

Operation = Literal["evaluate", "simplify", "solve", "differentiate", "integrate"]


@dataclass(frozen=True, slots=True)
class MathJob:
    """One computation, already parsed and size-checked (see :mod:`tools.builtin.math.parser`).

    Attributes:
        operation: What to do.
        exprs: Parsed expressions (equations for ``solve``).
        variables: Variables to solve for / differentiate or integrate by (may be empty).
        order: Derivative order.
        lower: Lower bound of a definite integral (parsed), or None.
        upper: Upper bound of a definite integral (parsed), or None.
        show_steps: Do the extra work that only the steps need (factoring, per-term rules).
    """

    operation: Operation
    exprs: list[list[Any]]
    variables: list[str] = field(default_factory=list)
    order: int = 1
    lower: list[Any] | None = None
    upper: list[Any] | None = None
    show_steps: bool = False


@runtime_checkable
class MathEngine(Protocol):
    """Computes :class:`MathJob` s. Implementations must be safe to call from threads."""

    def compute(self, job: MathJob) -> dict[str, Any]:
        """Return the answer dict (``result``, ``latex``, ``steps``, ...).

        Raises:
            ToolTimeoutError: The computation took too long and was stopped (does not trip
                the breaker).
            ToolError: The question can't be answered (the message says why; does not trip
                the breaker), or the engine itself can't work (trips it).
        """
        ...

    def close(self) -> None:
        """Stop all workers."""
        ...


def _kill(proc: subprocess.Popen[bytes]) -> None:
    kill_group(proc.pid)
    with contextlib.suppress(OSError):
        proc.wait(timeout=5)
    for stream in (proc.stdin, proc.stdout):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()


class _Worker:
    """One sympy process speaking JSON lines."""

    def __init__(self, argv: list[str]) -> None:
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            env={"LANG": "C.UTF-8"},
        )
        self._finalizer = weakref.finalize(self, _kill, self.proc)
        self._buffer = bytearray()
        if self.proc.stdout is None or self.proc.stdin is None:  # pragma: no cover
            self.kill()
            msg = "The math worker lost its pipes."
            raise ToolError(msg, trips_breaker=True)
        self._out = self.proc.stdout.fileno()
        os.set_blocking(self._out, False)
        self.jobs = 0

    def kill(self) -> None:
        self._finalizer()

    def alive(self) -> bool:
        return self.proc.poll() is None

    def send(self, message: dict[str, Any]) -> None:
        if self.proc.stdin is None:  # pragma: no cover
            raise BrokenPipeError
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def read_line(self, deadline: float) -> dict[str, Any] | None:
        """The next JSON line, or None at the deadline. Raises EOFError if the worker died."""
        with selectors.DefaultSelector() as sel:
            sel.register(self._out, selectors.EVENT_READ)
            while b"\n" not in self._buffer:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return None
                if not sel.select(remaining):
                    continue
                chunk = os.read(self._out, 65_536)
                if not chunk:
                    raise EOFError
                self._buffer += chunk
                if len(self._buffer) > _MAX_REPLY_BYTES:
                    raise EOFError
        line, _, rest = bytes(self._buffer).partition(b"\n")
        self._buffer = bytearray(rest)
        reply: dict[str, Any] = json.loads(line)
        return reply


class SympyWorkerPool:
    """A :class:`MathEngine` running sympy in up to ``max_workers`` killable processes.

    Workers start on first use (``import tools`` and construction stay fast) and are reused.

    Args:
        timeout_seconds: Wall-clock limit per computation; the worker is killed after it.
        start_timeout_seconds: Limit for a worker to start and import sympy.
        memory_mb: Address-space limit of each worker (``RLIMIT_AS``).
        max_workers: Computations that may run at once; further callers wait their turn.
        max_digits: Largest integer the worker may print (Python's str-digits limit).
        max_chars: Longest result text; longer results are cut with a note.
        python: Python interpreter for the workers (needs sympy importable).
        max_jobs_per_worker: Recycle a worker after this many jobs (sympy caches grow).
    """

    def __init__(
        self,
        *,
        timeout_seconds: float = 5.0,
        start_timeout_seconds: float = 60.0,
        memory_mb: int = 1024,
        max_workers: int = 2,
        max_digits: int = 10_000,
        max_chars: int = 20_000,
        python: str = sys.executable,
        max_jobs_per_worker: int = 500,
    ) -> None:
        if timeout_seconds <= 0 or max_workers < 1 or memory_mb < 64:
            msg = "SympyWorkerPool needs timeout_seconds > 0, max_workers >= 1, memory_mb >= 64"
            raise ValueError(msg)
        self.timeout_seconds = timeout_seconds
        self.start_timeout_seconds = start_timeout_seconds
        self.max_jobs_per_worker = max_jobs_per_worker
        config = {"memory_mb": memory_mb, "max_digits": max_digits, "max_chars": max_chars}
        self._argv = [python, "-I", str(_WORKER), json.dumps(config)]
        self._slots = threading.BoundedSemaphore(max_workers)
        self._lock = threading.Lock()
        self._idle: list[_Worker] = []
        self._busy: set[_Worker] = set()
        self._closed = False
        self._next_id = 0

    def warm_up(self) -> None:
        """Start one worker now (it imports sympy), so the first call is fast."""
        worker = self._take()
        self._give_back(worker)

    def compute(self, job: MathJob) -> dict[str, Any]:
        """Run ``job`` in a worker, see :meth:`MathEngine.compute`."""
        with self._slots:
            worker = self._take()
            try:
                reply = self._exchange(worker, job)
            except BaseException:
                self._discard(worker)
                raise
            self._give_back(worker, recycle=reply.get("kind") == "memory")
        if not reply.get("ok"):
            raise ToolError(str(reply.get("error") or "The computation failed."))
        answer: dict[str, Any] = reply["answer"]
        return answer

    def close(self) -> None:
        """Kill every worker and refuse new work. Idempotent."""
        with self._lock:
            self._closed = True
            workers = self._idle + list(self._busy)
            self._idle.clear()
        for worker in workers:
            worker.kill()

    def _exchange(self, worker: _Worker, job: MathJob) -> dict[str, Any]:
        with self._lock:
            self._next_id += 1
            job_id = self._next_id
        try:
            worker.send({"id": job_id, **asdict(job)})
            reply = worker.read_line(time.monotonic() + self.timeout_seconds)
        except (EOFError, OSError, ValueError):
            msg = "The computation crashed (probably out of memory); try a smaller problem."
            raise ToolError(msg) from None
        if reply is None:
            msg = (
                f"The computation did not finish within {self.timeout_seconds:g} s and was "
                "stopped. Try a simpler expression, smaller numbers or a numeric evaluation."
            )
            # The problem was too hard, not the engine broken: the breaker stays closed.
            raise ToolTimeoutError(msg, retryable=False, trips_breaker=False)
        worker.jobs += 1
        return reply

    def _take(self) -> _Worker:
        with self._lock:
            if self._closed:
                msg = "The math engine is shut down."
                raise ToolError(msg, trips_breaker=True)
            while self._idle:
                worker = self._idle.pop()
                if worker.alive():
                    self._busy.add(worker)
                    return worker
                worker.kill()
        worker = self._start()
        with self._lock:
            self._busy.add(worker)
        return worker

    def _start(self) -> _Worker:
        try:
            worker = _Worker(self._argv)
        except OSError as exc:
            msg = f"The math engine could not start ({type(exc).__name__})."
            raise ToolError(msg, trips_breaker=True) from exc
        try:
            ready = worker.read_line(time.monotonic() + self.start_timeout_seconds)
        except (EOFError, ValueError):
            ready = None
        if not ready or not ready.get("ready"):
            worker.kill()
            msg = "The math engine could not start (is sympy installed?)."
            raise ToolError(msg, trips_breaker=True)
        return worker

    def _give_back(self, worker: _Worker, *, recycle: bool = False) -> None:
        with self._lock:
            self._busy.discard(worker)
            keep = not (self._closed or recycle or worker.jobs >= self.max_jobs_per_worker)
            if keep:
                self._idle.append(worker)
        if not keep:
            worker.kill()

    def _discard(self, worker: _Worker) -> None:
        with self._lock:
            self._busy.discard(worker)
        worker.kill()
