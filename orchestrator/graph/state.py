"""`PausedRun`: the JSON state of an agent run that waits for a person, and its checks.

`AgentRun.state` is `PausedRun.to_dict()`; `AgentGraph.resume` reads it back with
`PausedRun.from_dict`, which refuses (`ResumeError`, nothing run) any state that does not hold
together: another kind or version, a held call whose arguments no longer hash to the hash
shown, a held call that is not one of the turn's calls, answers that do not match the turn's
calls. The conversation's last assistant message is the source of truth: what a resume runs
are the arguments *that message* carries, and only if they hash to what was shown.

The state is plain data a person may keep in a file, and it is signed
(`tools.approvals.StateSigner`, HMAC-SHA256 with a key only its user can read): `from_dict`
verifies the signature before it believes anything in the state, so an edited state (any
value: the agent, a level, arguments, pending approvals, messages) is refused and runs
nothing. States of version 1 (before signing) are refused with a message saying why. Nothing
in a state decides a safety level: a resume takes the level and the agent type from the
resuming graph (its user's configuration and flags).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Literal

from orchestrator.graph._calls import PendingCall, pending_calls
from orchestrator.graph.run import StepRecord
from orchestrator.graph.tools_node import ToolCallRecord
from orchestrator.llm import Message
from tools.approvals import ApprovalError, ApprovalRequest, StateSigner, arguments_hash
from tools.errors import InvalidArgumentsError

__all__ = ["STATE_KIND", "STATE_VERSION", "PausedRun", "ResumeError", "state_from_json", "verified_state"]

STATE_KIND = "tooldeck.paused_run"
#: Version 2: signed. Version 1 states (unsigned) are refused.
STATE_VERSION = 2
_RUN_ID = re.compile(r"^run_[0-9a-f]{32}$")
_TIME = "%Y-%m-%dT%H:%M:%SZ"

Decided = Literal["approved", "denied"]


class ResumeError(ValueError):
    """A paused run cannot be resumed as asked; nothing was run.

    The message says what is wrong (a state that was altered or belongs elsewhere, a decision
    for a call that is not waiting, a call already resumed) and what to do instead.
    """


def new_run_id() -> str:
    """A fresh run id: ``run_`` and 32 random hex digits."""
    import uuid

    return "run_" + uuid.uuid4().hex


def call_key(turn: int, call_id: str) -> str:
    """How a held call is named in claims and in ``decided``: ``"<turn>/<call id>"``."""
    return f"{turn}/{call_id}"


@dataclass
class PausedRun:
    """A run waiting for decisions about some calls of its last model turn.

    Attributes:
        run_id: The run's id.
        agent: The agent type of the graph that ran it (resumed only by such a graph).
        paused_at: When it paused (UTC).
        iterations: Model turns so far; the held calls belong to turn ``iterations``.
        messages: The conversation, ending with the assistant turn of the held calls.
        answered: Tool messages of that turn's calls that already have an answer, by call
            position.
        pending: The held calls, by call position.
        decided: ``"<turn>/<call id>"`` -> ``"approved"`` or ``"denied"``: what earlier
            resumes of this run decided.
        tool_results: Trace records so far.
        steps: Node executions so far.
        elapsed_ms: Time spent running so far (waiting for a person not counted).
    """

    run_id: str
    agent: str
    paused_at: datetime
    iterations: int
    messages: list[Message]
    answered: dict[int, Message]
    pending: dict[int, ApprovalRequest]
    decided: dict[str, Decided] = field(default_factory=dict)
    tool_results: list[ToolCallRecord] = field(default_factory=list)
    steps: list[StepRecord] = field(default_factory=list)
    elapsed_ms: float = 0.0

    @property
    def calls(self) -> list[PendingCall]:
        """Every call of the last model turn, in order."""
        return pending_calls(self.messages[-1:])

    def to_dict(self) -> dict[str, Any]:
        """The JSON-serialisable state, unsigned (a deep copy: later changes to the run do not
        show); `to_signed_dict` is what a paused run hands out."""
        data = {
            "kind": STATE_KIND,
            "version": STATE_VERSION,
            "run_id": self.run_id,
            "agent": self.agent,
            "paused_at": self.paused_at.astimezone(timezone.utc).strftime(_TIME),
            "iterations": self.iterations,
            "pending_approvals": [self.pending[i].to_dict() for i in sorted(self.pending)],
            "answered": [{"index": i, "message": self.answered[i]} for i in sorted(self.answered)],
            "decided": dict(self.decided),
            "elapsed_ms": round(self.elapsed_ms, 3),
            "steps": [{"node": s.node, "iteration": s.iteration, "duration_ms": s.duration_ms} for s in self.steps],
            "tool_results": self.tool_results,
            "messages": self.messages,
        }
        copied: dict[str, Any] = json.loads(json.dumps(data, ensure_ascii=False, default=str))
        return copied

    def to_signed_dict(self, signer: StateSigner) -> dict[str, Any]:
        """`to_dict` signed by ``signer`` (what ``AgentRun.state`` holds).

        Raises:
            StateKeyError: the signer's key file is unusable.
        """
        return signer.sign(self.to_dict())

    @classmethod
    def from_dict(cls, data: object, *, signer: StateSigner) -> PausedRun:
        """Read, verify and check a state `to_signed_dict` produced (or the ``--json`` output
        holding one).

        Args:
            data: The state.
            signer: Verifies its signature (the signer of the graph that paused it: the
                same key).

        Raises:
            ResumeError: the state is not signed, or not with this key, or was edited; it is
                malformed, from another version, or does not hold together (the message
                names the problem). Nothing in it was used.
        """
        data = verified_state(data, kind=STATE_KIND, version=STATE_VERSION, signer=signer, what="paused agent run")
        run = cls(
            run_id=_run_id(data.get("run_id")),
            agent=_text(data, "agent", 64),
            paused_at=_time(data.get("paused_at")),
            iterations=_count(data, "iterations", minimum=1),
            messages=_messages(data.get("messages")),
            answered={},
            pending={},
            decided=_decided(data.get("decided", {})),
            tool_results=_records(data.get("tool_results", [])),
            steps=_steps(data.get("steps", [])),
            elapsed_ms=_number(data, "elapsed_ms"),
        )
        calls = run.calls
        if not calls:
            raise ResumeError("the state's last message is not an assistant turn with tool calls: nothing to resume")
        run.pending = _pending(data.get("pending_approvals"), calls)
        run.answered = _answered(data.get("answered", []), calls, run.pending)
        return run


def verified_state(data: object, *, kind: str, version: int, signer: StateSigner, what: str) -> dict[str, Any]:
    """``data`` (or the ``state`` of a whole ``--json`` output) as a fresh JSON copy whose kind,
    version and signature are checked; the signature field is dropped.

    Raises:
        ResumeError: not a JSON object, another kind, an unsigned version 1 state, another
            version, or a signature that is missing, of another key, or does not match.
    """
    if isinstance(data, Mapping) and "state" in data and "kind" not in data:
        data = data["state"]  # the whole `--json` output of a paused run
    try:  # a copy, checked to be JSON: resuming never changes the caller's state
        data = json.loads(json.dumps(data, ensure_ascii=False, allow_nan=False))
    except (TypeError, ValueError, RecursionError) as exc:
        raise ResumeError(f"a {what}'s state is JSON data; this is not ({type(exc).__name__})") from None
    if not isinstance(data, dict):
        raise ResumeError(f"a {what}'s state is a JSON object, not {type(data).__name__}")
    if data.get("kind") != kind:
        raise ResumeError(
            f"not the state of a {what} (kind {str(data.get('kind'))[:40]!r}, expected {kind!r}); pass the state "
            "it returned, or the file `python -m orchestrator` saved"
        )
    found = data.get("version")
    if found == 1 and version > 1:
        raise ResumeError(
            "state version 1 was saved by an older tooldeck, before saved states were signed: it cannot be checked "
            "for edits, so it is not resumed (nothing was run). Ask the question again"
        )
    if found != version:
        raise ResumeError(
            f"state version {str(found)[:20]} is not supported (this orchestrator reads version {version})"
        )
    try:
        return signer.verify(data, what=f"the {what}'s state")
    except ApprovalError as exc:
        raise ResumeError(str(exc)) from None


# ---------------------------------------------------------------------- field checks


def _altered(what: str) -> ResumeError:
    return ResumeError(f"{what}; the state was altered or is damaged, so nothing was run")


def _run_id(value: object) -> str:
    if isinstance(value, str) and _RUN_ID.match(value):
        return value
    raise _altered(f"run_id {str(value)[:40]!r} is not a run id (run_ and 32 hex digits)")


def _text(data: Mapping[str, Any], key: str, limit: int) -> str:
    value = data.get(key)
    if isinstance(value, str) and 0 < len(value) <= limit:
        return value
    raise _altered(f"{key} is missing or not a short text")


def _count(data: Mapping[str, Any], key: str, *, minimum: int) -> int:
    value = data.get(key)
    if type(value) is int and value >= minimum:
        return value
    raise _altered(f"{key} is not a whole number >= {minimum}")


def _number(data: Mapping[str, Any], key: str) -> float:
    value = data.get(key, 0.0)
    if type(value) in (int, float) and value >= 0:
        return float(value)
    raise _altered(f"{key} is not a number >= 0")


def _time(value: object) -> datetime:
    try:
        return datetime.strptime(str(value), _TIME).replace(tzinfo=timezone.utc)
    except ValueError:
        raise _altered(f"paused_at {str(value)[:40]!r} is not a UTC time like 2026-05-01T10:00:00Z") from None


def _messages(value: object) -> list[Message]:
    if not isinstance(value, list) or not value:
        raise _altered("messages is not a non-empty list")
    for number, message in enumerate(value):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise _altered(f"message #{number} is not an object with a role")
    return value


def _decided(value: object) -> dict[str, Decided]:
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and v in ("approved", "denied") for k, v in value.items()
    ):
        raise _altered('decided is not an object of "<turn>/<call id>": "approved" | "denied"')
    return dict(value)


def _records(value: object) -> list[ToolCallRecord]:
    if not isinstance(value, list) or not all(isinstance(r, dict) for r in value):
        raise _altered("tool_results is not a list of objects")
    return value


def _steps(value: object) -> list[StepRecord]:
    steps: list[StepRecord] = []
    if not isinstance(value, list):
        raise _altered("steps is not a list")
    for step in value:
        if (
            not isinstance(step, dict)
            or step.get("node") not in ("agent", "tools")
            or type(step.get("iteration")) is not int
            or type(step.get("duration_ms")) not in (int, float)
        ):
            raise _altered("steps holds an entry that is not {node, iteration, duration_ms}")
        steps.append(StepRecord(step["node"], step["iteration"], float(step["duration_ms"])))
    return steps


def _pending(value: object, calls: list[PendingCall]) -> dict[int, ApprovalRequest]:
    """The held calls by position; each must be one of the turn's calls, with the arguments
    that call carries hashing to the hash that was shown."""
    if not isinstance(value, list) or not value:
        raise ResumeError("the state has no pending approvals: nothing waits for a decision")
    positions: dict[str, list[int]] = {}
    for call in calls:
        positions.setdefault(call.id, []).append(call.index)
    pending: dict[int, ApprovalRequest] = {}
    for number, entry in enumerate(value):
        if not isinstance(entry, Mapping):
            raise _altered(f"pending approval #{number} is not an object")
        try:
            request = ApprovalRequest.from_dict(entry)
        except ValueError as exc:
            raise _altered(f"pending approval #{number}: {exc}") from None
        call_id = request.call_id
        found = positions.get(call_id or "", [])
        if len(found) != 1:
            raise _altered(
                f"pending approval #{number} is for call {str(call_id)[:64]!r}, which is not "
                + ("one call" if found else "a call")
                + " of the run's last model turn"
            )
        call = calls[found[0]]
        if call.name != request.tool:
            raise _altered(f"call {call.id!r} asks for the tool {call.name[:64]!r}, not {request.tool[:64]!r}")
        try:
            sent = arguments_hash(call.arguments)
        except InvalidArgumentsError:
            sent = ""
        if sent != request.arguments_hash:
            raise _altered(
                f"the arguments of call {call.id!r} in the conversation do not hash to the arguments_hash shown "
                f"for it ({request.arguments_hash[:16]}...)"
            )
        if call.index in pending:
            raise _altered(f"call {call.id!r} is pending twice")
        pending[call.index] = request
    return pending


def _answered(value: object, calls: list[PendingCall], pending: Mapping[int, ApprovalRequest]) -> dict[int, Message]:
    if not isinstance(value, list):
        raise _altered("answered is not a list")
    answered: dict[int, Message] = {}
    for entry in value:
        index = entry.get("index") if isinstance(entry, dict) else None
        message = entry.get("message") if isinstance(entry, dict) else None
        if type(index) is not int or not 0 <= index < len(calls) or index in answered or index in pending:
            raise _altered("answered holds an entry whose index is not one unanswered call of the last model turn")
        if (
            not isinstance(message, dict)
            or message.get("role") != "tool"
            or message.get("tool_call_id") != calls[index].id
            or not isinstance(message.get("content"), str)
        ):
            raise _altered(f"the answer of call #{index} is not a tool message for {calls[index].id!r}")
        answered[index] = message
    missing = [c.id for c in calls if c.index not in answered and c.index not in pending]
    if missing:
        raise _altered(f"calls {', '.join(repr(m[:64]) for m in missing[:5])} are neither answered nor pending")
    return answered


def state_from_json(text: str | bytes) -> dict[str, Any]:
    """A paused run's state from JSON text (``AgentRun.state``, or the whole ``--json`` output).

    Raises:
        ResumeError: the text is not JSON, is nested too deeply, or is not a JSON object.
    """
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise ResumeError(f"the paused run's state is not JSON ({type(exc).__name__}: {str(exc)[:200]})") from None
    if not isinstance(data, dict):
        raise ResumeError("the paused run's state is a JSON object; this JSON is not one")
    return data
