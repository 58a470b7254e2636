"""Server-rendered pages: one Jinja2 environment, autoescaped, strict about undefined names.

Everything a tool, a model or a person wrote reaches a page through Jinja's autoescape; no
template marks such text ``|safe``. Pages carry no inline script and no JSON in script tags
(the page's script reads ``data-`` attributes, escaped like any attribute); the
Content-Security-Policy forbids inline script anyway. The only markup built in Python is the
server-drawn SVG of :mod:`orchestrator.ui._svg`, which escapes every text it places (it is
marked safe there, once, as :class:`markupsafe.Markup`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import jinja2
from starlette.responses import HTMLResponse

__all__ = ["NAV", "Pages", "duration", "pretty_json", "rate_class"]

TEMPLATES = Path(__file__).parent / "templates"
#: The pages of the console, in the order of its navigation bar: (path, title).
NAV: tuple[tuple[str, str], ...] = (
    ("/tools", "Tools"),
    ("/routing", "Routing"),
    ("/runs", "Runs"),
    ("/approvals", "Approvals"),
    ("/metrics", "Metrics"),
    ("/settings", "Settings"),
)
#: Success rates above this are green, from ``RED_BELOW`` up to it yellow, below red (as ``tooldeck stats``).
GREEN_ABOVE = 0.8
RED_BELOW = 0.5


def pretty_json(value: Any) -> str:
    """``value`` as indented JSON text (non-JSON values as their ``str``)."""
    return json.dumps(value, indent=2, ensure_ascii=False, default=str, sort_keys=False)


def compact_json(value: Any, limit: int = 200) -> str:
    """``value`` as one line of JSON, cut to ``limit`` characters."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def duration(ms: float | None) -> str:
    """``12.3 ms``, ``1.24 s``, ``3 min 5 s``; an empty string for None."""
    if ms is None:
        return ""
    if ms < 1000:
        return f"{ms:.1f} ms" if ms < 100 else f"{ms:.0f} ms"
    seconds = ms / 1000
    if seconds < 120:
        return f"{seconds:.2f} s"
    return f"{int(seconds // 60)} min {int(seconds % 60)} s"


def rate_class(rate: float | None) -> str:
    """The CSS class of a success rate: ``good`` (> 80 %), ``fair`` (50-80 %), ``poor`` (< 50 %), ``none``."""
    if rate is None:
        return "none"
    if rate > GREEN_ABOVE:
        return "good"
    return "fair" if rate >= RED_BELOW else "poor"


def percent(rate: float | None) -> str:
    """``97 %`` (an empty string for None)."""
    return "" if rate is None else f"{rate * 100:.0f} %"


def when(moment: datetime | str | None) -> str:
    """A time as ``2026-11-26 01:31:05 UTC`` (an ISO string is read first)."""
    if moment is None:
        return ""
    if isinstance(moment, str):
        try:
            parsed = datetime.fromisoformat(moment.replace("Z", "+00:00"))
        except ValueError:
            return moment
    else:
        parsed = moment
    if parsed.tzinfo is not None:
        parsed = parsed.astimezone(timezone.utc)
    return parsed.strftime("%Y-%m-%d %H:%M:%S UTC")


def clip(text: object, limit: int = 120) -> str:
    """``text`` on one line, cut to ``limit`` characters."""
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


class Pages:
    """Renders the console's templates.

    Args:
        csrf_token: Put into every form (and into the page for the script's requests).
        versions: The versions of the live topics the page's data is at least as new as
            (``data-versions`` of the page: its script reloads a part whose topic moved on since).
        globals: More names every template sees.
    """

    def __init__(
        self,
        *,
        csrf_token: str,
        versions: Callable[[], Mapping[str, int]] = dict,
        globals: Mapping[str, Any] | None = None,
    ) -> None:
        self._versions = versions
        self.env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(str(TEMPLATES)),
            autoescape=True,
            undefined=jinja2.StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
            auto_reload=False,
        )
        self.env.filters.update(
            pretty=pretty_json,
            compact=compact_json,
            duration=duration,
            rate_class=rate_class,
            percent=percent,
            when=when,
            clip=clip,
        )
        self.env.globals.update(csrf_token=csrf_token, nav=NAV, **(globals or {}))

    def html(self, template: str, **context: Any) -> str:
        """The page ``template`` rendered with ``context``."""
        return self.env.get_template(template).render(versions=dict(self._versions()), **context)

    def page(self, template: str, *, status: int = 200, **context: Any) -> HTMLResponse:
        """``template`` as an HTML response."""
        return HTMLResponse(self.html(template, **context), status_code=status)
