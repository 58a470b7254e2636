"""The registry's export cache: one definition per tool and format, lists per name set.

Each tool's definition in each wire format (OpenAI plain or strict, Anthropic, MCP) is built
once, when first exported, frozen (:mod:`tools.schema._frozen`: ``dict`` and ``list``
subclasses that serialise as JSON like any dict and refuse changes) and kept until that tool
is (un)registered. Every export returns a new list of those shared definitions: a cached
export of 10,000 tools costs a list of 10,000 references, not a deep copy of every schema
(which took 714 ms, most of it in the full garbage collections that so many new containers
set off). A caller may change the list (add, drop, reorder, replace a definition with
``{**definition, "cache_control": ...}``); changing a definition in place raises a
``TypeError`` that says to copy it, so no caller can corrupt what the next one gets.

The lists for the name sets asked for (a view's tools, a tool search's loaded set) are kept
in a least-recently-used map of ``max_sets`` entries; they hold references to the shared
definitions only.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterable
from typing import TYPE_CHECKING, Any

from tools.schema._frozen import freeze

if TYPE_CHECKING:
    from tools._runner import ToolEntry

Build = Callable[["ToolEntry"], dict[str, Any]]


class ExportCache:
    """Per-tool definitions by format, and LRU-bounded lists by name set.

    Args:
        max_sets: Name sets whose lists are kept (least recently used ones are dropped).

    Raises:
        ValueError: ``max_sets`` is below 1.
    """

    def __init__(self, max_sets: int = 256) -> None:
        if max_sets < 1:
            raise ValueError(f"the export cache needs max_sets >= 1, got {max_sets}")
        self.max_sets = max_sets
        self._lock = threading.Lock()
        self._definitions: dict[tuple[Any, ...], dict[str, dict[str, Any]]] = {}
        self._sets: OrderedDict[tuple[Any, ...], tuple[dict[str, Any], ...]] = OrderedDict()

    def forget(self, name: str) -> None:
        """Drop what was built for ``name`` (it was registered again or unregistered)."""
        with self._lock:
            for definitions in self._definitions.values():
                definitions.pop(name, None)
            self._sets.clear()

    def stats(self) -> dict[str, int]:
        """``sets`` cached (at most ``max_sets``) and ``definitions`` (tools x formats)."""
        with self._lock:
            return {
                "sets": len(self._sets),
                "max_sets": self.max_sets,
                "definitions": sum(len(d) for d in self._definitions.values()),
            }

    def definitions(
        self,
        fmt: tuple[Any, ...],
        entries: Callable[[], Iterable[ToolEntry]],
        names: Collection[str] | None,
        build: Build,
    ) -> tuple[dict[str, Any], ...]:
        """The shared, frozen definitions of ``entries()`` (those in ``names``, when given) in
        format ``fmt``. Call under the registry's lock, which also guards (un)registration.

        Args:
            fmt: The format and its options (part of the cache key).
            entries: The registrations to export, in order (called on a miss only).
            names: The name set (None: every entry given).
            build: One tool's definition in this format (plain dicts).
        """
        key = (fmt, None if names is None else frozenset(names))
        with self._lock:
            chosen = self._sets.get(key)
            if chosen is not None:
                self._sets.move_to_end(key)
                return chosen
        return self._fill(key, fmt, entries(), build)

    def _fill(
        self,
        key: tuple[Any, ...],
        fmt: tuple[Any, ...],
        entries: Iterable[ToolEntry],
        build: Build,
    ) -> tuple[dict[str, Any], ...]:
        with self._lock:
            known = self._definitions.setdefault(fmt, {})
        chosen = []
        for entry in entries:
            definition = known.get(entry.name)
            if definition is None:
                definition = freeze(build(entry))
                with self._lock:
                    known[entry.name] = definition
            chosen.append(definition)
        result = tuple(chosen)
        with self._lock:
            self._sets[key] = result
            while len(self._sets) > self.max_sets:
                self._sets.popitem(last=False)
        return result
