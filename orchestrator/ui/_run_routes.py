"""Routes of the Runs and Approvals pages (the pages over recorded and paused runs)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fastapi import FastAPI, Request
from fastapi.responses import RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from orchestrator.ui import _approvals
from orchestrator.ui._runs import run_list, run_page

if TYPE_CHECKING:
    from orchestrator.ui.app import Console
    from orchestrator.ui.runner import Activity

__all__ = ["add_run_routes"]

_MAX_QUESTION_CHARS = 20_000


def add_run_routes(app: FastAPI, console: Console) -> None:
    """The Runs and Approvals pages of ``console``."""
    _runs(app, console)
    _approval_routes(app, console)


def _runs(app: FastAPI, console: Console) -> None:
    pages, sources = console.pages, console.sources

    def render(status: str = "", kind: str = "", *, problem: str | None = None, code: int = 200) -> Response:
        runner = sources.runner
        return pages.page(
            "runs.html",
            status=code,
            title="Runs",
            active="/runs",
            runs=run_list(sources, status=status, kind=kind),
            activities=_shown_activities(console)[:10],
            can_ask=runner is not None,
            agents=console.agent_types(),
            ask_problem=problem,
        )

    @app.get("/runs")
    def runs_page(status: str = "", kind: str = "") -> Response:
        return render(status, kind)

    @app.post("/runs")
    async def ask(request: Request) -> Response:
        form = await console.form(request)
        question = form.get("question", "").strip()
        agent = form.get("agent", "main")
        runner = sources.runner
        if runner is None:
            return console.not_found("This console cannot start runs.")
        if not question or len(question) > _MAX_QUESTION_CHARS:
            said = "ask something" if not question else f"at most {_MAX_QUESTION_CHARS} characters"
            return await run_in_threadpool(render, problem=said, code=422)
        if agent not in console.agent_types():
            return await run_in_threadpool(render, problem=f"no agent type {agent[:40]!r}", code=422)
        await run_in_threadpool(runner.ask, question, None if agent == "main" else agent)
        console.changes.bump("runs")
        return RedirectResponse("/runs", status_code=303)

    @app.get("/runs/{run_id}")
    def one_run(run_id: str) -> Response:
        from tools.runs import RunStoreError

        try:
            page = run_page(sources, run_id)
        except RunStoreError as exc:
            return pages.page("error.html", status=500, title="Run", active="/runs", message=str(exc))
        if page is None:
            return console.not_found(f"No run {run_id!r} is recorded.")
        activity = _latest_activity(console, run_id)
        return pages.page("run.html", title=f"Run {run_id[:16]}", active="/runs", page=page, activity=activity)


def _approval_routes(app: FastAPI, console: Console) -> None:
    pages, sources = console.pages, console.sources

    def render(*, message: str | None = None, failed: bool = False, code: int = 200) -> Response:
        pending, stored, problems = _approvals.approvals_view(sources)
        return pages.page(
            "approvals.html",
            status=code,
            title="Approvals",
            active="/approvals",
            pending=pending,
            stored=stored,
            problems=problems,
            message=message,
            failed=failed,
        )

    @app.get("/approvals")
    def approvals_page() -> Response:
        return render()

    @app.post("/approvals/revoke")
    async def revoke(request: Request) -> Response:
        form = await console.form(request)
        problem = await run_in_threadpool(_approvals.revoke, sources, form.get("tool", ""))
        console.changes.bump("approvals")
        said = problem or f"Revoked the approval of {form.get('tool', '')}: it asks again where the level says so."
        return await run_in_threadpool(render, message=said, failed=problem is not None, code=409 if problem else 200)

    @app.post("/approvals/{run_id}/{call_id}")
    async def decide(run_id: str, call_id: str, request: Request) -> Response:
        form = await console.form(request)
        problem = await run_in_threadpool(_approvals.decide, sources, run_id, call_id, form)
        if problem is not None:
            return await run_in_threadpool(render, message=problem, failed=True, code=409)
        console.changes.bump("runs")
        return RedirectResponse(f"/runs/{run_id}", status_code=303)


def _shown_activities(console: Console) -> list[Activity]:
    """The runner's recent activities, their problems masked like traces."""
    from dataclasses import replace

    from tools.telemetry import redact_data

    runner = console.sources.runner
    if runner is None:
        return []
    secrets = console.sources.secrets
    return [
        replace(a, problem=redact_data(a.problem, secrets), subject=redact_data(a.subject, secrets))
        for a in runner.activities()
    ]


def _latest_activity(console: Console, run_id: str) -> Activity | None:
    return next((a for a in _shown_activities(console) if a.run_id == run_id), None)
