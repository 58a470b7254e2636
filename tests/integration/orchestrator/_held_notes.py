"""An operator who wants note-taking to ask: the quickstart's held call for approval tests.

``store_knowledge`` is ``safe`` by declaration (its effect stays in tooldeck's own data), so
the quickstart never asks at freedom ``medium``. The approval tests need a call that is held
at ``medium``: the operator raises ``store_knowledge`` to ``moderate`` in a routing config
(an operator declaration, which the agent's view applies to approvals as well as routing).
"""

from __future__ import annotations

from pathlib import Path

ROUTING = '[manuals.store_knowledge]\nrisk = "moderate"\n'


def routing_config(folder: Path) -> Path:
    """A routing config declaring ``store_knowledge`` moderate, written in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "routing.toml"
    path.write_text(ROUTING)
    return path


def held_notes_env(folder: Path) -> dict[str, str]:
    """``python -m orchestrator`` variables: the ``main`` agent with that routing config."""
    return {"TOOLDECK_AGENT": "main", "TOOLDECK_ROUTING_CONFIG": str(routing_config(folder))}
