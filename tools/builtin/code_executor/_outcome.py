"""What a run's launcher reported, normalised across launchers, and the result built from it."""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass
from typing import Any

from tools.builtin.code_executor._bwrap import parse_status
from tools.builtin.code_executor._capture import Capture
from tools.builtin.code_executor._memory import MemoryPlan
from tools.builtin.code_executor.sandbox import SandboxLimits, SandboxResult

#: bwrap reports a death by signal N as exit status 128 + N (like a shell).
_SIGNAL_BASE = 128


@dataclass
class Outcome:
    """What held and how the program ended, whichever launcher ran it."""

    launcher: str
    network: bool = False
    pid_namespace: bool = False
    filesystem: bool = False
    per_run_userns: bool = False
    no_new_privs: bool = False
    seccomp: bool = False
    exit_code: int | None = None
    start_error: str | None = None
    refused: str | None = None
    detail: str | None = None


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def from_bwrap(capture: Capture, returncode: int, *, network: bool, filesystem: bool, seccomp: bool) -> Outcome:
    """Read bwrap's JSON status: an ``exit-code`` means the program ran."""
    status = parse_status(capture.status_raw)
    outcome = Outcome("bwrap", network, True, filesystem, True, True, seccomp)
    code = status.get("exit-code")
    if isinstance(code, int):
        is_signal = _SIGNAL_BASE < code <= _SIGNAL_BASE + signal.SIGRTMAX
        outcome.exit_code = _SIGNAL_BASE - code if is_signal else code
    elif returncode < 0:  # bwrap itself was killed (by us: timeout, output, close)
        outcome.exit_code = returncode
    else:
        lines = bytes(capture.stderr).decode("utf-8", "replace").strip().splitlines()
        outcome.start_error = lines[-1][:300] if lines else f"bwrap exited with status {returncode}"
    return outcome


def from_launcher(capture: Capture, returncode: int, *, isolate_fs: bool) -> Outcome:
    """Read the namespaces launcher's ``key=value`` status lines (later lines win)."""
    info: dict[str, Any] = {}
    for item in capture.status:
        info.update(item)
    held = [bool(info.get(k)) for k in ("net", "pid", "fs", "userns")]
    outcome = Outcome(
        "namespaces" if any(held) else "none",
        network=held[0],
        pid_namespace=held[1],
        filesystem=held[2] and isolate_fs,
        per_run_userns=held[3],
        no_new_privs=bool(info.get("nnp")),
        seccomp=bool(info.get("seccomp")),
        exit_code=returncode,
    )
    if "error" in info:
        outcome.start_error = str(info["error"])
    if info.get("refused"):
        outcome.refused = str(info.get("missing") or "isolation")
    outcome.detail = "; ".join(str(info[k]) for k in ("ns_error", "fs_error") if info.get(k)) or None
    if isinstance(info.get("wait_status"), int):
        outcome.exit_code = os.waitstatus_to_exitcode(info["wait_status"])
    return outcome


def _note(limits: SandboxLimits, capture: Capture, sig: str | None, timeout: float) -> str | None:
    if capture.timed_out:
        return f"Killed after the {timeout:g} s wall-clock limit."
    if capture.output_killed:
        return f"Killed after writing more than {limits.max_drain_bytes} bytes of output."
    if sig == "SIGXCPU":
        return f"Killed after using the {limits.cpu_seconds} s CPU time limit."
    if sig == "SIGXFSZ":
        return f"Killed for writing a file larger than {limits.file_size_mb} MiB."
    if capture.truncated:
        return f"Output was cut to {limits.max_output_bytes} bytes per stream."
    return None


def build_result(
    outcome: Outcome,
    capture: Capture,
    *,
    language: str,
    limits: SandboxLimits,
    duration_ms: float,
    timeout: float,
    uid: int,
    memory: MemoryPlan,
) -> SandboxResult:
    """The :class:`SandboxResult` of a run that started (``memory``: how its memory was bounded)."""
    exit_code = outcome.exit_code if outcome.exit_code is not None else 1
    if capture.timed_out or capture.output_killed:
        exit_code = -signal.SIGKILL
    sig = _signal_name(-exit_code) if exit_code < 0 else None
    return SandboxResult(
        language=language,
        stdout=bytes(capture.stdout).decode("utf-8", "replace"),
        stderr=bytes(capture.stderr).decode("utf-8", "replace"),
        exit_code=exit_code,
        duration_ms=round(duration_ms, 3),
        timed_out=capture.timed_out,
        killed=sig is not None,
        truncated=capture.truncated,
        network_isolated=outcome.network,
        signal=sig,
        note=_note(limits, capture, sig, timeout),
        isolation={
            "launcher": outcome.launcher,
            "network": outcome.network,
            "pid_namespace": outcome.pid_namespace,
            "filesystem": outcome.filesystem,
            "process_cap": memory.processes if outcome.per_run_userns else None,
            "no_new_privs": outcome.no_new_privs,
            "seccomp": outcome.seccomp,
            "uid": uid,
            # Without a per-run process cap, the divided budget bounds each process only.
            "memory_mode": memory.mode if outcome.per_run_userns or memory.mode == "cgroup" else "per-process",
            "memory_mb": memory.budget_mb,
            "process_memory_mb": memory.process_mb,
        },
    )
