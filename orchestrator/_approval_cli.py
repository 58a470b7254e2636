"""The approval side of ``python -m orchestrator``: ``--freedom``, ``--approve``, and resuming a
paused run from a shell (``--resume RUN_ID|FILE --approve-call ID --deny-call ID``).

A run whose calls need a person's approval either asks at the terminal (``--approve ask``
with a terminal on stdin), or pauses: its state is saved under the data directory
(``paused/<run id>.json``, mode 0600) and printed with ``--json``, and the command exits 5.
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import stat
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from orchestrator.graph import AgentRun, PausedRun, ResumeError, state_from_json
from orchestrator.graph._content import wire_safe

if TYPE_CHECKING:
    from orchestrator.graph._approvals import GraphApprover
    from tools.approvals import ApprovalRequest, Approve, Approver, Deny

#: Largest state file ``--resume`` reads.
MAX_STATE_BYTES = 50_000_000
PAUSED_DIR = "paused"
_log = logging.getLogger(__name__)
_APPROVE_CALL = re.compile(r"^(?P<id>.+?)(?:@(?P<hash>[0-9a-f]{12,64}))?$")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The approval flags."""
    group = parser.add_argument_group(
        "approvals",
        "Which tool calls need a person's approval, and what happens to them. The level: --freedom, else "
        "TOOLDECK_FREEDOM, else the one `tooldeck configure freedom` stored, else medium (only safe tools run "
        "freely). A resume takes the level and --agent from here too, never from the state.",
    )
    group.add_argument(
        "--freedom",
        choices=["low", "medium", "high"],
        help="approval level for this run: low (nothing runs without approval), medium (only safe tools run "
        "freely), high (only dangerous tools need approval)",
    )
    group.add_argument(
        "--approve",
        choices=["ask", "pause", "deny"],
        default="ask",
        help="a call that needs approval: ask at the terminal (default; without a terminal the run pauses), "
        "pause (save the state and exit 5), or deny it",
    )
    group.add_argument(
        "--resume",
        metavar="RUN_ID|FILE",
        help="continue a paused run: its id (tooldeck runs list --status paused), or its state file ('-': stdin)",
    )
    group.add_argument(
        "--approve-call",
        action="append",
        default=[],
        metavar="ID[@HASH]",
        help="with --resume: approve this held call (with @HASH, only if its arguments hash starts so)",
    )
    group.add_argument(
        "--deny-call", action="append", default=[], metavar="ID", help="with --resume: deny this held call"
    )
    group.add_argument("--deny-message", metavar="TEXT", help="what the model is told about denied calls")
    group.add_argument(
        "--remember", action="store_true", help="with --approve-call: also approve the tool for its current version"
    )


def read_state(source: str, stdin: TextIO) -> dict[str, Any]:
    """The state in ``source`` (a file, or ``-`` for stdin).

    Raises:
        ResumeError: it cannot be read, is too large, or is not a JSON object.
    """
    if source == "-":
        text = stdin.read(MAX_STATE_BYTES + 1)
        if len(text) > MAX_STATE_BYTES:
            raise ResumeError(f"the state on stdin is larger than {MAX_STATE_BYTES} characters")
        return state_from_json(text)
    path = Path(source).expanduser()
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            raise ResumeError(f"--resume {source}: not a regular file; pass the state file a paused run saved")
        if info.st_size > MAX_STATE_BYTES:
            raise ResumeError(f"--resume {source}: larger than {MAX_STATE_BYTES} bytes; not a paused run's state")
        raw = path.read_bytes()
    except OSError as exc:
        raise ResumeError(f"--resume {source}: cannot be read ({exc.strerror or exc})") from None
    return state_from_json(raw)


def decisions(args: argparse.Namespace, paused: PausedRun) -> dict[str, Approve | Deny]:
    """``--approve-call`` / ``--deny-call`` as decisions (checked against the held calls).

    Raises:
        ResumeError: a call is both approved and denied, or ``@HASH`` does not match the
            held call's arguments hash.
    """
    from tools.approvals import Approve, Deny

    hashes = {r.call_id: r.arguments_hash for r in paused.pending.values()}
    chosen: dict[str, Approve | Deny] = {}
    for value in args.approve_call:
        match = _APPROVE_CALL.match(value)
        call_id, prefix = (match.group("id"), match.group("hash")) if match else (value, None)
        shown = hashes.get(call_id)
        if prefix is not None and shown is not None and not shown.startswith(prefix):
            raise ResumeError(
                f"--approve-call {value}: the arguments of call {call_id!r} hash to {shown[:16]}..., not {prefix}...; "
                "they changed after you looked, so nothing was run: look at the state again"
            )
        chosen[call_id] = Approve(remember=args.remember, shown_hash=shown if prefix is not None else None)
    message = args.deny_message or "denied from the command line"
    for call_id in args.deny_call:
        if call_id in chosen:
            raise ResumeError(f"call {call_id!r} is both approved and denied; decide it once")
        chosen[call_id] = Deny(message)
    return chosen


def approver(mode: str, stdin: TextIO, stderr: TextIO) -> GraphApprover | None:
    """``--approve ask`` with a terminal on stdin: the terminal prompt of ``tooldeck run``."""
    if mode != "ask" or not _isatty(stdin):
        return None
    from tools._terminal import SafeConsole
    from tools.cli.approve_cmds import TerminalApprover

    return TerminalApprover(stdin=stdin, console=SafeConsole(file=stderr))


def pipeline_approver(mode: str, stdin: TextIO, stderr: TextIO) -> Approver | None:
    """What the pipeline's agents do with a call that needs approval: ask at a terminal
    (``--approve ask``), deny it (``--approve deny``: the model is told), or nothing, so the
    pipeline pauses (``--approve pause``, or no terminal)."""
    from tools.approvals import Deny

    if mode == "deny":
        return lambda request: Deny("denied: the pipeline runs with --approve deny")
    asked = approver(mode, stdin, stderr)
    if asked is None:
        return None
    terminal = asked

    def ask(request: ApprovalRequest) -> Approve | Deny:
        answer = terminal(request)
        return answer if answer is not None else Deny("no answer at the terminal")

    return ask


def keep_state(run: AgentRun, data_dir: Path) -> Path | None:
    """Save a paused run's state to ``<data_dir>/paused/<run id>.json`` (mode 0600) and return
    the path; remove that file once the run finished. None when nothing was saved (a failure
    is logged: the state is then only in the ``--json`` output or the text printed)."""
    paused = run.status == "awaiting_approval"
    return keep_signed_state(run.run_id, run.state if paused else None, data_dir / PAUSED_DIR)


def keep_signed_state(run_id: str, state: Mapping[str, Any] | None, directory: Path | None) -> Path | None:
    """Save ``state`` (a signed paused state) as ``<directory>/<run id>.json`` (mode 0600) and
    return the path; ``state`` None removes that file (the run finished). None when nothing was
    saved (no directory, or a failure, which is logged)."""
    from tools._files import atomic_write_text

    if directory is None:
        return None
    path = directory / f"{run_id}.json"
    try:
        if state is None:
            path.unlink(missing_ok=True)
            return None
        atomic_write_text(path, json.dumps(state, ensure_ascii=False, indent=1) + "\n", mode=0o600)
    except OSError as exc:
        _log.error("cannot write %s (%s)", path, exc.strerror or exc)
        return None
    return path


def format_pending(run: AgentRun, state_file: Path | None) -> str:
    """What a paused run prints: each held call, and the commands that continue it by its run
    id (the state itself when it could not be saved)."""
    count = len(run.pending_approvals)
    lines = [f"Waiting for approval: {count} tool call(s) need a person's decision (run {run.run_id})."]
    lines += pending_lines(run.pending_approvals)
    lines += continue_lines(run.pending_approvals[0], run.state or {}, state_file, run_id=run.run_id)
    return wire_safe("\n".join(lines))


def pending_lines(requests: Sequence[ApprovalRequest]) -> list[str]:
    """Each held call: id, tool, arguments, risk and why, arguments hash, and what it changes."""
    lines: list[str] = []
    for request in requests:
        arguments = json.dumps(request.arguments, ensure_ascii=False, default=str)
        if len(arguments) > 300:
            arguments = arguments[:297] + "..."
        lines += [
            f"  {request.call_id}: {request.tool} {arguments}",
            f"      risk {request.risk}: {request.reason}",
            f"      arguments hash {request.arguments_hash[:12]}",
        ]
        if request.preview is not None:  # the code an install or a promotion would put in place
            lines.append("      what it changes:")
            lines += [f"        {line}" for line in request.preview.rstrip("\n").splitlines()]
    return lines


def continue_lines(
    first: ApprovalRequest,
    state: Mapping[str, Any],
    state_file: Path | None,
    *,
    run_id: str | None = None,
    flags: str = "--agent, --registry and --data-dir",
) -> list[str]:
    """The commands that continue a paused run: ``--resume RUN_ID`` (the state saved in the
    data directory; the file's path works too), or the state itself when it could not be
    saved. ``flags``: the run's own flags a resume gives again (nothing in a state decides
    them)."""
    if state_file is None:
        return [
            "The state could not be saved (see the error above); here it is, for --resume -:",
            json.dumps(state, ensure_ascii=False),
        ]
    target = run_id or str(state_file)
    lines = [
        f"State saved to {state_file}. Continue with (and this run's own {flags} flags):",
        f"  python -m orchestrator --resume {target} --approve-call {first.call_id}@{first.arguments_hash[:12]}",
        f"  python -m orchestrator --resume {target} --deny-call {first.call_id} --deny-message 'not now'",
    ]
    if run_id:
        lines.append(f"  (--resume {state_file} works as well as the run id)")
    return lines


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
