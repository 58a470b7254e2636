"""The HTTP layer of the context service (FastAPI; needs the ``context`` extra).

Endpoints:

- ``GET /health``: liveness, no key needed, no user data.
- ``GET /context?categories=calendar,finance&user_id=default[&destination=office]``.
- ``GET /context/finance/query?user_id=default&action=search&search=coffee&sort=date&
  sort_dir=desc&page=1&per_page=20&group_by=category&date_from=2026-01-01&date_to=...``.

When an API key is configured every endpoint but ``/health`` needs it in ``X-API-Key``
(compared in constant time); otherwise 401. Bad or oversized query parameters get 422
with a message that names them; an unknown user gets 404; an unexpected error gets a
500 naming only the exception type.
"""

from __future__ import annotations

import hmac
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Annotated, Any

from fastapi import FastAPI, Header, Query, Request
from fastapi.responses import JSONResponse, Response
from pydantic import ValidationError
from pydantic_core import to_json

from shared.adapters.base import format_validation_error
from shared.adapters.finance_query import FinanceQuery
from shared.context_service.aggregator import ContextAggregator, UnknownUserError

__all__ = ["create_app"]


def _json(body: Any, status_code: int = 200) -> Response:
    return Response(content=to_json(body), status_code=status_code, media_type="application/json")


def create_app(
    aggregator: ContextAggregator,
    *,
    api_key: str | None = None,
    warm_up: bool = False,
    on_shutdown: Sequence[Callable[[], None]] = (),
) -> FastAPI:
    """Build the ASGI app around ``aggregator``.

    Args:
        aggregator: Does the work; the app only parses, authenticates and serialises.
        api_key: When set, required in the ``X-API-Key`` header (never logged or echoed).
        warm_up: Read every source in the background at startup
            (:meth:`ContextAggregator.warm_up`).
        on_shutdown: Called (in order) after the aggregator is closed, when the server
            shuts down: e.g. stopping the module workers.
    """

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        if warm_up:
            aggregator.warm_up()
        yield
        aggregator.close()
        for close in on_shutdown:
            close()

    app = FastAPI(
        lifespan=lifespan,
        title="tooldeck context service",
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
    )
    expected = api_key.encode() if api_key else None

    def authorized(header: str | None) -> bool:
        if expected is None:
            return True
        return header is not None and hmac.compare_digest(header.encode(), expected)

    def unauthorized() -> Response:
        return _json({"error": "missing or wrong X-API-Key header"}, 401)

    @app.get("/health")
    def health() -> Response:
        return _json(aggregator.health())

    @app.get("/context")
    def context(
        x_api_key: Annotated[str | None, Header(max_length=512)] = None,
        categories: Annotated[str | None, Query(max_length=1000)] = None,
        user_id: Annotated[str, Query(min_length=1, max_length=128)] = "default",
        destination: Annotated[str | None, Query(max_length=200)] = None,
    ) -> Response:
        if not authorized(x_api_key):
            return unauthorized()
        wanted = None
        if categories and categories.strip().lower() != "all":
            wanted = [c.strip().lower() for c in categories.split(",") if c.strip()]
        try:
            body = aggregator.context(user_id, wanted, destination=destination or None)
        except UnknownUserError as exc:
            return _json({"error": str(exc)}, 404)
        return _json(body)

    @app.get("/context/finance/query")
    def finance_query(request: Request, x_api_key: Annotated[str | None, Header(max_length=512)] = None) -> Response:
        if not authorized(x_api_key):
            return unauthorized()
        params = dict(request.query_params)
        user_id = params.pop("user_id", "default")
        try:
            query = FinanceQuery.model_validate({k: v for k, v in params.items() if v != ""})
        except ValidationError as exc:
            return _json({"error": f"invalid finance query: {format_validation_error(exc)}"}, 422)
        try:
            body = aggregator.finance_query(user_id[:128], query)
        except UnknownUserError as exc:
            return _json({"error": str(exc)}, 404)
        return _json(body)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        return JSONResponse({"error": f"internal error ({type(exc).__name__})"}, status_code=500)

    return app
