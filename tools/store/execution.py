"""``ExecutionService``: run an adopted tool, check that it is ready, keep call artifacts.

``execute`` never raises for a failing call: a tool that is not adopted is an
``unknown_tool`` error envelope whose message is the exact command that adopts it (and
``details["reason"] == "not_adopted"``), anything else is the tool's own envelope. Each call
can leave an artifact ``{artifacts_dir}/{timestamp}-{tool_id}.json`` (written atomically)
with the arguments and the result, every secret value of the registry masked.

Given an :class:`~tools.approvals.ApprovalPolicy`, ``execute`` consults it before a call runs
(the tool's risk from its manual, approvals bound to ``ToolConfig.compute_version_hash()``):
a call that needs a person's approval is a ``permission_denied`` envelope saying how to
approve it, unless the ``approver`` callback approves it on the spot.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tools._files import atomic_write_text
from tools.errors import ToolDefinitionError
from tools.metrics import MetricsSink
from tools.result import ToolResult
from tools.store._secrets import redact_result, redactor_for
from tools.store.config import ToolConfig
from tools.store.errors import RegistryFileError, ToolNotAdoptedError
from tools.store.service import RegistryService

if TYPE_CHECKING:
    from tools.approvals import ApprovalPolicy, ApprovedCall, Approver

logger = logging.getLogger(__name__)

RUNS_DIR = "runs"


@dataclass(frozen=True)
class ReadinessCheck:
    """Whether a tool can run now, and what is missing if not.

    Attributes:
        tool_id: The tool checked.
        ready: True when nothing is missing.
        missing: One sentence per missing thing, each saying how to fix it.
        notes: Things worth knowing that do not stop the tool (e.g. changed since adoption).
    """

    tool_id: str
    ready: bool
    missing: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


class ExecutionService:
    """Runs adopted tools by id.

    Args:
        registry_service: Where the adopted tools are (read afresh on every call).
        metrics: Receives every call's result (optional).
        artifacts_dir: Where per-call artifacts go (e.g. ``.tooldeck/runs``); None: none.
        which: Resolves a program on ``PATH`` (injectable for tests).
        clock: Current time, for artifact names.
        server_check_timeout: Seconds :meth:`check_ready` gives an MCP server to start.
        policy: Consulted before every call (:class:`tools.approvals.ApprovalPolicy`); None:
            every adopted tool runs.
        approver: Asked synchronously when a call needs approval
            (``(ApprovalRequest) -> Approve | Deny``); None: such calls are refused.
    """

    def __init__(
        self,
        registry_service: RegistryService,
        metrics: MetricsSink | None = None,
        artifacts_dir: str | os.PathLike[str] | None = None,
        *,
        which: Callable[..., str | None] = shutil.which,
        clock: Callable[[], datetime] = lambda: datetime.now(timezone.utc),
        server_check_timeout: float = 30.0,
        policy: ApprovalPolicy | None = None,
        approver: Approver | None = None,
    ) -> None:
        self.registry_service = registry_service
        self.metrics = metrics
        self.artifacts_dir = Path(artifacts_dir) if artifacts_dir is not None else None
        self._which = which
        self._clock = clock
        self._server_timeout = server_check_timeout
        self.policy = policy
        self.approver = approver

    @property
    def _env(self) -> Mapping[str, str]:
        return self.registry_service.builder.env

    def execute(
        self,
        tool_id: str,
        action: str = "default",
        params: Mapping[str, Any] | None = None,
        timeout: float = 30.0,
        *,
        approved: ApprovedCall | None = None,
    ) -> ToolResult:
        """Run adopted tool ``tool_id`` once and return its envelope (never raises for the call).

        Args:
            tool_id: The adopted tool's id.
            action: For tools with several actions (HTTP endpoints, CLI actions), the one to
                run; ``"default"`` runs the only one (or an action named ``default``).
            params: The arguments.
            timeout: Seconds the call may take.
            approved: A call a person approved (``ApprovalRequest.approved(...)``): runs
                despite the policy if ``params`` (with the action) are exactly those approved.

        Raises:
            RegistryFileError: a registry file is corrupt (a setup error, not a call error).
        """
        started = self._clock()
        arguments = dict(params or {})
        registry = self.registry_service.load()
        config = registry.get(tool_id)
        if config is None:
            error = self.registry_service.not_adopted(tool_id)
            result = ToolResult.failure(
                "unknown_tool",
                str(error),
                details={"reason": "not_adopted", "adopt_command": error.adopt_command},
                metadata={"tool_name": tool_id[:64]},
            )
        else:
            result = self._run(config, action, arguments, timeout, approved)
        redactor = redactor_for(registry.tools.values(), self._env)
        result = redact_result(result, redactor)
        if self.metrics is not None and config is not None:
            self.metrics.record(result)
        if self.artifacts_dir is not None:
            self._write_artifact(tool_id, action, arguments, result, started=started, redactor=redactor)
        return result

    def _run(
        self,
        config: ToolConfig,
        action: str,
        arguments: dict[str, Any],
        timeout: float,
        approved: ApprovedCall | None = None,
    ) -> ToolResult:
        try:
            tool = self.registry_service.builder.build(config, call_timeout=timeout)
        except (ToolDefinitionError, ValueError) as exc:
            return ToolResult.failure(
                "execution_error", f"Tool '{config.id}' is misconfigured: {exc}", metadata={"tool_name": config.id}
            )
        properties = (tool.parameters or {}).get("properties") or {}
        if "action" in properties and "action" not in arguments:
            if action != "default" or "default" in (properties["action"].get("enum") or []):
                arguments["action"] = action
        elif action not in ("default", *_action_names(config)) and "action" not in properties:
            return ToolResult.failure(
                "unknown_action",
                f"Tool '{config.id}' has a single action; call it without an action (got {action[:64]!r}).",
                metadata={"tool_name": config.id},
            )
        if self.policy is not None or approved is not None:
            from tools.approvals._gate import ApprovalGate

            verdict = ApprovalGate(self.policy, self.approver).decide(
                tool, tool.get_manual(), arguments, version_hash=config.compute_version_hash(), approved=approved
            )
            if verdict.error_type is not None:
                return ToolResult.failure(
                    verdict.error_type, verdict.message, details=verdict.details, metadata={"tool_name": config.id}
                )
            return tool.execute_raw(verdict.arguments)
        return tool.execute(**arguments)

    def _write_artifact(
        self,
        tool_id: str,
        action: str,
        arguments: dict[str, Any],
        result: ToolResult,
        *,
        started: datetime,
        redactor: Any,
    ) -> Path | None:
        if self.artifacts_dir is None:
            return None
        stamp = started.strftime("%Y%m%dT%H%M%S.%fZ")
        safe_id = "".join(ch if ch.isalnum() or ch in "_-" else "_" for ch in tool_id)[:64] or "tool"
        path = self.artifacts_dir / f"{stamp}-{safe_id}.json"
        doc = {
            "tool_id": tool_id,
            "action": action,
            "started_at": started.isoformat(),
            "arguments": redactor.data(arguments),
            "result": result.to_dict(),
        }
        try:
            atomic_write_text(path, json.dumps(doc, indent=2, ensure_ascii=False, default=str) + "\n")
        except OSError as exc:
            logger.warning("could not write the artifact %s: %s", path, exc.strerror or exc)
            return None
        return path

    # ------------------------------------------------------------------ readiness

    def check_ready(self, tool_id: str) -> ReadinessCheck:
        """What ``tool_id`` still needs before it can run.

        Checks: adopted; the auth variable is set; a CLI program or binary exists and is
        executable; an MCP server starts and has the tool. An MCP check starts the server
        (within ``server_check_timeout``) and stops it again.
        """
        try:
            config = self.registry_service.get(tool_id)
        except ToolNotAdoptedError as exc:
            return ReadinessCheck(tool_id, False, [str(exc)])
        except RegistryFileError as exc:
            return ReadinessCheck(tool_id, False, [str(exc)])
        missing: list[str] = []
        notes: list[str] = []
        if config.auth is not None and not self._env.get(config.auth.env_var):
            where = f" (get one at {config.auth.signup_url})" if config.auth.signup_url else ""
            missing.append(f"environment variable {config.auth.env_var} is not set{where}; export it and retry")
        try:
            self.registry_service.builder.check(config)
        except (ToolDefinitionError, ValueError) as exc:
            missing.append(f"the configuration is not usable: {exc}")
        missing += self._program_problems(config)
        if not missing and config.mcp is not None:
            missing += self._server_problems(config)
        if self.registry_service.needs_reapproval(tool_id):
            notes.append(
                "its settings changed since it was adopted; review them and adopt it again to approve this version"
            )
        notes += self._approval_notes(config)
        return ReadinessCheck(tool_id, not missing, missing, notes)

    def _approval_notes(self, config: ToolConfig) -> list[str]:
        """What the policy says: a tool that needs a person's approval runs only once approved."""
        if self.policy is None:
            return []
        from tools.approvals import ApprovalError
        from tools.store.builder import manual_for

        try:
            check = self.policy.check(manual_for(config, config.parameters), version_hash=config.compute_version_hash())
        except ApprovalError as exc:
            return [f"approvals cannot be checked: {exc}"]
        if check.allowed:
            return []
        return [
            f"it needs a person's approval before it runs ({check.reason}); "
            f"approve it with: tooldeck approve {config.id}"
        ]

    def _program_problems(self, config: ToolConfig) -> list[str]:
        program: str | None = None
        if config.cli is not None:
            program = config.cli.command[0]
        elif config.binary is not None:
            program = config.binary.path
        elif config.mcp is not None and config.mcp.transport == "stdio" and config.mcp.command:
            program = config.mcp.command[0]
        if program is None:
            return []
        if os.sep in program:
            if not os.path.isfile(program):
                return [f"program {program} does not exist; install it or fix the path in the registry"]
            if not os.access(program, os.X_OK):
                return [f"program {program} is not executable; run: chmod +x {program}"]
            return []
        path = self._env.get("PATH", os.defpath)
        if self._which(program, path=path) is None:
            return [f"command {program!r} is not on PATH; install it or put its directory on PATH"]
        return []

    def _server_problems(self, config: ToolConfig) -> list[str]:
        try:
            from tools.external.mcp import MCPToolset
        except ImportError as exc:
            return [f"the MCP SDK is not installed ({exc}); pip install -e '.[mcp]'"]
        from tools.errors import ToolError

        mcp = config.mcp
        if mcp is None:
            return []
        headers = None
        if config.auth is not None and mcp.url:
            secret = self._env.get(config.auth.env_var, "")
            headers = {config.auth.header: f"Bearer {secret}" if config.auth.kind == "bearer" else secret}
        try:
            with MCPToolset(
                mcp.command if mcp.transport == "stdio" else None,
                url=None if mcp.transport == "stdio" else mcp.url,
                env=mcp.env,
                cwd=mcp.cwd,
                headers=headers,
                connect_timeout=self._server_timeout,
                call_timeout=self._server_timeout,
                label=config.id,
            ) as toolset:
                names = {t.remote_name for t in toolset.tools()}
        except (ToolError, OSError, ValueError) as exc:
            redactor = redactor_for([config], self._env)
            return [f"the MCP server does not start: {redactor.text(str(exc))}"]
        if config.remote_tool not in names:
            return [
                f"the MCP server has no tool {config.remote_tool!r} (it has: {', '.join(sorted(names)) or 'none'}); "
                "sync the catalog and adopt the tool again"
            ]
        return []


def _action_names(config: ToolConfig) -> list[str]:
    if config.http is not None:
        return list(config.http.endpoints)
    if config.cli is not None:
        return list(config.cli.actions)
    return [config.remote_tool or config.id]
