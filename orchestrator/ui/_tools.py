"""The Tools page: every tool with its manual, where it came from, and how it has been doing;
one tool's schema, readiness and a form that calls it through the approval policy."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any

from orchestrator.ui._form import FormField, form_fields
from tools.telemetry import redact_data

if TYPE_CHECKING:
    from orchestrator.ui.sources import ConsoleSources
    from tools.approvals import ApprovalRequest
    from tools.manual import ToolManual
    from tools.store import ReadinessCheck, ToolConfig
    from tools.telemetry import MetricsHistory

__all__ = ["CallOutcome", "ToolDetail", "ToolFigures", "ToolRow", "call_tool", "tool_detail", "tool_rows"]

#: The window of the figures on the Tools page.
FIGURES_WINDOW = timedelta(days=7)


@dataclass(frozen=True)
class ToolFigures:
    """A tool's calls over the figures window (p50/p95 from the hourly buckets)."""

    calls: int
    failures: int
    p50_ms: float | None
    p95_ms: float | None
    last_error: str | None
    last_error_type: str | None

    @property
    def success_rate(self) -> float | None:
        """Successes over calls; None without calls."""
        return (self.calls - self.failures) / self.calls if self.calls else None


@dataclass(frozen=True)
class ToolRow:
    """One line of the Tools page."""

    manual: ToolManual
    hidden: bool
    came_from: str
    adopted: bool
    figures: ToolFigures | None
    description: str = ""

    @property
    def name(self) -> str:
        """The registered name."""
        return self.manual.name


@dataclass(frozen=True)
class ToolDetail:
    """One tool's page."""

    row: ToolRow
    description: str
    parameters: dict[str, Any]
    fields: list[FormField]
    version_hash: str | None
    config: dict[str, Any] | None
    readiness: ReadinessCheck | None = None


@dataclass
class CallOutcome:
    """What happened to a call made from a tool's form.

    Attributes:
        arguments: The arguments called (or shown for approval).
        result: The result envelope (``ToolResult.to_dict()``, redacted); None if not run.
        request: The approval request, when the call needs a person's approval first.
        problem: Why the call could not be made as asked (shown instead of a result).
    """

    arguments: dict[str, Any]
    result: dict[str, Any] | None = None
    request: ApprovalRequest | None = None
    problem: str | None = None
    details: dict[str, Any] = field(default_factory=dict)


def tool_rows(sources: ConsoleSources, *, now: datetime | None = None) -> list[ToolRow]:
    """Every registered tool, in registration order, with its figures."""
    registry = sources.registry
    adopted = _adopted(sources)
    since = (now or datetime.now(timezone.utc)) - FIGURES_WINDOW
    rows = []
    for manual in registry.manuals():
        name = manual.name
        found = adopted.get(name)
        tool = registry.get_tool(name)
        rows.append(
            ToolRow(
                manual=manual,
                hidden=registry.is_hidden(name),
                came_from=_came_from(sources, name, manual, found),
                adopted=found is not None,
                figures=_figures(sources.metrics, name, since, sources.secrets),
                description=(tool.description if tool is not None else "") or manual.description,
            )
        )
    return rows


def tool_detail(sources: ConsoleSources, name: str, *, check: bool = False) -> ToolDetail | None:
    """The page of tool ``name`` (None when no such tool); ``check`` runs its readiness check."""
    registry = sources.registry
    manual = registry.get_manual(name)
    if manual is None:
        return None
    found = _adopted(sources).get(name)
    config = found.config if found is not None else None
    export = registry.to_openai_tools(names=[name], include_hidden=True)
    function: dict[str, Any] = export[0]["function"] if export else {}
    parameters: dict[str, Any] = function.get("parameters") or {"type": "object", "properties": {}}
    since = datetime.now(timezone.utc) - FIGURES_WINDOW
    row = ToolRow(
        manual=manual,
        hidden=registry.is_hidden(name),
        came_from=_came_from(sources, name, manual, found),
        adopted=found is not None,
        figures=_figures(sources.metrics, name, since, sources.secrets),
    )
    readiness = sources.readiness(name) if check and config is not None and sources.readiness else None
    shown = None if config is None else redact_data(config.model_dump(mode="json", exclude_none=True), sources.secrets)
    return ToolDetail(
        row=row,
        description=str(function.get("description") or ""),
        parameters=parameters,
        fields=form_fields(parameters),
        version_hash=registry.tool_version_hash(name),
        config=shown,
        readiness=readiness,
    )


def call_tool(
    sources: ConsoleSources,
    name: str,
    arguments: dict[str, Any],
    *,
    decision: str = "",
    shown_hash: str | None = None,
) -> CallOutcome:
    """Call ``name`` with ``arguments`` as the approval policy allows.

    Args:
        sources: The console's sources (its registry carries the policy).
        name: The tool.
        arguments: The arguments.
        decision: ``""`` (a first submission: a call that needs approval is shown for it),
            ``"approve"`` or ``"approve_always"`` (the person approved what they were shown;
            ``always`` also stores the approval for this tool version).
        shown_hash: The arguments hash of the request the person approved: the call runs
            only if the arguments still hash to it.
    """
    from tools.approvals import ApprovalError, Approve

    registry = sources.registry
    try:
        check = registry.check_approval(name, arguments, policy=sources.policy)
    except ApprovalError as exc:
        return CallOutcome(arguments, problem=f"the approvals file cannot be used, so nothing ran: {exc}")
    if check is None or not check.needs_approval:
        return CallOutcome(arguments, result=_shown(registry.call_tool_raw(name, arguments).to_dict(), sources))
    request = check.request(arguments)
    if decision not in ("approve", "approve_always"):
        return CallOutcome(arguments, request=shown_request(request, sources))
    policy = sources.policy
    if policy is None:  # pragma: no cover - a check came from a policy
        return CallOutcome(arguments, problem="no approval policy")
    try:
        approved = policy.apply(request, Approve(remember=decision == "approve_always", shown_hash=shown_hash or ""))
    except ApprovalError as exc:
        return CallOutcome(arguments, problem=str(exc))
    result = registry.call_tool_raw(name, approved.arguments, approved=approved)
    return CallOutcome(arguments, result=_shown(result.to_dict(), sources))


def _shown(envelope: dict[str, Any], sources: ConsoleSources) -> dict[str, Any]:
    value = redact_data(envelope, sources.secrets)
    return value if isinstance(value, dict) else {"status": "error", "error": "unreadable result"}


def shown_request(request: ApprovalRequest, sources: ConsoleSources) -> ApprovalRequest:
    """The request as shown: its arguments masked like traces (the hashes stay the real ones').

    The preview (the code an install brings) is shown as it is, but for the secret values the
    console knows: the person approves what it says, so its code is not masked by shape.
    """
    from dataclasses import replace

    masked = redact_data(request.arguments, sources.secrets)
    preview = request.preview
    if preview is not None:
        preview = _known_masked(preview, sources.secrets)
    return replace(request, arguments=masked if isinstance(masked, dict) else request.arguments, preview=preview)


def _known_masked(text: str, secrets: tuple[str, ...]) -> str:
    for secret in sorted({s for s in secrets if len(s) >= 4}, key=len, reverse=True):
        text = text.replace(secret, "***")
    return text


@dataclass(frozen=True)
class _Adopted:
    config: ToolConfig
    scope: str


def _adopted(sources: ConsoleSources) -> dict[str, _Adopted]:
    """The adopted tools by name, each with the registry file it comes from (read once)."""
    from tools.errors import TooldeckError

    if sources.adopted is None:
        return {}
    try:
        store = sources.adopted.store
        project = store.load_project().tools
        user = store.load_user().tools
    except TooldeckError:
        return {}
    found = {name: _Adopted(config, "user") for name, config in user.items()}
    found.update({name: _Adopted(config, "project") for name, config in project.items()})
    return found


def project_notice(sources: ConsoleSources) -> str | None:
    """What to say when this project's registry file is not used (untrusted or changed)."""
    from tools.errors import TooldeckError

    if sources.adopted is None:
        return None
    try:
        return sources.adopted.store.project_trust().notice("tooldeck trust (or the Settings page)")
    except TooldeckError as exc:
        return str(exc)


def _came_from(sources: ConsoleSources, name: str, manual: ToolManual, adopted: _Adopted | None) -> str:
    if adopted is not None:
        config = adopted.config
        origin = f"adopted from {config.adopted_from}" if config.adopted_from else "declared"
        return f"{origin} ({adopted.scope} registry file)"
    given = sources.provenance.get(name)
    if given:
        return given
    if manual.alias_of:
        return f"old name of {manual.alias_of}"
    return "builtin" if manual.source == "builtin" else manual.source


def _figures(
    metrics: MetricsHistory | None, name: str, since: datetime, secrets: tuple[str, ...]
) -> ToolFigures | None:
    if metrics is None:
        return None
    summary = metrics.summary(name, since=since)
    if not summary.calls and summary.last_error is None:
        return None
    last_error = redact_data(summary.last_error, secrets) if summary.last_error else None
    return ToolFigures(
        calls=summary.calls,
        failures=summary.failures,
        p50_ms=summary.p50_ms,
        p95_ms=summary.p95_ms,
        last_error=last_error,
        last_error_type=summary.last_error_type,
    )


def arguments_text(arguments: Mapping[str, Any]) -> str:
    """The arguments as the JSON a confirmation form carries back."""
    return json.dumps(arguments, ensure_ascii=False, sort_keys=True)
