"""`ConsoleSources`: everything the console reads and changes, handed in by its caller.

The console owns no data: it shows and changes the same stores the command-line tools use.
``tooldeck ui`` builds them from the environment (`orchestrator.ui.command`); a test or an
application builds them by hand::

    sources = ConsoleSources(
        registry=registry,                            # the tools shown and called (policy attached)
        approvals=open_approvals_store(os.environ),
        metrics=MetricsStore(".tooldeck/metrics.json"),
        runs=FileRunStore.from_env(os.environ),
        runner=ServiceRunner(...),                    # starts and resumes agent runs
        settings=SettingsSources(...),
    )
    app = create_app(sources, ConsoleSecurity(token=new_token(), port=8777))
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from orchestrator.ui.runner import AgentRunner
    from orchestrator.ui.settings import SettingsSources
    from tools.approvals import ApprovalPolicy, ApprovalsBackend
    from tools.registry import LocalToolRegistry
    from tools.runs import RunStore
    from tools.store import ReadinessCheck, RegistryService
    from tools.telemetry import MetricsHistory

__all__ = ["ConsoleSources"]


@dataclass
class ConsoleSources:
    """The stores and services behind the console's pages.

    Attributes:
        registry: Every tool the console shows, routes and calls. Give it the approval
            policy (``LocalToolRegistry(policy=...)``) so calls from the Tools page are
            approved like any other, and a metrics sink so they are counted.
        policy: The approval policy (default: the registry's); its store holds the freedom
            level and the stored approvals.
        approvals: The approvals (the user's file, or the database of ``TOOLDECK_DATABASE_URL``;
            default: the policy's store).
        metrics: The metrics store read by the Tools and Metrics pages (None: no figures).
        runs: The run records (None: the Runs page says none are kept).
        runner: Starts and resumes agent runs (None: paused runs can be seen, not resumed).
        adopted: The adopted tools (where each came from).
        readiness: Checks whether an adopted tool can run (``ExecutionService.check_ready``).
        settings: What the Settings page edits (None: settings are read-only).
        provenance: Where each tool came from, by name, for tools not adopted (e.g. the
            ``--registry`` that brought them); the rest say ``builtin``.
        unavailable: Tools that could not be registered, by name, and why (an optional
            dependency missing, an adopted tool that cannot be built).
        secrets: Values masked wherever they would be shown (API keys in use).
    """

    registry: LocalToolRegistry
    policy: ApprovalPolicy | None = None
    approvals: ApprovalsBackend | None = None
    metrics: MetricsHistory | None = None
    runs: RunStore | None = None
    runner: AgentRunner | None = None
    adopted: RegistryService | None = None
    readiness: Callable[[str], ReadinessCheck] | None = None
    settings: SettingsSources | None = None
    provenance: Mapping[str, str] = field(default_factory=dict)
    unavailable: Mapping[str, str] = field(default_factory=dict)
    secrets: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.policy is None:
            self.policy = self.registry.policy
        if self.approvals is None and self.policy is not None:
            self.approvals = self.policy.store
