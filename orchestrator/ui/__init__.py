"""The console: ``tooldeck ui``, a local web page over the stores the command-line tools use.

Tools (manuals, schemas, readiness, figures, a form that calls a tool through the approval
policy), routing (agent types by tools, with the reasons), runs (timelines of agent and
pipeline runs), approvals (decide held calls: the run resumes exactly once), metrics over
time (SVG drawn on the server) and settings. FastAPI with server-rendered Jinja2 pages, one
small script of our own, server-sent events for live parts; loopback only, a token in the URL,
same-origin and CSRF checks on every change (see `orchestrator.ui.security`).

It needs the ``ui`` extra (``pip install -e '.[ui]'`` in a checkout): importing this package imports
neither FastAPI nor Jinja2; `create_app` does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from shared.lazy import lazy_exports

if TYPE_CHECKING:
    from orchestrator.ui.app import create_app
    from orchestrator.ui.security import ConsoleSecurity, new_token
    from orchestrator.ui.settings import SettingsSources
    from orchestrator.ui.sources import ConsoleSources

__all__ = ["ConsoleSecurity", "ConsoleSources", "SettingsSources", "create_app", "new_token"]

_HOMES = {
    "create_app": "orchestrator.ui.app",
    "ConsoleSecurity": "orchestrator.ui.security",
    "new_token": "orchestrator.ui.security",
    "SettingsSources": "orchestrator.ui.settings",
    "ConsoleSources": "orchestrator.ui.sources",
}


__getattr__, __dir__ = lazy_exports(__name__, _HOMES, __all__)
