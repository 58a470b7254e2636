"""`create_app`: the console's ASGI application (FastAPI, server-rendered pages, one event stream).

Every route is thin: it reads the request, asks the page's module for its data (which reads
the stores afresh) and renders a template. Work that blocks (files, tool calls) runs in the
thread pool. The application is wrapped in `SecurityMiddleware` (token, same origin, CSRF,
Host check, security headers): nothing reaches a route without the token.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response, StreamingResponse
from fastapi.staticfiles import StaticFiles
from starlette.concurrency import run_in_threadpool

from orchestrator.ui import _tools
from orchestrator.ui._events import Changes, event_stream, path_fingerprint
from orchestrator.ui._form import parse_form, raw_field_error
from orchestrator.ui._metrics import DEFAULT_WINDOW, WINDOWS, metrics_view, tool_charts
from orchestrator.ui._render import Pages
from orchestrator.ui._routing import agent_explain, routing_matrix
from orchestrator.ui._run_routes import add_run_routes
from orchestrator.ui._svg import Bar, bar_chart
from orchestrator.ui.security import ConsoleSecurity, SecurityMiddleware
from orchestrator.ui.settings import SettingsSources

if TYPE_CHECKING:
    from starlette.types import ASGIApp

    from orchestrator.ui.sources import ConsoleSources

__all__ = ["Console", "create_app"]

STATIC = Path(__file__).parent / "static"


class Console:
    """The pages over one set of sources (what the routes call).

    Args:
        sources: The stores and services shown.
        security: The console's credentials (its CSRF token goes into every form).
    """

    def __init__(self, sources: ConsoleSources, security: ConsoleSecurity) -> None:
        self.sources = sources
        self.security = security
        self.changes = Changes(_probes(sources), {"approvals": lambda: _pending_count(sources)})
        self.rendered: ContextVar[Mapping[str, int] | None] = ContextVar("tooldeck_console_versions", default=None)
        self.pages = Pages(csrf_token=security.csrf_token, versions=lambda: self.rendered.get() or {})

    def not_found(self, what: str) -> HTMLResponse:
        """The page for something that does not exist."""
        return self.pages.page("error.html", status=404, title="Not found", active="", message=what)

    @staticmethod
    async def form(request: Request) -> dict[str, str]:
        """The submitted form's fields (files are not accepted)."""
        return {key: value for key, value in (await request.form()).items() if isinstance(value, str)}

    def agent_types(self) -> list[str]:
        """The agent types a run can be started for (those with a profile)."""
        from tools.routing import DEFAULT_AGENT_PROFILES

        return list(DEFAULT_AGENT_PROFILES)


def create_app(sources: ConsoleSources, security: ConsoleSecurity) -> ASGIApp:
    """The console application over ``sources``, behind ``security``'s checks.

    Args:
        sources: The stores and services the pages show and change.
        security: The token, the port and the host names the console answers to.

    Returns:
        An ASGI application (serve it with uvicorn on ``security.port``).
    """
    console = Console(sources, security)
    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None, title="tooldeck console")
    app.state.console = console
    app.mount("/static", StaticFiles(directory=str(STATIC)), name="static")

    @app.middleware("http")
    async def versions(request: Request, call_next: Any) -> Response:
        """Probe the stores before a page reads them: the page says which versions it shows."""
        path = request.url.path
        if request.method == "GET" and not path.startswith(("/static/", "/events")):
            console.rendered.set(await run_in_threadpool(console.changes.probe))
        response: Response = await call_next(request)
        return response

    _tool_routes(app, console)
    _routing_routes(app, console)
    _settings_routes(app, console)
    _metrics_routes(app, console)
    add_run_routes(app, console)

    @app.get("/")
    def home() -> Response:
        return RedirectResponse("/tools", status_code=303)

    @app.get("/events")
    async def events(request: Request) -> Response:
        stream = event_stream(console.changes, disconnected=request.is_disconnected)
        return StreamingResponse(stream, media_type="text/event-stream", headers={"X-Accel-Buffering": "no"})

    return SecurityMiddleware(app, security)


# ---------------------------------------------------------------------- tools


def _tool_routes(app: FastAPI, console: Console) -> None:
    pages, sources = console.pages, console.sources

    @app.get("/tools")
    def tools_page() -> Response:
        rows = _tools.tool_rows(sources)
        return pages.page(
            "tools.html",
            title="Tools",
            active="/tools",
            rows=rows,
            windowed=_tools.FIGURES_WINDOW,
            unavailable=sorted(sources.unavailable.items()),
            project_notice=_tools.project_notice(sources),
        )

    @app.get("/tools/{name}")
    def tool_page(name: str, check: int = 0) -> Response:
        detail = _tools.tool_detail(sources, name, check=bool(check))
        if detail is None:
            return console.not_found(f"No tool named {name!r} is registered.")
        return pages.page("tool.html", **_tool_context(detail))

    @app.post("/tools/{name}/call")
    async def call(name: str, request: Request) -> Response:
        return await run_in_threadpool(_call, console, name, await console.form(request))


def _call(console: Console, name: str, form: dict[str, str]) -> Response:
    sources = console.sources
    detail = _tools.tool_detail(sources, name)
    if detail is None:
        return console.not_found(f"No tool named {name!r} is registered.")
    arguments, fields = parse_form(detail.fields, form)
    context = _tool_context(detail)
    context["fields"] = [f for f in fields if f.name != "__arguments_json"]
    context["raw_arguments"] = form.get("__arguments_json", "")
    context["raw_error"] = raw_field_error(fields)
    if arguments is None:
        return console.pages.page("tool.html", status=422, **context)
    decision = form.get("decision", "")
    outcome = _tools.call_tool(sources, name, arguments, decision=decision, shown_hash=form.get("arguments_hash"))
    context["outcome"] = outcome
    context["arguments_text"] = _tools.arguments_text(outcome.arguments)
    if outcome.result is not None:
        console.changes.bump("metrics")
    return console.pages.page("tool.html", **context)


def _tool_context(detail: _tools.ToolDetail) -> dict[str, Any]:
    return {
        "title": detail.row.name,
        "active": "/tools",
        "detail": detail,
        "fields": detail.fields,
        "raw_arguments": "",
        "raw_error": None,
        "outcome": None,
        "arguments_text": "",
    }


# ---------------------------------------------------------------------- routing


def _routing_routes(app: FastAPI, console: Console) -> None:
    pages, sources = console.pages, console.sources

    @app.get("/routing")
    def routing_page() -> Response:
        matrix = routing_matrix(sources)
        bars = [Bar(t.agent, t.tokens, f"{t.tokens} tokens · {t.tools} tools", f"/routing/{t.agent}")
                for t in matrix.tokens]  # fmt: skip
        chart = bar_chart(bars)
        return pages.page("routing.html", title="Routing", active="/routing", matrix=matrix, token_chart=chart)

    @app.get("/routing/{agent}")
    def agent_page(agent: str) -> Response:
        found = agent_explain(sources, agent)
        if found is None:
            return console.not_found(f"No agent type {agent!r} has a profile.")
        text, decisions, problem = found
        return pages.page(
            "routing_agent.html",
            title=f"Routing: {agent}",
            active="/routing",
            agent=agent,
            text=text,
            decisions=decisions,
            problem=problem,
        )


# ---------------------------------------------------------------------- settings


def _settings_routes(app: FastAPI, console: Console) -> None:
    pages, sources = console.pages, console.sources

    def render(form: Any = None, *, status: int = 200, message: str | None = None, failed: bool = False) -> Response:
        settings = sources.settings
        if settings is None:
            return pages.page("settings.html", title="Settings", active="/settings", form=None, trust=None)
        return pages.page(
            "settings.html",
            status=status,
            title="Settings",
            active="/settings",
            form=form if form is not None else settings.form(),
            trust=settings.trusted_files() if settings.registry_files is not None else None,
            trust_message=message,
            trust_failed=failed,
        )

    @app.get("/settings")
    def settings_page() -> Response:
        return render()

    @app.post("/settings")
    async def save(request: Request) -> Response:
        form = await console.form(request)
        settings = sources.settings
        if settings is None:
            return console.not_found("This console was started without settings to change.")
        shown = await run_in_threadpool(settings.save, form, sources.registry.manuals())
        if not shown.errors:
            console.changes.bump("settings")
        return await run_in_threadpool(render, shown, status=422 if shown.errors else 200)

    async def trust_change(
        request: Request, field: str, change: Callable[[SettingsSources, str], str | None], done: str
    ) -> Response:
        """Trust or revoke (``change``) what the form's ``field`` names; ``done`` says it was."""
        form = await console.form(request)
        settings = sources.settings
        if settings is None:
            return console.not_found("This console was started without settings to change.")
        problem = await run_in_threadpool(change, settings, form.get(field, ""))
        console.changes.bump("settings")
        said = problem or done.format(form.get(field, ""))
        return await run_in_threadpool(render, status=409 if problem else 200, message=said, failed=bool(problem))

    @app.post("/settings/trust")
    async def trust(request: Request) -> Response:
        done = "Trusted: its tools are used (restart tooldeck ui to list them here)."
        return await trust_change(request, "sha256", SettingsSources.trust_project, done)

    @app.post("/settings/untrust")
    async def untrust(request: Request) -> Response:
        return await trust_change(request, "path", SettingsSources.revoke_trust, "No longer trusted: {}")


# ---------------------------------------------------------------------- metrics


def _metrics_routes(app: FastAPI, console: Console) -> None:
    pages, sources = console.pages, console.sources

    @app.get("/metrics")
    def metrics_page(window: str = DEFAULT_WINDOW) -> Response:
        view = metrics_view(sources, window)
        return pages.page("metrics.html", title="Metrics", active="/metrics", view=view)

    @app.get("/metrics/{name}")
    def tool_metrics(name: str, window: str = DEFAULT_WINDOW) -> Response:
        window = window if window in WINDOWS else DEFAULT_WINDOW
        charts = tool_charts(sources, name, window)
        return pages.page(
            "metrics_tool.html", title=f"Metrics: {name}", active="/metrics", name=name, window=window, charts=charts
        )


# ---------------------------------------------------------------------- live updates


def _probes(sources: ConsoleSources) -> dict[str, Any]:
    """What each topic watches: the files behind it (and what the runner has under way)."""
    probes: dict[str, Any] = {}
    runs_dir = getattr(sources.runs, "directory", None)
    runner = sources.runner
    watched: list[Path] = []
    if isinstance(runs_dir, Path):
        watched = [runs_dir, runs_dir.parent / "paused"]
    if watched or runner is not None:
        probes["runs"] = lambda: (path_fingerprint(watched), runner.version() if runner is not None else 0)
    approvals_file = getattr(sources.approvals, "path", None)  # a database is not watched: pages reload
    if isinstance(approvals_file, Path) or watched:
        files = [*watched, *([approvals_file] if isinstance(approvals_file, Path) else [])]
        probes["approvals"] = lambda: path_fingerprint(files)
    metrics_path = getattr(sources.metrics, "path", None)
    if isinstance(metrics_path, Path):
        probes["metrics"] = lambda: path_fingerprint(
            [metrics_path, *sorted(metrics_path.parent.glob(metrics_path.name + ".*.log"))]
        )
    if sources.settings is not None:
        settings_files = [sources.settings.file.path, *([approvals_file] if isinstance(approvals_file, Path) else [])]
        probes["settings"] = lambda: path_fingerprint(settings_files)
    return probes


def _pending_count(sources: ConsoleSources) -> int:
    """How many calls wait for a person (the navigation badge)."""
    from orchestrator.ui._runs import pending_count

    if sources.runs is None:
        return 0
    return pending_count(sources.runs.list(status="paused", limit=None))
