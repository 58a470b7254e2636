"""Run command-line programs as tools: :class:`CLIAdapter` (adapter type ``"cli"``).

The argv is built from the action's template (:mod:`tools.external._argv`) and executed
directly, never through a shell, in its own process group that is killed on timeout. Output is
parsed as ``text``, ``lines`` or ``json``. A non-zero exit becomes an ``execution_error`` whose
message carries stderr with secrets replaced by ``***``.

The child's environment is minimal (:mod:`tools.external._environment`, the scheme every
external child shares): the base variables of the parent (``PATH``, ``HOME``, ``LANG``,
``LANGUAGE``, ``LC_*``, ``TZ``) and the names in ``pass_env``, then :attr:`CLIConfig.env`,
then the :attr:`CLIConfig.secret_env` variables. Nothing else of the parent
(``OPENAI_API_KEY`` ...) reaches a CLI tool. Outputs and errors are redacted of the
declared secrets and also of every secret-looking value of the parent
(:func:`~tools.external._redact.looks_secret`), whether or not the child got it.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any

from tools.errors import (
    PermissionDeniedError,
    ToolDefinitionError,
    ToolError,
    ToolTimeoutError,
    UnknownActionError,
    UnknownToolError,
)
from tools.external._argv import build_argv
from tools.external._environment import ChildEnvironment
from tools.external._process import ProcessRunner
from tools.external._redact import Redactor, clip
from tools.external.config import CLIAction, CLIConfig, ToolConfig
from tools.result import ToolResult

logger = logging.getLogger(__name__)

MAX_STDERR_CHARS = 2_000


def _error_result(exc: ToolError) -> ToolResult:
    return ToolResult.failure(exc.error_type, exc.message, retryable=exc.retryable, details=exc.details)


def pick_action(config: ToolConfig, actions: Mapping[str, Any], action: str | None) -> str:
    """The action to run: ``action``, or the only one when None.

    Raises:
        UnknownActionError: missing or unknown; the message lists the valid actions.
    """
    if action is None and len(actions) == 1:
        return next(iter(actions))
    if action is None or action not in actions:
        valid = ", ".join(sorted(actions))
        got = "no action" if action is None else f"unknown action {action!r}"
        raise UnknownActionError(
            f"Tool '{config.name}' got {got}; set 'action' to one of: {valid}.",
            details={"valid_actions": sorted(actions)},
        )
    return action


class CLIAdapter:
    """Runs CLI tools described by :class:`ToolConfig` objects with a :class:`CLIConfig`.

    Args:
        tools: Configs to register at once (see :meth:`add_tool`).
        env: The parent environment (pass ``os.environ`` at the entry point). Children get
            only its base variables (``PATH``, ``HOME``, locale, ``TZ``) and those named
            in ``pass_env``, plus :attr:`CLIConfig.env` and the :attr:`CLIConfig.secret_env`
            variables read from it. Its secret-looking values are redacted from every output.
        pass_env: More variable names of ``env`` to hand to every child (e.g. ``TMPDIR``,
            ``SSL_CERT_FILE``); a secret belongs in :attr:`CLIConfig.secret_env` instead.
        allowed_commands: When given, only these programs may run (matched against the
            command as written, its basename and its resolved path).
        runner: Process runner (shared to kill every child at shutdown).
        which: Resolves a program name against ``PATH``; injectable for tests.
    """

    adapter_type = "cli"

    def __init__(
        self,
        tools: Iterable[ToolConfig] = (),
        *,
        env: Mapping[str, str] | None = None,
        pass_env: Collection[str] = (),
        allowed_commands: Collection[str] | None = None,
        runner: ProcessRunner | None = None,
        which: Callable[..., str | None] = shutil.which,
    ) -> None:
        self._child_environment = ChildEnvironment(env, pass_env=pass_env)
        self._allowed = None if allowed_commands is None else frozenset(allowed_commands)
        self._runner = runner or ProcessRunner()
        self._which = which
        self._tools: dict[str, ToolConfig] = {}
        for config in tools:
            self.add_tool(config)

    def add_tool(self, config: ToolConfig) -> None:
        """Register ``config`` under its id (replacing an earlier one with the same id).

        Raises:
            ToolDefinitionError: not a CLI config, or its command is not allowed.
        """
        cli = self._cli(config)
        if not self._is_allowed(cli.command[0]):
            raise ToolDefinitionError(f"tool {config.id!r}: command {cli.command[0]!r} is not in allowed_commands")
        self._tools[config.id] = config

    @staticmethod
    def _cli(config: ToolConfig) -> CLIConfig:
        if not isinstance(config.config, CLIConfig):
            raise ToolDefinitionError(
                f"tool {config.id!r} has adapter_type {config.adapter_type!r}; "
                "CLIAdapter needs adapter_type 'cli' with a CLIConfig"
            )
        return config.config

    def _resolve(self, program: str, env: Mapping[str, str]) -> str | None:
        if os.sep in program:
            return program if os.access(program, os.X_OK) else None
        return self._which(program, path=env.get("PATH", os.defpath))

    def _is_allowed(self, program: str, resolved: str | None = None) -> bool:
        if self._allowed is None:
            return True
        names = {program, os.path.basename(program)}
        if resolved:
            names.add(resolved)
        return bool(names & self._allowed)

    def is_available(self, config: ToolConfig) -> bool:
        """True when ``config`` is a CLI tool whose program is allowed and found on ``PATH``."""
        try:
            cli = self._cli(config)
        except ToolDefinitionError:
            return False
        resolved = self._resolve(cli.command[0], self._child_env(cli))
        return resolved is not None and self._is_allowed(cli.command[0], resolved)

    def _child_env(self, cli: CLIConfig) -> dict[str, str]:
        """Base variables, then the declared ones, then the declared secrets (when set)."""
        return self._child_environment.build(cli.env, cli.secret_env)

    def build_command(self, tool_id: str, action: str | None, params: Mapping[str, Any]) -> list[str]:
        """The full argv a call would run (for inspection and tests).

        Raises:
            ToolError: unknown tool/action, or invalid arguments (see :func:`build_argv`).
        """
        config = self._config(tool_id)
        cli = self._cli(config)
        name = pick_action(config, cli.actions, action)
        return [*cli.command, *build_argv(cli.actions[name], params)]

    def _config(self, tool_id: str) -> ToolConfig:
        try:
            return self._tools[tool_id]
        except KeyError:
            raise UnknownToolError(f"No CLI tool with id {tool_id!r}; known: {sorted(self._tools)}.") from None

    def execute(
        self,
        tool_id: str,
        action: str | None,
        params: Mapping[str, Any],
        timeout: float | None = None,
    ) -> ToolResult:
        """Run one call; every failure is an error :class:`ToolResult`, never an exception.

        Hostile or malformed input is refused before anything runs (see :func:`build_argv`);
        stdout over :attr:`CLIConfig.max_output_bytes` kills the process and is an error.
        """
        try:
            return self._execute(tool_id, action, params, timeout)
        except ToolError as exc:
            return _error_result(exc)

    def _execute(
        self, tool_id: str, action: str | None, params: Mapping[str, Any], timeout: float | None
    ) -> ToolResult:
        config = self._config(tool_id)
        cli = self._cli(config)
        name = pick_action(config, cli.actions, action)
        spec = cli.actions[name]
        tail = build_argv(spec, params)
        env = self._child_env(cli)
        redactor = self._child_environment.redactor(cli.secret_env)
        program = self._resolve(cli.command[0], env)
        if program is None:
            raise ToolError(f"The program for tool '{config.name}' is not installed; tell the user.")
        if not self._is_allowed(cli.command[0], program):
            raise PermissionDeniedError(f"Tool '{config.name}' may not run this program.")
        limit = timeout if timeout is not None else (config.timeout or cli.timeout)
        try:
            outcome = self._runner.run(
                [program, *cli.command[1:], *tail],
                env=env,
                cwd=cli.cwd,
                timeout=limit,
                max_output_bytes=cli.max_output_bytes,
            )
        except OSError as exc:
            logger.warning("tool %s: cannot start %s: %s", config.id, cli.command[0], exc)
            raise ToolError(f"Tool '{config.name}' could not start its program.") from None
        if outcome.timed_out:
            raise ToolTimeoutError(f"Tool '{config.name}' did not finish within {limit:g} s.")
        if outcome.killed:
            raise ToolError(f"Tool '{config.name}' was stopped (shutdown).")
        if outcome.output_overflow:
            raise ToolError(
                f"Tool '{config.name}' printed more than {cli.max_output_bytes} bytes; "
                "ask for less output (narrower arguments)."
            )
        stderr = clip(redactor.text(outcome.stderr.decode("utf-8", "replace")), MAX_STDERR_CHARS)
        meta: dict[str, Any] = {"exit_code": outcome.returncode, "action": name}
        if outcome.returncode != 0:
            detail = stderr.strip() or "no error output"
            raise ToolError(
                f"Tool '{config.name}' failed (exit status {outcome.returncode}): {detail}",
                details={"exit_code": outcome.returncode},
            )
        if stderr.strip():
            meta["stderr"] = stderr
        data = _parse_output(spec, outcome.stdout, redactor, config.name)
        return ToolResult.success(data, metadata=meta)

    def close(self) -> None:
        """Kill every running child's process group and refuse new calls."""
        self._runner.kill_all(close=True)


def _parse_output(spec: CLIAction, raw: bytes, redactor: Redactor, tool: str) -> Any:
    text = raw.decode("utf-8", "replace")
    if spec.output == "json":
        try:
            return redactor.data(json.loads(text))
        except ValueError:
            raise ToolError(
                f"Tool '{tool}' printed output that is not valid JSON.",
                details={"output_start": redactor.text(text[:200])},
            ) from None
    text = redactor.text(text)
    if spec.output == "lines":
        return [line for line in text.splitlines() if line.strip()]
    return text.rstrip("\n")
