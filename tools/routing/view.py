"""``ToolView``: one agent's window on a registry: exports and calls only that agent's tools.

``registry.for_agent("coder")`` returns one. It has the registry's calling and export API,
so ``ToolsNode`` and ``AgentGraph`` take it wherever they take a registry. A call to a
registered tool the agent may not use is a ``permission_denied`` result naming the agent
and the tools it can use (recorded by the registry's metrics, not counted by any breaker);
a name that is not registered at all gives the registry's ``unknown_tool`` result. The view
re-resolves when the registry's tool set changes (``registry.version``).

Approvals: a view consults the registry's :class:`~tools.approvals.ApprovalPolicy` (and
approver), or its own when given one (``registry.for_agent("coder", policy=...)``); its own
policy replaces the registry's for calls through the view.

In search mode (:meth:`ToolView.with_tool_search`) the view exports a few pinned tools plus
``tool_search``; tools the model finds (or calls by name) are loaded for later turns.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tools.manual import ToolManual
from tools.result import ToolResult
from tools.routing.errors import RoutingConfigError
from tools.routing.router import RoutingDecision, ToolRouter
from tools.routing.search import ToolIndex, ToolSearchTool
from tools.schema import OnUnsupported, anthropic_tool, gemini_tool, mcp_tool, openai_tool

if TYPE_CHECKING:
    from tools.approvals import ApprovalCheck, ApprovalPolicy, ApprovedCall, Approver
    from tools.approvals._gate import ApprovalGate
    from tools.base import Arguments, BaseTool
    from tools.registry import LocalToolRegistry

_SHOWN = 30


@dataclass
class _State:
    """The resolution for one registry version."""

    version: int
    manuals: list[ToolManual]
    names: tuple[str, ...]
    name_set: frozenset[str]
    complete: bool = False
    index: ToolIndex | None = None
    exported: frozenset[str] | None = None
    loaded: list[str] = field(default_factory=list)


class ViewBoundTool:
    """A tool of a view, bound to it: every call is checked against the agent's tools."""

    __slots__ = ("_name", "_view")

    def __init__(self, view: ToolView, name: str) -> None:
        self._view = view
        self._name = name

    @property
    def name(self) -> str:
        """The registered name."""
        return self._name

    def __call__(self, /, **arguments: Any) -> dict[str, Any]:
        """Call the tool; returns the result dict."""
        return self._view.call_tool(self._name, **arguments).to_dict()

    def call(self, /, **arguments: Any) -> ToolResult:
        """Call the tool; returns the :class:`~tools.result.ToolResult`."""
        return self._view.call_tool(self._name, **arguments)

    async def acall(self, /, **arguments: Any) -> ToolResult:
        """Async twin of :meth:`call`."""
        return await self._view.acall_tool(self._name, **arguments)

    def __repr__(self) -> str:
        return f"ViewBoundTool({self._name!r}, agent={self._view.agent_type!r})"


class ToolView:
    """The tools of one agent type over a registry (what ``registry.for_agent`` returns).

    Args:
        registry: The registry whose tools are routed.
        agent_type: The agent type (a key of the router's profiles; unknown types get
            every category, with a logged WARNING).
        router: Decides the agent's tools (default: ``ToolRouter()`` with the default
            profiles and no overrides).
        pinned: Search mode: the tools exported from the start (besides ``tool_search``);
            None (the default) exports all of the agent's tools.
        search_limit: Search mode: the most matches ``tool_search`` returns by default.
        policy: The approval policy of calls through this view (default: the registry's).
        approver: Asked when a call needs approval (default: the registry's).

    Raises:
        RoutingConfigError: the router's config names tools that are not registered, a
            pinned tool is not one of the agent's tools, or ``tool_search`` is taken.
    """

    def __init__(
        self,
        registry: LocalToolRegistry,
        agent_type: str,
        *,
        router: ToolRouter | None = None,
        pinned: Iterable[str] | None = None,
        search_limit: int = 5,
        policy: ApprovalPolicy | None = None,
        approver: Approver | None = None,
    ) -> None:
        self._registry = registry
        self._policy = policy
        self._approver = approver
        self._gate: ApprovalGate | None = None
        self._router = router if router is not None else ToolRouter()
        overrides = self._router.config.manuals
        effective = policy if policy is not None else registry.policy
        if approver is not None and effective is None:
            raise RoutingConfigError("approver= needs a policy (the view's policy= or the registry's)")
        if effective is not None and (policy is not None or approver is not None or overrides):
            from tools.approvals._gate import ApprovalGate

            # The routing config's manual overrides are the operator's declarations: the
            # view's approvals use them too (a risk raised there asks; lowered, runs).
            self._gate = ApprovalGate(
                effective,
                approver if approver is not None else registry.approver,
                manual_for=self._declared if overrides else None,
            )
        self._agent_type = agent_type
        self._lock = threading.RLock()
        self._state: _State | None = None
        self._router.check(registry.manuals())
        self._search: ToolSearchTool | None = None
        self._pinned: tuple[str, ...] = ()
        self._search_limit = search_limit
        if pinned is not None:
            self._start_search(tuple(pinned), search_limit)

    def _declared(self, manual: ToolManual) -> ToolManual:
        """``manual`` with the routing config's override of it (or of the tool it is an old
        name of) applied."""
        overrides = self._router.config.manuals
        override = overrides.get(manual.name)
        if override is None and manual.alias_of is not None:
            override = overrides.get(manual.alias_of)
        return override.apply(manual) if override is not None else manual

    def _start_search(self, pinned: tuple[str, ...], limit: int) -> None:
        search = ToolSearchTool(self)
        if search.name in self._registry:
            raise RoutingConfigError(
                f"a registered tool is called {search.name!r}, the name of the search tool: rename that tool "
                "to use tool search"
            )
        allowed = self._current().name_set
        refused = [name for name in pinned if name not in allowed]
        if refused:
            raise RoutingConfigError(
                f"pinned tools {', '.join(map(repr, refused))} are not tools of the {self._agent_type} agent "
                f"(its tools: {', '.join(self._current().names) or 'none'}); pin only those"
            )
        if not 1 <= limit <= 20:
            raise RoutingConfigError(f"search_limit must be between 1 and 20, got {limit}")
        self._search = search
        self._pinned = pinned

    def with_tool_search(self, pinned: Iterable[str] = (), *, search_limit: int = 5) -> ToolView:
        """A view of the same agent in search mode: ``pinned`` tools plus ``tool_search``.

        Make one per conversation: the tools the model finds stay loaded in it.
        """
        return ToolView(
            self._registry,
            self._agent_type,
            router=self._router,
            pinned=pinned,
            search_limit=search_limit,
            policy=self._policy,
            approver=self._approver,
        )

    # ------------------------------------------------------------------ state

    @property
    def agent_type(self) -> str:
        """The agent type this view is for."""
        return self._agent_type

    @property
    def router(self) -> ToolRouter:
        """The router deciding the agent's tools."""
        return self._router

    @property
    def registry(self) -> LocalToolRegistry:
        """The registry behind the view."""
        return self._registry

    @property
    def policy(self) -> ApprovalPolicy | None:
        """The approval policy calls through this view follow (its own, else the registry's)."""
        return self._policy if self._policy is not None else self._registry.policy

    @property
    def searchable(self) -> bool:
        """Whether the view is in search mode."""
        return self._search is not None

    def _current(self) -> _State:
        version = self._registry.version
        state = self._state
        if state is not None and state.version == version:
            return state
        with self._lock:
            state = self._state
            if state is not None and state.version == version:
                return state
            registered = self._registry.manuals()
            manuals = self._router.resolve(self._agent_type, registered)
            names = tuple(m.name for m in manuals)
            name_set = frozenset(names)
            loaded = [n for n in state.loaded if n in name_set] if state is not None else []
            complete = len(names) == len(registered)
            state = _State(version, manuals, names, name_set, complete=complete, loaded=loaded)
            self._state = state
            return state

    def names(self) -> list[str]:
        """The names of the agent's tools, in registration order (all of them, also in search mode)."""
        return list(self._current().names)

    def manuals(self) -> list[ToolManual]:
        """The manuals of the agent's tools, in registration order."""
        return list(self._current().manuals)

    def explain(self) -> list[RoutingDecision]:
        """One decision per registered tool: included or not, the deciding step, why."""
        return self._router.explain(self._agent_type, self._registry.manuals())

    def explain_text(self) -> str:
        """:meth:`explain` as text, with the profile and category lines first."""
        return self._router.explain_text(self._agent_type, self._registry.manuals())

    def __contains__(self, name: object) -> bool:
        return name in self._current().name_set

    def __len__(self) -> int:
        return len(self._current().names)

    def __iter__(self) -> Iterator[str]:
        return iter(self._current().names)

    def __repr__(self) -> str:
        mode = f", pinned={list(self._pinned)!r}" if self.searchable else ""
        return f"ToolView({self._agent_type!r}, {len(self)} tools{mode})"

    # ------------------------------------------------------------------ lookup

    def get(self, name: str, /) -> ViewBoundTool | None:
        """The tool bound to this view (call it with keyword arguments), or None when the
        agent may not use it."""
        if name in self._current().name_set or self._is_search(name):
            return ViewBoundTool(self, name)
        return None

    def get_tool(self, name: str, /) -> BaseTool[Any, Any] | None:
        """The registered tool instance when the agent may use it, else None."""
        if self._search is not None and self._is_search(name):
            return self._search
        return self._registry.get_tool(name) if name in self._current().name_set else None

    def get_manual(self, name: str, /) -> ToolManual | None:
        """The manual of one of the agent's tools, else None."""
        for manual in self._current().manuals:
            if manual.name == name:
                return manual
        return None

    def _is_search(self, name: str) -> bool:
        return self._search is not None and name == self._search.name

    # ------------------------------------------------------------------ calls

    def __call__(self, name: str, /, **arguments: Any) -> dict[str, Any]:
        """``call_tool(name, **arguments).to_dict()``."""
        return self.call_tool(name, **arguments).to_dict()

    def call_tool(self, name: str, /, **arguments: Any) -> ToolResult:
        """Call one of the agent's tools; other tools answer ``permission_denied``."""
        if self._allowed(name):
            if self._gate is None:
                return self._registry.call_tool(name, **arguments)
            return self._registry._call_gated(name, arguments, None, None, self._gate)
        if self._search is not None and self._is_search(name):
            return self._search.execute(**arguments)
        return self._refuse(name)

    async def acall_tool(self, name: str, /, **arguments: Any) -> ToolResult:
        """Async twin of :meth:`call_tool`."""
        if self._allowed(name):
            if self._gate is None:
                return await self._registry.acall_tool(name, **arguments)
            return await self._registry._acall_gated(name, arguments, None, None, self._gate)
        if self._search is not None and self._is_search(name):
            return await self._search.aexecute(**arguments)
        return self._refuse(name)

    def call_tool_raw(
        self, name: str, /, arguments: Arguments, *, call_id: str | None = None, approved: ApprovedCall | None = None
    ) -> ToolResult:
        """Call with the arguments as the model sent them (JSON text or a dict); ``call_id``
        and ``approved`` as for :meth:`LocalToolRegistry.call_tool_raw`."""
        if self._allowed(name):
            if self._gate is None:
                return self._registry.call_tool_raw(name, arguments, call_id=call_id, approved=approved)
            return self._registry._call_gated(name, arguments, call_id, approved, self._gate)
        if self._search is not None and self._is_search(name):
            return self._search.execute_raw(arguments)
        return self._refuse(name)

    async def acall_tool_raw(
        self, name: str, /, arguments: Arguments, *, call_id: str | None = None, approved: ApprovedCall | None = None
    ) -> ToolResult:
        """Async twin of :meth:`call_tool_raw`."""
        if self._allowed(name):
            if self._gate is None:
                return await self._registry.acall_tool_raw(name, arguments, call_id=call_id, approved=approved)
            return await self._registry._acall_gated(name, arguments, call_id, approved, self._gate)
        if self._search is not None and self._is_search(name):
            return await self._search.aexecute_raw(arguments)
        return self._refuse(name)

    def check_approval(self, name: str, /, arguments: Arguments = None) -> ApprovalCheck | None:
        """What this view's policy says of a call of ``name`` (None: no policy, or not one of
        the agent's tools); see :meth:`LocalToolRegistry.check_approval`."""
        if name not in self._current().name_set:
            return None
        overrides = self._router.config.manuals
        return self._registry.check_approval(
            name, arguments, policy=self.policy, manual_for=self._declared if overrides else None
        )

    def tool_version_hash(self, name: str, /) -> str | None:
        """The version hash approvals of one of the agent's tools are bound to, with the
        routing config's manual overrides applied (None: not one of the agent's tools)."""
        if name not in self._current().name_set:
            return None
        overrides = self._router.config.manuals
        return self._registry.tool_version_hash(name, manual_for=self._declared if overrides else None)

    def _allowed(self, name: str) -> bool:
        state = self._current()
        if name not in state.name_set:
            return False
        if self._search is not None and name not in state.loaded and name not in self._pinned:
            with self._lock:  # called by name: it stays loaded for later turns
                if name not in state.loaded:
                    state.loaded.append(name)
                    state.exported = None
        return True

    def _refuse(self, name: str) -> ToolResult:
        names = self._current().names
        shown = ", ".join(names[:_SHOWN]) or "none"
        more = f" (and {len(names) - _SHOWN} more)" if len(names) > _SHOWN else ""
        hint = " Use tool_search to find more of them." if self._search is not None else ""
        message = (
            f"The {self._agent_type} agent may not use the tool {str(name)[:64]!r}. "
            f"Tools it can use: {shown}{more}.{hint}"
        )
        details = {"agent_type": self._agent_type, "available": list(names[:_SHOWN])}
        # refuse() answers a name that is not registered with the registry's unknown_tool
        # result, and never runs anything.
        return self._registry.refuse(name, "permission_denied", message, details=details)

    # ------------------------------------------------------------------ search mode

    def loaded(self) -> list[str]:
        """Search mode: the tools loaded so far (found or called), in load order."""
        return list(self._current().loaded)

    def load(self, names: Iterable[str]) -> list[str]:
        """Search mode: export ``names`` from now on; returns those that are the agent's tools."""
        state = self._current()
        added = [name for name in names if name in state.name_set]
        with self._lock:
            for name in added:
                if name not in state.loaded and name not in self._pinned:
                    state.loaded.append(name)
            state.exported = None
        return added

    def search_tools(self, query: str, limit: int) -> dict[str, Any]:
        """Search the agent's tools (what ``tool_search`` runs); the matches are loaded.

        Returns:
            ``{"query", "matches": [{"name", "description", "category", "parameters"}], "note"}``.
        """
        state = self._current()
        index = state.index
        if index is None:
            with self._lock:
                index = state.index
                if index is None:
                    index = ToolIndex([(m, self._description(m.name)) for m in state.manuals])
                    state.index = index
        found = [name for name, _ in index.search(query, limit)]
        self.load(found)
        definitions = {
            d["function"]["name"]: d["function"] for d in self._registry.to_openai_tools(names=frozenset(found))
        }
        manuals = {m.name: m for m in state.manuals}
        matches = [
            {
                "name": name,
                "description": definitions[name].get("description", ""),
                "category": manuals[name].category.value,
                "parameters": definitions[name].get("parameters", {}),
            }
            for name in found
            if name in definitions
        ]
        note = (
            "These tools are loaded: call them by name."
            if matches
            else "No tool matches; try other words (what you want to do, e.g. 'read a file')."
        )
        return {"query": query, "matches": matches, "note": note}

    def _description(self, name: str) -> str:
        tool = self._registry.get_tool(name)
        return tool.description if tool is not None else ""

    def _exported(self) -> frozenset[str] | None:
        state = self._current()
        if self._search is None:
            # Every registered tool (``main``): the registry's unfiltered export is the same.
            return None if state.complete else state.name_set
        exported = state.exported
        if exported is None:
            with self._lock:
                exported = frozenset(n for n in (*self._pinned, *state.loaded) if n in state.name_set)
                state.exported = exported
        return exported

    # ------------------------------------------------------------------ export

    def to_openai_tools(self, *, strict: bool = False, on_unsupported: OnUnsupported = "warn") -> list[dict[str, Any]]:
        """Chat Completions tool definitions of the agent's tools (search mode: pinned,
        loaded and ``tool_search``)."""
        out = self._registry.to_openai_tools(strict=strict, on_unsupported=on_unsupported, names=self._exported())
        if self._search is not None:
            search = self._search
            out.append(
                openai_tool(
                    search.name,
                    search.description,
                    search._input_schema(),
                    strict=strict,
                    on_unsupported=on_unsupported,
                )
            )
        return out

    def to_anthropic_tools(self) -> list[dict[str, Any]]:
        """Anthropic Messages API tool definitions of the agent's tools."""
        out = self._registry.to_anthropic_tools(names=self._exported())
        if self._search is not None:
            out.append(anthropic_tool(self._search.name, self._search.description, self._search._input_schema()))
        return out

    def to_gemini_tools(self, *, on_unsupported: OnUnsupported = "warn") -> list[dict[str, Any]]:
        """Gemini function declarations of the agent's tools."""
        out = self._registry.to_gemini_tools(on_unsupported=on_unsupported, names=self._exported())
        if self._search is not None:
            search = self._search
            out.append(
                gemini_tool(search.name, search.description, search._input_schema(), on_unsupported=on_unsupported)
            )
        return out

    def to_mcp_tools(self) -> list[dict[str, Any]]:
        """MCP ``tools/list`` entries of the agent's tools."""
        out = self._registry.to_mcp_tools(names=self._exported())
        if self._search is not None:
            search = self._search
            out.append(mcp_tool(search.name, search.description, search._input_schema(), search.output_schema()))
        return out
