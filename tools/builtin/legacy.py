"""The pre-1.0 tool names, with their old arguments, as small adapters onto the new tools.

Stored conversations replay tool calls made with the old functions (27 of them; the module
tools come later). Where the consolidation renamed a tool, an adapter here keeps the old
name callable with exactly its old signature: its ``RequestModel`` is the old signature
(old parameter names, types and defaults), so the old schema is exported, validated and
strict-exported like any tool's; ``execute_internal`` maps the old arguments onto the new
tool's request and runs the new tool instance it was given (same collaborators). The
result is the new tool's envelope, with ``alias_of`` added to its metadata.

======================  =====================================================================
old call                runs
======================  =====================================================================
web_search              ``web(action="search", query, count=num_results)``
load_web_page           ``web(action="load", url, include_links=extract_links, max_chars)``
get_user_context        ``user_context(category=categories, include_alerts, destination)``
get_daily_briefing      ``user_context(category="all", action="summary")``
get_commute_time        ``user_context(category="commute", destination)``
query_finance           ``user_context(category="finance", action="query", finance_action=action,
                        transaction_category=category, ...)`` (old defaults: 10 per page,
                        sorted by date, summaries grouped by category)
======================  =====================================================================

``math_solver``, ``execute_code``, ``search_knowledge`` and ``store_knowledge`` kept their
names; those tools accept the old arguments themselves (``top_k``, ``metadata``).

Example::

    web, context = WebTool(search_backend=backend), UserContextTool(context_bridge=bridge)
    for tool in (web, context, *legacy_tools(web=web, user_context=context)):
        registry.register(tool)
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from tools.base import BaseTool
from tools.builtin.user_context import MAX_PER_PAGE, Category
from tools.errors import InvalidArgumentsError, ToolDefinitionError
from tools.manual import ToolManual
from tools.result import ToolResult

__all__ = [
    "LegacyCommuteTime",
    "LegacyDailyBriefing",
    "LegacyGetUserContext",
    "LegacyLoadWebPage",
    "LegacyQueryFinance",
    "LegacyTool",
    "LegacyWebSearch",
    "legacy_tools",
]

TOld = TypeVar("TOld", bound=BaseModel)


class LegacyTool(BaseTool[TOld, ToolResult]):
    """An old tool name whose request is the old signature, run by the new tool.

    Subclasses set ``name``, ``description``, the old signature as ``RequestModel`` (the
    generic argument), ``target_name`` (the name of the new tool they map to) and implement
    :meth:`map_arguments`. Timeout, sequential flag and version follow the target.

    Args:
        target: The new tool instance (the one registered under ``target_name``).

    Raises:
        ToolDefinitionError: ``target`` is not the tool this alias maps to.
    """

    target_name: ClassVar[str] = ""

    def __init__(self, *, target: BaseTool[Any, Any]) -> None:
        if target.name != self.target_name:
            raise ToolDefinitionError(
                f"{type(self).__name__} maps the old tool {self.name!r} onto {self.target_name!r}; "
                f"it was given the tool {target.name!r}. Pass the {self.target_name!r} instance."
            )
        self._target = target
        self._target_schema = target.input_schema()
        self.version = target.version
        self.timeout = target.timeout
        self.sequential = target.sequential

    @property
    def target(self) -> BaseTool[Any, Any]:
        """The new tool the old calls run on."""
        return self._target

    def get_manual(self) -> ToolManual:
        """The new tool's manual under the old name, declaring ``alias_of`` the new tool: the
        same category, risk and cost, and every routing decision about the new tool (a deny
        of ``web`` denies ``web_search``) applies to the old name."""
        if isinstance(self.manual, ToolManual):
            return self.manual.renamed(self.name)
        return self._target.get_manual().as_alias(self.name)

    @abstractmethod
    def map_arguments(self, request: TOld) -> dict[str, Any]:
        """The new tool's arguments for an old call (raise ``InvalidArgumentsError`` to refuse)."""

    def execute_internal(self, request: TOld) -> ToolResult:
        """Run the new tool with the mapped arguments; its envelope, marked ``alias_of``."""
        result = self._target.execute(**self.map_arguments(request))
        return result.with_metadata(alias_of=self._target.name)


def _bounded(value: int, schema: Mapping[str, Any], field: str) -> int:
    """``value`` brought into the ``minimum``/``maximum`` the new tool declares for ``field``."""
    node = (schema.get("properties") or {}).get(field) or {}
    low, high = node.get("minimum"), node.get("maximum")
    if isinstance(low, int) and value < low:
        return low
    if isinstance(high, int) and value > high:
        return high
    return value


# -- web ------------------------------------------------------------------------------------


class WebSearchArgs(BaseModel):
    """Arguments of web_search (its pre-1.0 signature)."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(description="What to search the web for, in a few key words.")
    num_results: int = Field(
        default=5, description="How many results to return (1-20; other values are brought into range)."
    )


class LegacyWebSearch(LegacyTool[WebSearchArgs]):
    """``web_search(query, num_results=5)`` -> ``web(action="search", query, count)``."""

    name = "web_search"
    description = "Search the web; returns title, url and snippet for each result."
    target_name = "web"

    def map_arguments(self, request: WebSearchArgs) -> dict[str, Any]:
        """Rename ``num_results`` to ``count`` (brought into the new tool's range)."""
        count = _bounded(request.num_results, self._target_schema, "count")
        return {"action": "search", "query": request.query, "count": count}


class LoadWebPageArgs(BaseModel):
    """Arguments of load_web_page (its pre-1.0 signature)."""

    model_config = ConfigDict(extra="forbid")

    url: str = Field(description="Absolute http:// or https:// URL of the page to read.")
    extract_links: bool = Field(default=False, description="Also return the page's links.")
    max_chars: int = Field(
        default=8000,
        description="Longest text to return, in characters (500-100000; other values are brought into range).",
    )


class LegacyLoadWebPage(LegacyTool[LoadWebPageArgs]):
    """``load_web_page(url, extract_links, max_chars)`` -> ``web(action="load", ...)``."""

    name = "load_web_page"
    description = "Read one web page by URL; returns its main text (and links if asked)."
    target_name = "web"

    def map_arguments(self, request: LoadWebPageArgs) -> dict[str, Any]:
        """``extract_links`` becomes ``include_links``; ``max_chars`` keeps its old default."""
        max_chars = _bounded(request.max_chars, self._target_schema, "max_chars")
        return {"action": "load", "url": request.url, "include_links": request.extract_links, "max_chars": max_chars}


# -- user context ---------------------------------------------------------------------------

_COMMUTE = frozenset({"commute", "navigation", "all"})


class GetUserContextArgs(BaseModel):
    """Arguments of get_user_context (its pre-1.0 signature)."""

    model_config = ConfigDict(extra="forbid")

    categories: list[Category] | None = Field(
        default=None,
        description="Which parts of the user's context, e.g. ['calendar', 'weather']; omit for all of them.",
    )
    include_alerts: bool = Field(default=True, description="Add the alerts of every category.")
    destination: str | None = Field(
        default=None, max_length=200, description="For the commute: a saved place such as 'office', or 'lat,lon'."
    )


class LegacyGetUserContext(LegacyTool[GetUserContextArgs]):
    """``get_user_context(categories, include_alerts, destination)`` -> ``user_context``."""

    name = "get_user_context"
    description = (
        "The user's personal context (calendar, finance, weather, commute, ...) with alerts. "
        "Pass categories to narrow it, e.g. categories=['calendar']."
    )
    target_name = "user_context"

    def map_arguments(self, request: GetUserContextArgs) -> dict[str, Any]:
        """``categories`` becomes ``category``; a destination outside the commute is ignored,
        as the old tool did."""
        chosen = list(dict.fromkeys(request.categories or ()))
        mapped: dict[str, Any] = {"include_alerts": request.include_alerts}
        if chosen:
            mapped["category"] = chosen[0] if len(chosen) == 1 else chosen
        if request.destination and (not chosen or _COMMUTE.intersection(chosen)):
            mapped["destination"] = request.destination
        return mapped


class NoArgs(BaseModel):
    """This tool takes no arguments."""

    model_config = ConfigDict(extra="forbid")


class LegacyDailyBriefing(LegacyTool[NoArgs]):
    """``get_daily_briefing()`` -> ``user_context(category="all", action="summary")``."""

    name = "get_daily_briefing"
    description = "A daily briefing: today's calendar, weather, commute, recent spending and alerts."
    target_name = "user_context"

    def map_arguments(self, request: NoArgs) -> dict[str, Any]:
        """Everything, summarised, with alerts."""
        return {"category": "all", "action": "summary", "include_alerts": True}


class CommuteTimeArgs(BaseModel):
    """Arguments of get_commute_time (its pre-1.0 signature)."""

    model_config = ConfigDict(extra="forbid")

    destination: str | None = Field(
        default=None,
        max_length=200,
        description="A saved place such as 'office' or 'gym', or 'lat,lon'; omit for the usual destination.",
    )


class LegacyCommuteTime(LegacyTool[CommuteTimeArgs]):
    """``get_commute_time(destination)`` -> ``user_context(category="commute", destination)``."""

    name = "get_commute_time"
    description = "Travel time from home to a destination, e.g. destination='office'."
    target_name = "user_context"

    def map_arguments(self, request: CommuteTimeArgs) -> dict[str, Any]:
        """The commute category, with the destination when given."""
        mapped: dict[str, Any] = {"category": "commute"}
        if request.destination:
            mapped["destination"] = request.destination
        return mapped


_SORTS = {
    "timestamp": "date",
    "date": "date",
    "amount": "amount",
    "description": "description",
    "merchant": "description",
    "category": "category",
}
_GROUPS = {
    "category": "category",
    "month": "month",
    "account": "account",
    "description": "description",
    "merchant": "description",
}


class QueryFinanceArgs(BaseModel):
    """Arguments of query_finance (its pre-1.0 signature)."""

    model_config = ConfigDict(extra="forbid")

    action: Literal["transactions", "summary", "categories", "search"] = Field(
        default="transactions",
        description="'transactions' lists them, 'search' finds those containing every word of "
        "search, 'summary' totals income and spending (grouped by group_by), 'categories' "
        "gives spending per category.",
    )
    category: str | None = Field(
        default=None, max_length=100, description="Only transactions in this category, e.g. 'Groceries'."
    )
    search: str | None = Field(default=None, max_length=200, description="Words to look for, e.g. 'coffee'.")
    sort: Literal["timestamp", "date", "amount", "description", "merchant", "category"] = Field(
        default="timestamp", description="Sort transactions by this field."
    )
    sort_dir: Literal["asc", "desc"] = Field(default="desc", description="'desc' (newest/largest first) or 'asc'.")
    page: int = Field(default=1, ge=1, description="Page number, starting at 1.")
    per_page: int = Field(default=10, description="Transactions per page (1-100; other values are brought into range).")
    group_by: Literal["category", "month", "account", "description", "merchant"] = Field(
        default="category", description="For action 'summary': group the totals by this field."
    )
    date_from: str | None = Field(default=None, max_length=10, description="First day, YYYY-MM-DD.")
    date_to: str | None = Field(default=None, max_length=10, description="Last day, YYYY-MM-DD.")


class LegacyQueryFinance(LegacyTool[QueryFinanceArgs]):
    """``query_finance(action, category, ...)`` -> ``user_context(category="finance", action="query", ...)``."""

    name = "query_finance"
    description = (
        "Query the user's bank transactions: action='search' with search='coffee', "
        "'transactions' (paged, sorted), 'summary' (grouped by group_by) or 'categories'; "
        "filter by category and date_from/date_to."
    )
    target_name = "user_context"

    def map_arguments(self, request: QueryFinanceArgs) -> dict[str, Any]:
        """The old names and defaults onto the finance query of ``user_context``."""
        if request.action == "search" and not (request.search or "").strip():
            raise InvalidArgumentsError(
                "action='search' needs the words to look for in search. Example: "
                "query_finance(action='search', search='coffee')"
            )
        return {
            "category": "finance",
            "action": "query",
            "finance_action": request.action,
            "transaction_category": request.category,
            "search": request.search,
            "sort": _SORTS[request.sort],
            "sort_dir": request.sort_dir,
            "page": request.page,
            "per_page": min(max(request.per_page, 1), MAX_PER_PAGE),
            "group_by": _GROUPS[request.group_by] if request.action == "summary" else None,
            "date_from": request.date_from,
            "date_to": request.date_to,
        }


def legacy_tools(
    *,
    web: BaseTool[Any, Any] | None = None,
    user_context: BaseTool[Any, Any] | None = None,
) -> list[LegacyTool[Any]]:
    """The old-name tools for the new tools given (register each one).

    Args:
        web: The ``web`` tool: gives ``web_search`` and ``load_web_page``.
        user_context: The ``user_context`` tool: gives ``get_user_context``,
            ``get_daily_briefing``, ``get_commute_time`` and ``query_finance``.
    """
    out: list[LegacyTool[Any]] = []
    if web is not None:
        out += [LegacyWebSearch(target=web), LegacyLoadWebPage(target=web)]
    if user_context is not None:
        out += [
            LegacyGetUserContext(target=user_context),
            LegacyDailyBriefing(target=user_context),
            LegacyCommuteTime(target=user_context),
            LegacyQueryFinance(target=user_context),
        ]
    return out
