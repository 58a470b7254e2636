"""Claim stores: what makes "an approved call runs exactly once" hold across resumes.

A paused run (`AgentGraph.run` ending ``awaiting_approval``) is plain JSON data: nothing stops
someone from resuming the same saved state twice, or from two processes at once. Before a
resume runs anything, it *claims* every call it decides, keyed by the run id and the call
(``"<turn>/<call id>"``), all at once: if any of them was claimed before, the resume is
refused and nothing runs.

* `FileClaimStore`: claims live in a small JSON ledger, written under a file lock
  (``filelock``) and replaced atomically, so every process that uses the same file sees
  every claim: two processes resuming the same saved state at once run each call once.
* `PostgresClaimStore` (`orchestrator.graph.postgres_claims`): claims live in a PostgreSQL
  table, so every process on every host that uses the database sees every claim.
* `MemoryClaimStore`: claims live in the graph object; two graphs do not see each other's.

An `AgentGraph` given no store uses `claims_beside` its approvals: the ledger file next to
the approvals file (``resumed-calls.json``), or the approvals' PostgreSQL database. Only a
graph whose approvals are kept nowhere (no policy, or a policy without a store) keeps its
claims in memory.

A claim is taken *before* the call runs: a process that dies while the call runs leaves it
claimed, so the call ran at most once (a person can see that in the ledger and decide what
to do). "Exactly once" therefore means: at most once, and once when the resume finishes.
"""

from __future__ import annotations

import json
import os
import stat
import threading
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Protocol

from filelock import FileLock, Timeout

from tools._files import atomic_write_text

__all__ = ["CLAIMS_FILE", "ClaimStore", "ClaimStoreError", "FileClaimStore", "MemoryClaimStore", "claims_beside"]

#: The ledger's file name, beside the approvals file (``~/.config/tooldeck/resumed-calls.json``).
CLAIMS_FILE = "resumed-calls.json"
#: Larger ledgers are refused unread.
MAX_CLAIMS_BYTES = 20_000_000
_VERSION = 1


class ClaimStoreError(Exception):
    """The claim ledger cannot be used; nothing was claimed (so nothing runs)."""


class ClaimStore(Protocol):
    """Where resumes record the calls they decided, so none is decided (or run) twice."""

    def claim(self, run_id: str, keys: Sequence[str]) -> list[str]:
        """Claim every key of ``run_id`` at once, or none.

        Args:
            run_id: The paused run's id.
            keys: The calls to claim (``"<turn>/<call id>"``).

        Returns:
            The keys claimed before (then nothing was claimed); empty when all were claimed now.

        Raises:
            ClaimStoreError: the store cannot be used (nothing was claimed).
        """
        ...


class MemoryClaimStore:
    """Claims kept in this object (thread-safe): one graph, one process."""

    def __init__(self) -> None:
        self._claimed: dict[str, set[str]] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"MemoryClaimStore(runs={len(self._claimed)})"

    def claim(self, run_id: str, keys: Sequence[str]) -> list[str]:
        """See `ClaimStore.claim`."""
        with self._lock:
            held = self._claimed.setdefault(run_id, set())
            taken = [key for key in keys if key in held]
            if not taken:
                held.update(keys)
            return taken


def _utc_now() -> datetime:
    return datetime.now(timezone.utc)


class FileClaimStore:
    """Claims kept in a JSON ledger file shared by every process that uses it.

    The file (``{"version": 1, "runs": {run_id: {"at": ISO time, "calls": [...]}}}``) is read
    and written under ``<file>.lock``; runs whose last claim is older than ``retention`` are
    dropped on the next write, so the ledger stays small. Resuming a state older than the
    retention is refused by the graph (``AgentGraph(max_state_age=...)`` defaults to the same
    30 days), so a dropped record can never let a call run again.

    Args:
        path: The ledger file (created on first claim, with its directory).
        retention: How long claims are kept.
        lock_timeout: Seconds to wait for another process's lock.
        clock: Current UTC time (injectable for tests).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        retention: timedelta = timedelta(days=30),
        lock_timeout: float = 30.0,
        clock: Callable[[], datetime] = _utc_now,
    ) -> None:
        if retention <= timedelta(0):
            raise ValueError(f"retention must be positive, got {retention}")
        self.path = Path(path)
        self.retention = retention
        self._lock_timeout = lock_timeout
        self._clock = clock

    def __repr__(self) -> str:
        return f"FileClaimStore({str(self.path)!r})"

    def claim(self, run_id: str, keys: Sequence[str]) -> list[str]:
        """See `ClaimStore.claim`."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with FileLock(str(self.path) + ".lock", timeout=self._lock_timeout):
                runs = self._read()
                held = runs.get(run_id, {}).get("calls", [])
                taken = [key for key in keys if key in held]
                if taken:
                    return taken
                now = self._clock()
                cutoff = now - self.retention
                kept = {rid: entry for rid, entry in runs.items() if _when(entry) >= cutoff}
                kept[run_id] = {"at": now.strftime("%Y-%m-%dT%H:%M:%SZ"), "calls": [*held, *keys]}
                atomic_write_text(self.path, json.dumps({"version": _VERSION, "runs": kept}, indent=1) + "\n")
                return []
        except Timeout:
            raise ClaimStoreError(
                f"claim ledger {self.path}: another process held its lock for {self._lock_timeout:g} s; retry, "
                f"or remove {self.path}.lock if no orchestrator is running"
            ) from None
        except OSError as exc:
            raise ClaimStoreError(
                f"claim ledger {self.path}: cannot be used ({exc.strerror or exc}); make its directory "
                "writable or choose another data directory"
            ) from None

    def claimed(self, run_id: str) -> list[str]:
        """The keys claimed for ``run_id`` (for inspection; no lock is taken)."""
        try:
            entry = self._read().get(run_id, {})
        except OSError as exc:
            raise ClaimStoreError(f"claim ledger {self.path}: cannot be read ({exc.strerror or exc})") from None
        return list(entry.get("calls", []))

    def _read(self) -> dict[str, dict[str, Any]]:
        try:
            info = os.stat(self.path)
        except FileNotFoundError:
            return {}
        if not stat.S_ISREG(info.st_mode):
            raise self._bad("is not a regular file")
        if info.st_size > MAX_CLAIMS_BYTES:
            raise self._bad(f"is larger than {MAX_CLAIMS_BYTES} bytes")
        with open(self.path, "rb") as handle:
            raw = handle.read(MAX_CLAIMS_BYTES + 1)
        try:
            data = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            raise self._bad("is not valid JSON") from None
        runs = data.get("runs") if isinstance(data, dict) else None
        if not isinstance(runs, dict) or data.get("version") != _VERSION:
            raise self._bad(f'is not a claim ledger ({{"version": {_VERSION}, "runs": {{...}}}})')
        for run_id, entry in runs.items():
            calls = entry.get("calls") if isinstance(entry, dict) else None
            if not isinstance(calls, list) or not all(isinstance(key, str) for key in calls):
                raise self._bad(f"run {str(run_id)[:40]!r} has no list of calls")
        return runs

    def _bad(self, problem: str) -> ClaimStoreError:
        return ClaimStoreError(
            f"claim ledger {self.path} {problem}; no paused run can be resumed with it until it is fixed or "
            "removed (removing it forgets which approved calls already ran)"
        )


def _when(entry: dict[str, Any]) -> datetime:
    try:
        return datetime.strptime(str(entry.get("at")), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
    except ValueError:
        return datetime.max.replace(tzinfo=timezone.utc)  # unreadable time: keep the record


def claims_beside(approvals: object, *, retention: timedelta = timedelta(days=30)) -> ClaimStore:
    """The claim store that lives beside an approvals store, so that every graph, process
    and host that shares the approvals also shares the claims.

    Args:
        approvals: The approval policy's store: an `tools.approvals.ApprovalsStore` (the
            ledger is ``resumed-calls.json`` in the same directory) or a
            `tools.approvals.PostgresApprovalsStore` (the same database and pool); None or
            any other object: a `MemoryClaimStore` (nothing durable to sit beside).
        retention: How long the claims are kept.
    """
    from tools.approvals import ApprovalsStore, PostgresApprovalsStore

    if isinstance(approvals, PostgresApprovalsStore):
        from orchestrator.graph.postgres_claims import PostgresClaimStore

        return PostgresClaimStore(database=approvals.database, retention=retention)
    if isinstance(approvals, ApprovalsStore):
        return FileClaimStore(approvals.path.parent / CLAIMS_FILE, retention=retention)
    return MemoryClaimStore()
