"""The composition root of ``tooldeck ui``: the console's sources, built from the environment.

The same objects, files and defaults as the command-line tools:

* tools: the orchestrator's builtins and adopted tools (`OrchestratorService`), plus the
  ``--registry module:factory`` ones, in one registry with the approval policy of
  ``tooldeck`` (``TOOLDECK_FREEDOM``, else the stored level, else medium) and the project's
  metrics store (``.tooldeck/metrics.json``, what ``tooldeck run`` and ``tooldeck stats`` use);
* runs: the run records and paused states of the data directory (``TOOLDECK_DATA_DIR``);
  runs are started and resumed by services built like ``python -m orchestrator``'s (the claim
  ledger beside the approvals and the user's state key, shared with it);
* settings: the approvals (the user's file, or ``TOOLDECK_DATABASE_URL``'s database), the
  user's ``settings.json``, the routing overrides file, the trusted-projects file.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from orchestrator.service import OrchestratorService
    from orchestrator.settings import Settings
    from orchestrator.ui.runner import ServiceRunner
    from orchestrator.ui.sources import ConsoleSources
    from tools.approvals import ApprovalsBackend
    from tools.registry import LocalToolRegistry
    from tools.runs import RunStore

__all__ = ["ConsoleSetup", "console_sources"]


@dataclass
class ConsoleSetup:
    """The console's sources and what must be closed when it stops."""

    sources: ConsoleSources
    closers: list[Callable[[], None]] = field(default_factory=list)

    def close(self) -> None:
        """Close everything opened (last opened first)."""
        while self.closers:
            self.closers.pop()()


def console_sources(
    env: Mapping[str, str],
    project_dir: Path,
    *,
    registries: Sequence[str] = (),
    app_dir: Path | None = None,
    builtins: bool = True,
) -> ConsoleSetup:
    """Everything ``tooldeck ui`` shows, built from ``env`` and the project directory.

    Args:
        env: The environment (read here, once).
        project_dir: The project whose ``.tooldeck/`` is used.
        registries: ``module:factory`` specs of your own tools.
        app_dir: Where those modules are imported from (default: the current directory).
        builtins: False: only your tools (no builtins, no adopted tools).

    Raises:
        SettingsError, ServiceConfigError, RegistrySpecError, ApprovalError: the
            configuration cannot be used (the message names the fix).
    """
    from orchestrator.settings import Settings
    from orchestrator.stored_settings import SettingsFile
    from orchestrator.ui.settings import SettingsSources
    from orchestrator.ui.sources import ConsoleSources
    from tools import LocalToolRegistry
    from tools.approvals import ApprovalPolicy, freedom_from_env, open_approvals_store
    from tools.external import secret_values
    from tools.registry_spec import load_registry
    from tools.runs import run_store_from_env
    from tools.store import ExecutionService, RegistryService, RegistryStore
    from tools.store.registry_store import user_config_dir
    from tools.telemetry import MetricsStore

    setup = ConsoleSetup(sources=None)  # type: ignore[arg-type]  # filled in below
    try:
        settings = Settings.from_env(env)
        approvals = open_approvals_store(env, database_url=_secret(settings.database_url))
        policy = ApprovalPolicy(freedom_from_env(env), approvals)
        _ = policy.level  # an unusable approvals file is a setup error, said now
        metrics = MetricsStore(project_dir / ".tooldeck" / "metrics.json", flush_interval=1.0)
        setup.closers.append(metrics.close)
        own = [load_registry(spec, app_dir) for spec in registries]
        registry = LocalToolRegistry(policy=policy, metrics=metrics)
        adopted = RegistryService(RegistryStore.from_env(env, project_dir=project_dir), env=env)
        setup.closers.append(adopted.close)
        service = _service(settings, env, project_dir, own, builtins=builtins, registry=registry, approvals=approvals)
        setup.closers.append(service.close)
        runs = run_store_from_env(env, settings.data_dir)
        runner = _runner(settings, env, project_dir, own, builtins=builtins, runs=runs, approvals=approvals)
        setup.closers.append(runner.close)
        secrets = [*_setting_secrets(settings), *secret_values(env)]
        setup.sources = ConsoleSources(
            registry=registry,
            policy=policy,
            approvals=approvals,
            metrics=metrics,
            runs=runs,
            runner=runner,
            adopted=adopted if builtins else None,
            readiness=ExecutionService(adopted).check_ready,
            settings=SettingsSources(
                file=SettingsFile.from_env(env),
                approvals=approvals,
                env=env,
                config_dir=user_config_dir(env),
                registry_files=RegistryStore.from_env(env, project_dir=project_dir),
            ),
            provenance=_provenance(registries, own),
            unavailable=dict(service.skipped),
            secrets=tuple(secrets),
        )
    except BaseException:
        setup.close()
        raise
    return setup


def _service(
    settings: Settings,
    env: Mapping[str, str],
    project_dir: Path,
    own: Sequence[LocalToolRegistry],
    *,
    builtins: bool,
    **more: Any,
) -> OrchestratorService:
    """A service over these settings: builtins (unless not wanted), adopted tools, your tools;
    the resume claims beside the approvals (the ledger every process of this user shares)."""
    from orchestrator.service import OrchestratorService
    from tools.approvals import StateSigner
    from tools.store import RegistryService, RegistryStore

    adopted = RegistryService(RegistryStore.from_env(env, project_dir=project_dir), env=env) if builtins else None
    return OrchestratorService(
        settings,
        tools=own,
        builtins=builtins,
        adopted_tools=adopted,
        state_signer=StateSigner.from_env(env),
        **more,
    )


def _runner(
    settings: Settings,
    env: Mapping[str, str],
    project_dir: Path,
    own: Sequence[LocalToolRegistry],
    *,
    builtins: bool,
    runs: RunStore,
    approvals: ApprovalsBackend,
) -> ServiceRunner:
    """The runner: a fresh service per run or resume, of the agent type asked (its level and
    tools from this configuration, never from a saved state)."""
    from orchestrator.settings import Settings
    from orchestrator.ui.runner import ServiceRunner
    from tools.approvals import StateSigner

    def services(agent: str | None) -> OrchestratorService:
        chosen = Settings.from_env(env, agent=agent) if agent is not None else settings
        return _service(chosen, env, project_dir, own, builtins=builtins, runs=runs, approvals=approvals)

    return ServiceRunner(services, data_dir=settings.data_dir, signer=StateSigner.from_env(env))


def _provenance(specs: Sequence[str], own: Sequence[LocalToolRegistry]) -> dict[str, str]:
    """Which ``--registry`` brought each of your tools."""
    return {name: f"--registry {spec}" for spec, mine in zip(specs, own, strict=True) for name in mine.names()}


def _secret(value: Any) -> str | None:
    return value.get_secret_value() if value is not None else None


def _setting_secrets(settings: Settings) -> list[str]:
    """The secret values among the settings (API keys)."""
    from pydantic import SecretStr

    return [value.get_secret_value() for value in vars(settings).values() if isinstance(value, SecretStr)]
