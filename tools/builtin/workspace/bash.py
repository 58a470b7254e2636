"""``bash``: run a command in the sandbox, in the workspace, with nothing else of the host writable."""

from __future__ import annotations

from pydantic import BaseModel, Field

from tools.base import BaseTool
from tools.builtin.workspace.workspace import Workspace
from tools.errors import ToolError
from tools.routing import CODING_TOOL_MANUALS_BY_NAME


class BashRequest(BaseModel):
    """Arguments of ``bash``."""

    command: str = Field(description="The bash command(s) to run in the workspace, e.g. 'python3 -m pytest -q'.")
    timeout_seconds: float | None = Field(
        default=None, gt=0, le=600, description="Wall-clock limit in seconds. Defaults to the tool's (120)."
    )


class BashResponse(BaseModel):
    """What the command did."""

    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool
    note: str | None = None
    written: list[str] = Field(default_factory=list, description="Workspace files the command created or changed.")
    deleted: list[str] = Field(default_factory=list, description="Workspace files the command deleted.")
    not_written: list[str] = Field(default_factory=list, description="Changes not kept, with the reason.")


class BashTool(BaseTool[BashRequest, BashResponse]):
    """Runs a bash command in the sandbox with the workspace mounted read-write."""

    name = "bash"
    description = (
        "Run a bash command in the workspace, in a sandbox: no network, time and memory limits, only the "
        "workspace is writable (files you create or change there are kept). Use it to run tests and tools."
    )
    manual = CODING_TOOL_MANUALS_BY_NAME["bash"]

    def __init__(self, workspace: Workspace) -> None:
        self._workspace = workspace

    def execute_internal(self, request: BashRequest) -> BashResponse:
        """Run the command; a failing command is a result, not an error."""
        ws = self._workspace
        if ws.sandbox is None:
            raise ToolError("No sandbox is configured for this workspace, so commands can't be run here.")
        # A write-scoped agent (the test-writer) must not change production files through bash.
        writable = ws.write_scope is None
        result = ws.sandbox.run(
            request.command,
            language="bash",
            timeout_seconds=request.timeout_seconds or ws.limits.bash_timeout_s,
            workspace=ws.root,
            writable=writable,
            python_path=ws.python_path,
        )
        note = result.note
        if not writable:
            note = (note + " " if note else "") + "The workspace was read-only for this command: use write/edit."
        changes = result.workspace
        not_written = [f"{path}: {why}" for path, why in changes.skipped] if changes else []
        if changes is not None and changes.error:
            not_written.append(changes.error)
        return BashResponse(
            exit_code=result.exit_code,
            stdout=result.stdout,
            stderr=result.stderr,
            timed_out=result.timed_out,
            note=note,
            written=list(changes.written) if changes else [],
            deleted=list(changes.deleted) if changes else [],
            not_written=not_written,
        )
