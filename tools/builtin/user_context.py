"""UserContextTool: the user's calendar, finances, weather and commute, for the model.

One tool replaces the old ``get_user_context``, ``get_daily_briefing``,
``get_commute_time`` and ``query_finance`` functions; those names stay callable, with their
old arguments, through the adapters in :mod:`tools.builtin.legacy`::

    tool = UserContextTool(context_bridge=ContextBridge("http://127.0.0.1:8765"))
    registry.register(tool)
    for alias in legacy_tools(user_context=tool):
        registry.register(alias)
"""

from __future__ import annotations

from datetime import date
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from tools.base import BaseTool
from tools.builtin.context_bridge import ContextBridge
from tools.errors import InvalidArgumentsError
from tools.manual import ToolCategory, ToolManual

__all__ = ["UserContextRequest", "UserContextTool"]

Category = Literal[
    "all",
    "calendar",
    "finance",
    "weather",
    "commute",
    "navigation",
    "health",
    "fitness",
    "gaming",
    "social",
]
_ALIASES = {"navigation": "commute"}
_FINANCE_FIELDS = (
    "finance_action",
    "search",
    "transaction_category",
    "sort",
    "sort_dir",
    "page",
    "per_page",
    "group_by",
    "date_from",
    "date_to",
)
MAX_PER_PAGE = 100


class UserContextRequest(BaseModel):
    """Arguments of ``user_context``; descriptions are written for the model."""

    model_config = ConfigDict(extra="forbid")

    category: Category | list[Category] | None = Field(
        None,
        description=(
            "Which part of the user's context: one of calendar, finance, weather, commute "
            "(alias navigation), health, fitness, gaming, social; a list of them; or 'all'. "
            "Omit it to get everything, or finance when finance_action is given, or commute "
            "when destination is given."
        ),
    )
    action: Literal["summary", "query"] | None = Field(
        None,
        description=(
            "'summary' (default): a short overview per category with alerts. 'query': the "
            "detailed data; with category='finance' it runs finance_action."
        ),
    )
    destination: str | None = Field(
        None,
        max_length=200,
        description="Commute only: a saved place such as 'office' or 'gym', or 'lat,lon'.",
    )
    include_alerts: bool = Field(
        True, description="Add the alerts of every category (conflicts, rain, large expenses)."
    )
    finance_action: Literal["transactions", "summary", "categories", "search"] | None = Field(
        None,
        description=(
            "Finance only: 'transactions' lists transactions, 'search' finds those whose text "
            "contains every word of search, 'summary' totals income/spending (optionally "
            "grouped by group_by), 'categories' spending per category."
        ),
    )
    search: str | None = Field(None, max_length=200, description="Finance only: words to look for, e.g. 'coffee'.")
    transaction_category: str | None = Field(
        None,
        max_length=100,
        description="Finance only: only transactions in this spending category, e.g. 'Groceries' (any case).",
    )
    sort: Literal["date", "amount", "description", "category"] | None = Field(
        None, description="Finance only: sort transactions by this field (default date)."
    )
    sort_dir: Literal["asc", "desc"] | None = Field(
        None, description="Finance only: 'desc' (default, newest/largest first) or 'asc'."
    )
    page: int | None = Field(None, description="Finance only: page number, starting at 1.")
    per_page: int | None = Field(
        None, description=f"Finance only: transactions per page, 1 to {MAX_PER_PAGE} (default 20)."
    )
    group_by: Literal["category", "month", "account", "description"] | None = Field(
        None, description="Finance summary only: group totals by this field."
    )
    date_from: date | None = Field(None, description="Finance only: first day, YYYY-MM-DD.")
    date_to: date | None = Field(None, description="Finance only: last day, YYYY-MM-DD.")

    @field_validator("category", mode="before")
    @classmethod
    def _split_commas(cls, value: Any) -> Any:
        if isinstance(value, str) and "," in value:
            return [part.strip() for part in value.split(",") if part.strip()]
        return value


class UserContextTool(BaseTool[UserContextRequest, dict[str, Any]]):
    """The user's context from the context service, summarised or queried.

    Arguments outside the schema, or contradictory ones (``finance_action`` without the
    finance category, ``destination`` without commute, ``page`` < 1, ...), end in a
    ``validation_error`` whose message shows a correct call. A failing, slow or garbled
    service gives per-category ``unavailable`` statuses with a reason, never an exception.

    Args:
        context_bridge: Client of the context service.
        user_id: Whose context (the model cannot choose another user).
    """

    name = "user_context"
    description = (
        "Get the user's personal context: calendar events, finances (bank transactions), "
        "weather, commute time, plus alerts. Use action='summary' for an overview, "
        "category='finance' with finance_action to search or total transactions, "
        "category='commute' with destination for travel time."
    )
    version = "1.0.0"
    manual = ToolManual(
        name="user_context",
        display_name="User context",
        description="Reads the user's own context (calendar, finance, weather, ...); changes nothing.",
        category=ToolCategory.CONTEXT,
        risk="safe",
        mutating=False,
        token_cost="medium",  # noqa: S106 - a cost level, not a secret
        capabilities=("calendar", "finance", "weather", "commute", "personal_data"),
    )

    def __init__(self, *, context_bridge: ContextBridge, user_id: str = "default") -> None:
        self._bridge = context_bridge
        self._user_id = user_id

    def execute_internal(self, request: UserContextRequest) -> dict[str, Any]:
        """Check the combination of arguments, then summarise or query."""
        categories = _categories(request)
        finance_given = [name for name in _FINANCE_FIELDS if getattr(request, name) is not None]
        _check(request, categories, finance_given)
        if finance_given or (request.action == "query" and categories == ["finance"]):
            return self._finance(request)
        if request.action == "query":
            return self._query(categories, request)
        return self._summary(categories, request)

    def _summary(self, categories: list[str] | None, request: UserContextRequest) -> dict[str, Any]:
        raw = self._bridge.fetch(categories, self._user_id, destination=request.destination)
        normalized = self._bridge.normalize(raw)["categories"]
        alerts: list[str] = []
        for entry in normalized.values():
            found = entry.pop("alerts", None)
            if request.include_alerts and isinstance(found, list):
                alerts.extend(str(alert) for alert in found)
        out: dict[str, Any] = {
            "action": "summary",
            "generated_at": raw.get("generated_at"),
            "timezone": raw.get("timezone"),
            "categories": normalized,
        }
        if request.include_alerts:
            out["alerts"] = alerts
        return out

    def _query(self, categories: list[str] | None, request: UserContextRequest) -> dict[str, Any]:
        raw = self._bridge.fetch(categories, self._user_id, destination=request.destination)
        details = {
            name: {k: entry.get(k) for k in ("status", "reason", "data") if entry.get(k) is not None}
            for name, entry in raw["categories"].items()
        }
        return {"action": "query", "generated_at": raw.get("generated_at"), "categories": details}

    def _finance(self, request: UserContextRequest) -> dict[str, Any]:
        action = request.finance_action or (
            "summary" if request.group_by else "search" if request.search else "transactions"
        )
        query = {
            "action": action,
            "search": request.search,
            "category": request.transaction_category,
            "sort": request.sort,
            "sort_dir": request.sort_dir,
            "page": request.page,
            "per_page": request.per_page,
            "group_by": request.group_by,
            "date_from": request.date_from.isoformat() if request.date_from else None,
            "date_to": request.date_to.isoformat() if request.date_to else None,
        }
        answer = self._bridge.query_finance(self._user_id, query)
        if answer.get("status") == "invalid":
            raise InvalidArgumentsError(
                f"{answer.get('reason')}. Example: user_context(category='finance', "
                "action='query', finance_action='search', search='coffee', page=1)"
            )
        out: dict[str, Any] = {"action": "query", "category": "finance", "finance_action": action}
        out.update({k: v for k, v in answer.items() if k in ("status", "reason", "result", "errors")})
        return out


def _categories(request: UserContextRequest) -> list[str] | None:
    """The requested categories (aliases resolved, duplicates dropped); None means all."""
    value = request.category
    if value is None:
        if any(getattr(request, name) is not None for name in _FINANCE_FIELDS):
            return ["finance"]
        if request.destination:
            return ["commute"]
        return None
    chosen = [value] if isinstance(value, str) else list(value)
    if not chosen or "all" in chosen:
        return None
    return list(dict.fromkeys(_ALIASES.get(c, c) for c in chosen))


def _check(request: UserContextRequest, categories: list[str] | None, finance_given: list[str]) -> None:
    """Raise :class:`InvalidArgumentsError` with a correct example for bad combinations."""
    if finance_given and categories != ["finance"]:
        raise InvalidArgumentsError(
            f"{', '.join(finance_given)} can only be used with category='finance' on its own. "
            "Example: user_context(category='finance', action='query', "
            "finance_action='search', search='coffee')"
        )
    if request.destination and categories is not None and "commute" not in categories:
        raise InvalidArgumentsError(
            "destination only applies to the commute category. Example: "
            "user_context(category='commute', destination='office')"
        )
    if request.page is not None and request.page < 1:
        raise InvalidArgumentsError(
            f"page must be 1 or more (pages start at 1), got {request.page}. Example: "
            "user_context(category='finance', finance_action='transactions', page=1)"
        )
    if request.per_page is not None and not 1 <= request.per_page <= MAX_PER_PAGE:
        raise InvalidArgumentsError(
            f"per_page must be between 1 and {MAX_PER_PAGE}, got {request.per_page}. Example: "
            "user_context(category='finance', finance_action='transactions', per_page=20)"
        )
    if request.finance_action == "search" and not (request.search or "").strip():
        raise InvalidArgumentsError(
            "finance_action='search' needs the words to look for in search. Example: "
            "user_context(category='finance', finance_action='search', search='coffee')"
        )
    if request.group_by is not None and request.finance_action not in (None, "summary"):
        raise InvalidArgumentsError(
            "group_by only applies to finance_action='summary'. Example: "
            "user_context(category='finance', finance_action='summary', group_by='month')"
        )
    if request.date_from and request.date_to and request.date_from > request.date_to:
        raise InvalidArgumentsError(
            f"date_from ({request.date_from}) is after date_to ({request.date_to}). Example: "
            "user_context(category='finance', finance_action='summary', "
            "date_from='2026-01-01', date_to='2026-01-31')"
        )
