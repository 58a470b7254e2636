"""Starting agent runs and resuming paused ones from the console: `AgentRunner`, `ServiceRunner`.

A paused run is resumed the way ``python -m orchestrator --resume RUN_ID`` resumes it, with
the same guarantees, because it goes through the same objects:

* its state is the signed file ``<data dir>/paused/<run id>.json`` (never a path a record
  names), verified with the user's state key before anything in it is believed;
* each decision is bound to the arguments hash of the request the person was shown
  (``Approve(shown_hash=...)``); edited arguments are validated and hashed again;
* each decided call is claimed in the claim ledger shared with every other process (beside
  the approvals: ``resumed-calls.json`` next to the approvals file, or the same database)
  before anything runs, so a second resume, here or anywhere, runs nothing; the state file is
  removed once the run finished.

The level and the tools come from this console's configuration, never from the state; the
agent type is the signed state's own (the graph refuses any other).

Runs are started and resumed on worker threads: the page returns at once and shows the run
as it goes (its record moves on; the console's event stream says so). One resume of a run at
a time: a second one while the first is under way is refused (`RunnerBusyError`).
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections import deque
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as futures_wait
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from orchestrator.service import OrchestratorService
    from tools.approvals import ApprovalRequest, Approve, Deny, StateSigner

__all__ = ["Activity", "AgentRunner", "Held", "RunnerBusyError", "ServiceRunner"]

logger = logging.getLogger(__name__)

#: Builds the service of an agent type (None: the main agent), recording its runs; the
#: runner closes it after each run or resume.
ServiceFactory = Callable[[str | None], "OrchestratorService"]
_MAX_STATE_BYTES = 20_000_000
_RUN_ID = re.compile(r"run_[0-9a-f]{32}")
_KEPT_ACTIVITIES = 50


class RunnerBusyError(Exception):
    """The run is being resumed already; nothing more was started."""


@dataclass(frozen=True)
class Held:
    """The calls a paused run holds, read from its verified state.

    Attributes:
        run_id: The run.
        agent: The agent type that paused it.
        requests: The held calls, in call order (arguments, their hash, risk, reason, preview).
        problem: Why the state cannot be used (then ``requests`` is empty and nothing can
            be decided from the console).
    """

    run_id: str
    agent: str = ""
    requests: tuple[ApprovalRequest, ...] = ()
    problem: str | None = None


@dataclass(frozen=True)
class Activity:
    """Something the runner started: a question asked or a paused run resumed.

    Attributes:
        kind: ``asking`` or ``resuming``.
        subject: The question, or the run id resumed.
        started_at: When it started.
        run_id: The run (known once it started).
        finished_at: When it ended (None while under way).
        outcome: How the run stood then (``answered``, ``paused``, ``budget_exhausted``).
        problem: Why it failed (the resume was refused, the model failed, ...).
    """

    kind: Literal["asking", "resuming"]
    subject: str
    started_at: datetime
    run_id: str | None = None
    finished_at: datetime | None = None
    outcome: str | None = None
    problem: str | None = None


class AgentRunner(Protocol):
    """What the console needs to start and resume agent runs."""

    def ask(self, question: str, agent: str | None = None) -> None:
        """Start a run of ``question`` (in the background)."""
        ...

    def held(self, run_id: str) -> Held:
        """The calls paused run ``run_id`` waits on."""
        ...

    def decide(self, run_id: str, decisions: Mapping[str, Approve | Deny]) -> None:
        """Resume ``run_id`` with a person's decisions (in the background).

        Raises:
            RunnerBusyError: a resume of that run is under way.
        """
        ...

    def activities(self) -> list[Activity]:
        """What was started recently, newest first."""
        ...

    def version(self) -> int:
        """A number that moves on whenever an activity starts or ends."""
        ...

    def close(self) -> None:
        """Wait for what is under way and stop."""
        ...


def _now() -> datetime:
    return datetime.now(timezone.utc)


class ServiceRunner:
    """An `AgentRunner` over `OrchestratorService` objects.

    Args:
        services: Builds the service of an agent type (its run log records the runs; its
            graph has the shared claim ledger and the user's state signer).
        data_dir: The data directory (paused states in ``<data_dir>/paused``).
        signer: Verifies saved states (the user's state key).
        max_workers: Runs and resumes under way at once.
    """

    def __init__(self, services: ServiceFactory, *, data_dir: Path, signer: StateSigner, max_workers: int = 2) -> None:
        self._services = services
        self._paused_dir = Path(data_dir) / "paused"
        self._data_dir = Path(data_dir)
        self._signer = signer
        self._pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="tooldeck-console-run")
        self._lock = threading.Lock()
        self._resuming: set[str] = set()
        self._activities: deque[Activity] = deque(maxlen=_KEPT_ACTIVITIES)
        self._version = 0
        self._under_way: set[Future[None]] = set()

    def __repr__(self) -> str:
        return f"ServiceRunner({str(self._data_dir)!r})"

    # ------------------------------------------------------------------ reading

    def held(self, run_id: str) -> Held:
        """See `AgentRunner.held`."""
        from orchestrator.graph.state import PausedRun, ResumeError

        try:
            state = self._state(run_id)
            paused = PausedRun.from_dict(state, signer=self._signer)
        except ResumeError as exc:
            return Held(run_id, problem=str(exc))
        return Held(run_id, paused.agent, tuple(paused.pending[i] for i in sorted(paused.pending)))

    def activities(self) -> list[Activity]:
        """See `AgentRunner.activities`."""
        with self._lock:
            return list(reversed(self._activities))

    def version(self) -> int:
        """See `AgentRunner.version`."""
        with self._lock:
            return self._version

    # ------------------------------------------------------------------ starting

    def ask(self, question: str, agent: str | None = None) -> None:
        """See `AgentRunner.ask`."""
        activity = self._begin(Activity("asking", question, _now()))
        self._submit(self._ask, question, agent, activity)

    def decide(self, run_id: str, decisions: Mapping[str, Approve | Deny]) -> None:
        """See `AgentRunner.decide`."""
        with self._lock:
            if run_id in self._resuming:
                raise RunnerBusyError(f"run {run_id} is being resumed already; wait for it to finish")
            self._resuming.add(run_id)
        activity = self._begin(Activity("resuming", run_id, _now(), run_id=run_id))
        self._submit(self._resume, run_id, dict(decisions), activity)

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until nothing is under way (or ``timeout`` seconds); True when nothing is."""
        with self._lock:
            pending = set(self._under_way)
        _, left = futures_wait(pending, timeout=timeout)
        return not left

    def close(self) -> None:
        """See `AgentRunner.close`."""
        self._pool.shutdown(wait=True)

    def _submit(self, work: Callable[..., None], *args: Any) -> None:
        future = self._pool.submit(work, *args)
        with self._lock:
            self._under_way.add(future)
        future.add_done_callback(self._done)

    def _done(self, future: Future[None]) -> None:
        with self._lock:
            self._under_way.discard(future)

    # ------------------------------------------------------------------ work

    def _ask(self, question: str, agent: str | None, activity: Activity) -> None:
        try:
            with self._services(agent) as service:
                run = service.ask(question)
                self._keep(service, run)
        except Exception as exc:
            logger.warning("console: the question could not be run: %s", exc, exc_info=True)
            self._end(activity, problem=_said(exc))
            return
        self._end(activity, run_id=run.run_id, outcome=_outcome(run.stop_reason))

    def _resume(self, run_id: str, decisions: dict[str, Approve | Deny], activity: Activity) -> None:
        from orchestrator.graph.state import PausedRun

        try:
            state = self._state(run_id)
            agent = PausedRun.from_dict(state, signer=self._signer).agent
            with self._services(None if agent == "main" else agent) as service:
                run = service.resume(state, decisions)
                self._keep(service, run)
        except Exception as exc:
            logger.warning("console: run %s was not resumed: %s", run_id, exc)
            self._end(activity, problem=_said(exc), release=run_id)
            return
        self._end(activity, outcome=_outcome(run.stop_reason), release=run_id)

    def _keep(self, service: OrchestratorService, run: object) -> None:
        """Save (or remove, once finished) the run's signed state where ``--resume`` finds it."""
        from orchestrator._approval_cli import keep_state
        from orchestrator.graph import AgentRun

        if not isinstance(run, AgentRun):  # pragma: no cover - the service returns AgentRun
            return
        path = keep_state(run, self._data_dir)
        log = getattr(service, "run_log", None)
        if path is not None and log is not None:
            log.note_state_file(run.run_id, path)

    def _state(self, run_id: str) -> dict[str, Any]:
        """The saved state of ``run_id`` (as JSON data; verified by whoever reads it)."""
        from orchestrator.graph.state import ResumeError

        if not _RUN_ID.fullmatch(run_id):
            raise ResumeError(f"{run_id[:100]!r} is not the id of an agent run (run_ and 32 hex digits)")
        path = self._paused_dir / f"{run_id}.json"
        try:
            with path.open("rb") as handle:
                raw = handle.read(_MAX_STATE_BYTES + 1)
        except FileNotFoundError:
            raise ResumeError(
                f"run {run_id} has no saved state in {self._paused_dir}: it is not paused (any more), or it paused "
                "where this console's data directory is not"
            ) from None
        except OSError as exc:
            raise ResumeError(f"the state of run {run_id} cannot be read ({exc.strerror or exc})") from None
        if len(raw) > _MAX_STATE_BYTES:
            raise ResumeError(f"{path} is larger than {_MAX_STATE_BYTES} bytes: not a paused run's state")
        try:
            state = json.loads(raw)
        except ValueError as exc:
            raise ResumeError(f"{path} is not JSON ({exc}); nothing was run") from None
        if not isinstance(state, dict):
            raise ResumeError(f"{path} is not a paused run's state (not a JSON object); nothing was run")
        return state

    # ------------------------------------------------------------------ bookkeeping

    def _begin(self, activity: Activity) -> Activity:
        with self._lock:
            self._activities.append(activity)
            self._version += 1
        return activity

    def _end(
        self,
        activity: Activity,
        *,
        run_id: str | None = None,
        outcome: str | None = None,
        problem: str | None = None,
        release: str | None = None,
    ) -> None:
        from dataclasses import replace

        done = replace(activity, run_id=run_id or activity.run_id, finished_at=_now(), outcome=outcome, problem=problem)
        with self._lock:
            try:
                self._activities[self._activities.index(activity)] = done
            except ValueError:
                self._activities.append(done)
            if release is not None:
                self._resuming.discard(release)
            self._version += 1


def _outcome(stop_reason: str) -> str:
    return {"final_answer": "answered", "max_iterations": "budget_exhausted", "awaiting_approval": "paused"}.get(
        stop_reason, stop_reason
    )


def _said(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:2000] or type(exc).__name__
