"""The schema export of :class:`~tools.registry.LocalToolRegistry`: one method per wire format.

Each format's definitions come from :mod:`tools.schema`, are built once per tool and kept in
the registry's :class:`~tools._exports.ExportCache`; an export picks the registrations asked
for, in registration order, and returns a new list of the shared, frozen definitions.

:class:`RegistryExport` is mixed into the registry only: the export methods are the
registry's public API, and they read its registrations, lock and cache as they are.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Any

from tools.schema import OnUnsupported, anthropic_tool, gemini_tool, mcp_tool, openai_tool, without_properties

if TYPE_CHECKING:
    import threading

    from tools._exports import ExportCache
    from tools._runner import ToolEntry


class RegistryExport:
    """``to_openai_tools``, ``to_anthropic_tools``, ``to_mcp_tools``, ``to_gemini_tools``."""

    # What the export reads of the registry (set by LocalToolRegistry.__init__).
    _entries: dict[str, ToolEntry]
    _lock: threading.RLock
    _exports: ExportCache
    _version: int

    def to_openai_tools(
        self,
        *,
        strict: bool = False,
        on_unsupported: OnUnsupported = "warn",
        names: Collection[str] | None = None,
        include_hidden: bool = False,
    ) -> list[dict[str, Any]]:
        """Chat Completions tool definitions for every registered tool.

        With ``strict=True`` each tool is converted to OpenAI strict mode; a tool whose
        schema strict mode cannot express is exported with ``strict: false`` and a logged
        WARNING naming the tool and field, or raises with ``on_unsupported="raise"``.
        ``names`` limits the export to those registrations (in registration order);
        hidden registrations are left out unless ``include_hidden``.

        Each call returns a new list of cached, shared definitions: read-only ``dict``
        subclasses that serialise like any dict. Change the list freely; to change a
        definition, replace it (``{**tools[0], "strict": False}``) or take a mutable copy
        with ``copy.deepcopy`` (changing one in place raises ``TypeError``).
        """
        return self._export(
            ("openai", strict, on_unsupported),
            lambda e: openai_tool(
                e.name, e.tool.description, self._schema_of(e), strict=strict, on_unsupported=on_unsupported
            ),
            names,
            include_hidden,
        )

    def to_anthropic_tools(
        self, *, names: Collection[str] | None = None, include_hidden: bool = False
    ) -> list[dict[str, Any]]:
        """Anthropic Messages API tool definitions; ``names`` limits them (a new list of
        shared read-only definitions: see :meth:`to_openai_tools`)."""
        return self._export(
            ("anthropic",),
            lambda e: anthropic_tool(e.name, e.tool.description, self._schema_of(e)),
            names,
            include_hidden,
        )

    def to_mcp_tools(
        self, *, names: Collection[str] | None = None, include_hidden: bool = False
    ) -> list[dict[str, Any]]:
        """MCP ``tools/list`` entries with ``inputSchema`` and ``outputSchema`` (a new list of
        shared read-only definitions: see :meth:`to_openai_tools`)."""
        return self._export(
            ("mcp",),
            lambda e: mcp_tool(e.name, e.tool.description, self._schema_of(e), e.tool.output_schema()),
            names,
            include_hidden,
        )

    def to_gemini_tools(
        self,
        *,
        on_unsupported: OnUnsupported = "warn",
        names: Collection[str] | None = None,
        include_hidden: bool = False,
    ) -> list[dict[str, Any]]:
        """Gemini function declarations ``{"name", "description", "parameters"?}`` (a new list
        of shared read-only definitions: see :meth:`to_openai_tools`).

        Pass them as ``types.Tool(function_declarations=...)`` with google-genai. A tool
        whose schema Gemini cannot express exactly is exported as near as possible with a
        logged WARNING naming the tool and field, or raises with ``on_unsupported="raise"``.
        """
        return self._export(
            ("gemini", on_unsupported),
            lambda e: gemini_tool(e.name, e.tool.description, self._schema_of(e), on_unsupported=on_unsupported),
            names,
            include_hidden,
        )

    def is_hidden(self, name: str, /) -> bool:
        """Whether a registration is hidden from the exports (see :meth:`register`)."""
        entry = self._entries.get(name)
        return entry is not None and entry.hidden

    @staticmethod
    def _schema_of(entry: ToolEntry) -> dict[str, Any]:
        schema = entry.tool._input_schema()
        return without_properties(schema, set(entry.preset)) if entry.preset else schema

    def _export(
        self,
        fmt: tuple[Any, ...],
        build: Callable[[ToolEntry], dict[str, Any]],
        names: Collection[str] | None,
        include_hidden: bool,
    ) -> list[dict[str, Any]]:
        def chosen() -> list[ToolEntry]:
            entries = self._entries
            if names is not None and len(names) < len(entries):
                picked = [entries[name] for name in set(names) if name in entries]
                position = self._positions()
                picked.sort(key=lambda entry: position[entry.name])
            else:
                picked = [e for e in entries.values() if names is None or e.name in names]
            return [e for e in picked if include_hidden or not e.hidden]

        with self._lock:
            return list(self._exports.definitions((*fmt, include_hidden), chosen, names, build))

    def _positions(self) -> dict[str, int]:
        """Registration order by name (worked out once per version of the tool set)."""
        cached = self.__dict__.get("_position_cache")
        if cached is None or cached[0] != self._version:
            cached = self.__dict__["_position_cache"] = (self._version, {n: i for i, n in enumerate(self._entries)})
        return cached[1]
