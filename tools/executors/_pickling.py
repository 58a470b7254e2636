"""Pickling for tools that create a client of their own (a worker pool, a sandbox).

Such a tool can run on a Ray actor: the copy pickled there leaves the client behind and
creates its own (`state_without`); a copy made in this process (a registry alias) shares the
client (`shallow_copy`). A client that was injected cannot travel: the tool's owner chose
it, and pickling it would copy, not share, it.
"""

from __future__ import annotations

from typing import Any, TypeVar

T = TypeVar("T")


def shallow_copy(tool: T) -> T:
    """A copy of ``tool`` sharing its collaborators (what ``copy.copy`` does without ``__getstate__``)."""
    clone = object.__new__(type(tool))
    clone.__dict__.update(vars(tool))
    return clone


def state_without(tool: Any, attribute: str, *, owned: bool) -> dict[str, Any]:
    """``tool``'s state without its own client ``attribute`` (to be created anew on unpickling).

    Raises:
        TypeError: the client was injected (``owned`` false), so the tool cannot be pickled.
    """
    if not owned:
        raise TypeError(
            f"tool {getattr(tool, 'name', type(tool).__name__)!r} was given its {attribute.lstrip('_')} by its "
            "creator and cannot take it to another process; let the tool create its own to run it on Ray"
        )
    return {key: value for key, value in vars(tool).items() if key != attribute}
