"""What `orchestrator.service.OrchestratorService` derives from its `Settings`, as plain functions.

The model, the approval policy, the result budget, the Ray executor, the router of an agent
type, the tool choice per turn, the directories model-written code must not see and the
secret values to mask; and `ServiceConfigError`, raised when the settings cannot be used.
The public names are re-exported by `orchestrator.service`, their documented home.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from orchestrator.offline import OfflineModel
from orchestrator.openai_client import OpenAIChatModel

if TYPE_CHECKING:
    from pydantic import SecretStr

    from orchestrator.llm import ChatModel, ToolChoice
    from orchestrator.settings import Settings
    from tools import LocalToolRegistry
    from tools.approvals import ApprovalPolicy, ApprovalsBackend, StateSigner
    from tools.artifacts import ResultBudget
    from tools.executors import RemoteExecutor
    from tools.routing import ToolRouter, ToolView

#: The model name that selects `orchestrator.testing.TestModel` (without a base URL).
TEST_MODEL = "test"


class ServiceConfigError(Exception):
    """The service could not be built from its settings; the message names the fix."""


def build_chat_model(settings: Settings, model: str | None = None) -> ChatModel:
    """The model the settings select: without ``base_url``, the embedded offline model (or
    `orchestrator.testing.TestModel` for the model name ``test``); else an OpenAI-compatible
    client (``model`` overrides the settings' model name).

    Raises:
        ServiceConfigError: ``base_url`` is not a usable http(s) URL.
    """
    if settings.base_url is None:
        if (model or settings.model) == TEST_MODEL:
            from orchestrator.testing import TestModel

            return TestModel()
        return OfflineModel()
    try:
        return OpenAIChatModel(
            settings.base_url,
            model or settings.model,
            api_key=secret_value(settings.api_key),
            timeout=settings.model_timeout,
            strict_tools=settings.strict,
            stream=settings.stream,
        )
    except ValueError as exc:
        raise ServiceConfigError(f"--base-url / TOOLDECK_BASE_URL: {exc}") from None


def result_budget(settings: Settings) -> ResultBudget | None:
    """The result budget the settings ask for, its artifacts under ``data_dir/artifacts`` (the
    settings' secrets masked in them); None when ``result_budget_tokens`` is 0."""
    if not settings.result_budget_tokens:
        return None
    from tools.artifacts import ArtifactStore, ResultBudget

    store = ArtifactStore(settings.data_dir / "artifacts", secrets=settings_secrets(settings))
    return ResultBudget(store, max_tokens=settings.result_budget_tokens)


def settings_secrets(settings: Settings) -> list[str]:
    """The secret values ``settings`` hold (API keys, module keys): masked in run records and
    artifacts wherever they appear."""
    values = (settings.api_key, settings.context_api_key, settings.brave_api_key, settings.module_credentials_key,
              settings.module_signing_key)  # fmt: skip
    return [value.get_secret_value() for value in values if value is not None]


def approval_policy(settings: Settings, store: ApprovalsBackend | None) -> ApprovalPolicy:
    """The policy of ``settings.freedom``, else of the store's level, else ``medium``: the one
    default of every entry point (``python -m orchestrator``, `OrchestratorService`,
    ``tooldeck``, ``serve-mcp``).

    Raises:
        ServiceConfigError: the approvals file is unusable (nothing runs unchecked).
    """
    from tools.approvals import ApprovalError, ApprovalPolicy

    policy = ApprovalPolicy(settings.freedom, store)
    try:
        _ = policy.level  # read the file now: a corrupt one is a setup error, not a refusal per call
    except ApprovalError as exc:
        raise ServiceConfigError(str(exc)) from None
    return policy


def secret_dirs(data_dir: Path, approvals: ApprovalsBackend | None, signer: StateSigner | None) -> tuple[Path, ...]:
    """The directories model-written code must never see: the data directory (knowledge
    database, module store and keys, paused states, run records) and the directories of the
    approvals file and the state key (the user's configuration directory; ``approvals`` and
    ``signer`` are the store and the :class:`StateSigner` in use, None when there is none).
    Those missing are created (mode 0700) so that the sandboxes, which decide what they hide
    when built, hide what is put there later; one that can't be created can't hold anything
    either. The service's sandboxes and ``--pipeline``'s hide them."""
    found = [data_dir]
    for path in (getattr(approvals, "path", None), getattr(signer, "key_file", None)):
        if isinstance(path, (str, os.PathLike)):
            found.append(Path(path).parent)
    kept: list[Path] = []
    for folder in dict.fromkeys(found):
        try:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError:
            continue
        kept.append(folder)
    return tuple(kept)


def secret_value(value: SecretStr | None) -> str | None:
    """The secret's text, or None when it is not set."""
    return value.get_secret_value() if value is not None else None


def ray_executor(settings: Settings) -> RemoteExecutor | None:
    """``--executor ray``: the Ray cluster the compute tools run on (None: threads here); the
    caller closes it.

    Raises:
        ServiceConfigError: Ray is not installed, or the cluster cannot be started or joined.
    """
    if settings.executor != "ray":
        return None
    from tools.executors import RayExecutor

    try:
        return RayExecutor(address=settings.ray_address)
    except ImportError as exc:
        raise ServiceConfigError(f"--executor ray: {exc}") from None
    except (ConnectionError, RuntimeError, ValueError) as exc:
        where = settings.ray_address or "a local Ray"
        raise ServiceConfigError(f"--executor ray: cannot start or join {where} ({exc})") from None


def agent_router(settings: Settings) -> ToolRouter:
    """The router of ``settings.routing_config`` (the default profiles when unset).

    Raises:
        ServiceConfigError: the routing config file is unusable.
    """
    from tools.routing import RoutingConfigError, ToolRouter, ToolRoutingConfig

    path = settings.routing_config
    try:
        return ToolRouter(config=ToolRoutingConfig.from_file(path) if path is not None else None)
    except RoutingConfigError as exc:
        raise ServiceConfigError(f"--routing-config / TOOLDECK_ROUTING_CONFIG: {exc}") from None


def tool_choices(
    settings: Settings, tools: LocalToolRegistry | ToolView
) -> tuple[ToolChoice | None, ToolChoice | None]:
    """(every turn, first turn) of ``settings.tool_choice``: ``auto``/``none`` hold for every
    turn; ``required`` or a tool name (one of ``tools``) force the first turn only, so the
    model can answer afterwards.

    Raises:
        ServiceConfigError: the choice names no tool of ``tools``.
    """
    choice = settings.tool_choice
    if choice is None:
        return None, None
    if choice == "auto":
        return "auto", None
    if choice == "none":
        return "none", None
    if choice == "required":
        return None, "required"
    if choice not in tools:
        known = ", ".join(tools.names())
        raise ServiceConfigError(
            f"--tool-choice / TOOLDECK_TOOL_CHOICE: no tool named {choice!r}; use auto, "
            f"required, none or one of: {known}"
        )
    return None, {"type": "function", "function": {"name": choice}}
