"""The Routing page: agent types by tools, each cell the router's decision and the step that
made it; the prompt tokens each agent's export costs."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tools.routing import RoutingConfigError, ToolRouter

if TYPE_CHECKING:
    from orchestrator.ui.sources import ConsoleSources
    from tools.manual import ToolManual
    from tools.routing import RoutingDecision, ToolRoutingConfig

__all__ = ["AgentTokens", "RoutingMatrix", "agent_explain", "routing_matrix"]

#: Characters per token of the estimate (what ``bench_routing`` uses without a tokenizer).
CHARS_PER_TOKEN = 4


@dataclass(frozen=True)
class AgentTokens:
    """What one agent type's tool export costs the prompt.

    Attributes:
        agent: The agent type.
        tools: How many tools it is offered.
        tokens: Estimated tokens of its OpenAI tool definitions (compact JSON characters / 4).
    """

    agent: str
    tools: int
    tokens: int


@dataclass(frozen=True)
class RoutingMatrix:
    """The Routing page's data.

    Attributes:
        agents: The agent types (columns).
        rows: One row per registered tool: its manual (as routing sees it) and one decision
            per agent type, in ``agents`` order.
        tokens: Each agent type's export cost, in ``agents`` order.
        config_source: Where the routing overrides came from (None: none in force).
        problem: Why the overrides could not be used (the matrix then shows the profiles alone).
    """

    agents: list[str]
    rows: list[tuple[ToolManual, list[RoutingDecision]]]
    tokens: list[AgentTokens]
    config_source: str | None
    problem: str | None

    @property
    def most_tokens(self) -> int:
        """The largest export (the bar chart's scale)."""
        return max((t.tokens for t in self.tokens), default=0)


def routing_matrix(sources: ConsoleSources) -> RoutingMatrix:
    """The decisions of every agent type about every registered tool."""
    router, source, problem = _router(sources)
    registry = sources.registry
    manuals = registry.manuals()
    agents = list(router.profiles)
    explained = {agent: router.explain(agent, manuals) for agent in agents}
    effective = router.effective(manuals)
    rows = [(manual, [explained[agent][i] for agent in agents]) for i, manual in enumerate(effective)]
    tokens = []
    for agent in agents:
        export = registry.for_agent(agent, router).to_openai_tools()
        size = len(json.dumps(export, separators=(",", ":"), ensure_ascii=False))
        tokens.append(AgentTokens(agent, len(export), (size + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN))
    return RoutingMatrix(agents, rows, tokens, source, problem)


def agent_explain(sources: ConsoleSources, agent: str) -> tuple[str, list[RoutingDecision], str | None] | None:
    """The full explanation of one agent type's tools: the text ``explain`` prints, each
    decision, and a problem with the overrides; None for an agent type with no profile."""
    router, _, problem = _router(sources)
    if agent not in router.profiles:
        return None
    manuals = sources.registry.manuals()
    return router.explain_text(agent, manuals), router.explain(agent, manuals), problem


def _router(sources: ConsoleSources) -> tuple[ToolRouter, str | None, str | None]:
    """The router with the overrides in force, where they came from, and why they could not
    be used (then the router has the default profiles alone)."""
    settings = sources.settings
    config: ToolRoutingConfig | None = None
    problem = None
    if settings is not None:
        config, problem = settings.routing_config()
    try:
        router = ToolRouter(config=config)
        router.check(sources.registry.manuals())
    except RoutingConfigError as exc:
        return ToolRouter(), None, str(exc)
    return router, (config.source if config is not None else None), problem
