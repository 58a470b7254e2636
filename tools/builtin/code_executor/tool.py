"""CodeExecutorTool (``execute_code``): run a program in a sandbox and report its output."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

from tools.base import BaseTool
from tools.builtin.code_executor.local import LocalSandbox
from tools.builtin.code_executor.sandbox import SandboxClient
from tools.executors._pickling import shallow_copy, state_without
from tools.manual import ToolCategory, ToolManual
from tools.result import ToolResult


class CodeExecutionRequest(BaseModel):
    """Arguments of the execute_code tool."""

    code: str = Field(
        description=(
            "A complete program. It runs once in a fresh, empty working directory with no "
            "network and tight CPU, memory, file-size and time limits; print what you need to "
            "see. Installed third-party packages are not available to Python code."
        ),
    )
    language: Literal["python", "bash", "sh", "node"] = Field(
        default="python",
        description="The language of 'code'. Python is always available; others if installed.",
    )
    stdin: str | None = Field(default=None, description="Text for the program's standard input.")
    timeout_seconds: float | None = Field(
        default=None,
        gt=0,
        le=600,
        description="Wall-clock limit in seconds; capped at the sandbox's maximum (default).",
    )


class CodeExecutionResponse(BaseModel):
    """What happened when the execute_code tool ran the program."""

    language: str = Field(description="The language the code ran as.")
    stdout: str = Field(description="Standard output (cut when 'truncated').")
    stderr: str = Field(description="Standard error (cut when 'truncated').")
    exit_code: int | None = Field(description="Exit code; 0 is success, negative -N means killed by signal N.")
    duration_ms: float = Field(description="Wall-clock duration of the run.")
    timed_out: bool = Field(description="The time limit was hit and the program killed.")
    killed: bool = Field(description="The program was ended by a signal.")
    truncated: bool = Field(description="stdout or stderr was cut at the output limit.")
    network_isolated: bool = Field(description="The program had no network access.")
    signal: str | None = Field(default=None, description="The fatal signal's name, if any.")
    note: str | None = Field(default=None, description="Why a limit ended the run, if one did.")


class CodeExecutorTool(BaseTool[CodeExecutionRequest, CodeExecutionResponse]):
    """Runs model-written code in a :class:`~tools.builtin.code_executor.sandbox.SandboxClient`.

    A program that fails, loops, floods output or exceeds a limit is a successful call
    whose data says so (``exit_code``, ``timed_out``, ``truncated``, ``note``): the model
    reads it and fixes its code. Unknown languages and oversized code or stdin are a
    ``validation_error``; a sandbox that can't run anything (or can't contain programs on
    this machine) is an ``execution_error`` that counts against the circuit breaker, while
    a misbehaving program never does.

    Risk: with its own sandbox (the default) the tool is ``safe``: the program's effects
    stay inside the sandbox (no network, no host files, nothing kept), so it runs without
    asking at freedom level ``medium``. With an injected sandbox, whose containment this
    tool cannot know, it is ``dangerous`` unless registered with another manual
    (``registry.register(tool, manual=CodeExecutorTool.contained_manual)``).

    Args:
        sandbox: Where code runs. Default: a :class:`LocalSandbox` with its safe default
            limits (10 s, 2 GiB per run, 16 MiB files, 16 processes, 64 kB of output per stream),
            network and filesystem isolated, owned by this tool and shut down by
            :meth:`close`. An injected sandbox is left to its owner.
        hidden_dirs: The application's data directories (keys, databases, approvals), for
            the tool's own sandbox: out of the programs' view even where a system
            directory the sandbox shows holds them (``LocalSandbox(hidden_dirs=...)``).

    Raises:
        ValueError: ``hidden_dirs`` with an injected sandbox (give it to that sandbox).
    """

    name = "execute_code"
    description = (
        "Run a short Python (or bash/sh/node) program in an isolated sandbox and return its "
        "stdout, stderr and exit code. Use it for calculations, data processing and checking "
        "code; the sandbox has no network and keeps no files between calls."
    )
    version = "1.0.0"
    manual = ToolManual(
        name="execute_code",
        display_name="Run code",
        description="Runs model-written code in a sandbox this tool did not set up: its containment is unknown.",
        category=ToolCategory.EXECUTION,
        risk="dangerous",
        mutating=True,
        token_cost="high",  # noqa: S106 - a cost level, not a secret
        capabilities=("run_python", "code_execution", "sandbox"),
    )
    #: The manual with the tool's own sandbox: effects stay inside it, so ``safe``.
    contained_manual = manual.model_copy(
        update={
            "risk": "safe",
            "description": (
                "Runs model-written code in tooldeck's sandbox: no network, no host files, nothing kept "
                "between calls. Its effects stay inside the sandbox, so it is safe."
            ),
        }
    )

    def __init__(
        self, *, sandbox: SandboxClient | None = None, hidden_dirs: Sequence[str | os.PathLike[str]] = ()
    ) -> None:
        if sandbox is not None and hidden_dirs:
            msg = "CodeExecutorTool(hidden_dirs=...) configures the tool's own sandbox; pass them to the injected one"
            raise ValueError(msg)
        self._owns_sandbox = sandbox is None
        self._hidden_dirs = tuple(os.fspath(folder) for folder in hidden_dirs)
        self._sandbox: SandboxClient = sandbox if sandbox is not None else LocalSandbox(hidden_dirs=self._hidden_dirs)
        if self._owns_sandbox:
            self.manual = self.contained_manual

    @property
    def sandbox(self) -> SandboxClient:
        """The sandbox this tool runs code in."""
        return self._sandbox

    def execute_internal(self, request: CodeExecutionRequest) -> ToolResult:
        """Run the code and return the sandbox's report.

        The report is the ``data``; the isolation and limit flags are repeated in the result
        metadata so an application can log or alert on them without reading the
        model-facing data: ``network_isolated``, ``timed_out``, ``killed``, ``truncated``,
        and what held for this run: ``launcher`` (``"bwrap"``, ``"namespaces"`` or
        ``"none"``), ``seccomp`` (a filter was loaded), ``process_cap`` (the per-run
        process limit, ``None`` when not established) and ``filesystem_isolated``. A
        sandbox that does not report one of them gives ``None``.
        """
        result = self._sandbox.run(
            request.code,
            language=request.language,
            stdin=request.stdin,
            timeout_seconds=request.timeout_seconds,
        )
        response = CodeExecutionResponse(
            language=result.language,
            stdout=result.stdout,
            stderr=result.stderr,
            exit_code=result.exit_code,
            duration_ms=result.duration_ms,
            timed_out=result.timed_out,
            killed=result.killed,
            truncated=result.truncated,
            network_isolated=result.network_isolated,
            signal=result.signal,
            note=result.note,
        )
        isolation = result.isolation
        flags = {
            "network_isolated": result.network_isolated,
            "timed_out": result.timed_out,
            "killed": result.killed,
            "truncated": result.truncated,
            "launcher": isolation.get("launcher"),
            "seccomp": isolation.get("seccomp"),
            "process_cap": isolation.get("process_cap"),
            "filesystem_isolated": isolation.get("filesystem"),
            "memory_mode": isolation.get("memory_mode"),
            "memory_mb": isolation.get("memory_mb"),
        }
        return ToolResult.success(response.model_dump(mode="json"), metadata=flags)

    def close(self) -> None:
        """Shut the sandbox down if this tool created it. Idempotent."""
        if self._owns_sandbox:
            self._sandbox.close()

    def __enter__(self) -> CodeExecutorTool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __copy__(self) -> CodeExecutorTool:
        return shallow_copy(self)  # an alias shares the sandbox

    def __getstate__(self) -> dict[str, Any]:
        """Pickled (for a Ray actor): the copy starts its own sandbox; an injected one cannot travel."""
        return state_without(self, "_sandbox", owned=self._owns_sandbox)

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state, _sandbox=LocalSandbox(hidden_dirs=state.get("_hidden_dirs", ())))
