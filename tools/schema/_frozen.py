"""Read-only JSON containers: what cached exports share between calls.

:class:`FrozenDict` and :class:`FrozenList` are ``dict`` and ``list`` subclasses, so they
are JSON data to every serialiser (``json``, pydantic, orjson), compare equal to plain
containers and pass ``isinstance(x, dict)``; every method that would change them raises a
``TypeError`` that says how to get a copy. ``copy.copy``, ``copy.deepcopy`` and ``pickle``
give plain, mutable containers.
"""

from __future__ import annotations

from typing import Any, NoReturn, SupportsIndex

_READ_ONLY = (
    "exported tool definitions are shared between calls and read-only: replace one in the "
    "list you got (tools[i] = {**tools[i], 'cache_control': ...}) or take a mutable copy "
    "with copy.deepcopy(tools[i])"
)


def _refuse(*_args: Any, **_kwargs: Any) -> NoReturn:
    raise TypeError(_READ_ONLY)


class FrozenDict(dict[str, Any]):
    """A ``dict`` that refuses changes (see the module docstring)."""

    __slots__ = ()

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = __ior__ = _refuse

    def __copy__(self) -> dict[str, Any]:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        return thaw(self)  # type: ignore[no-any-return]

    def __reduce_ex__(self, protocol: SupportsIndex) -> tuple[Any, ...]:
        return (dict, (thaw(self),))


class FrozenList(list[Any]):
    """A ``list`` that refuses changes (see the module docstring)."""

    __slots__ = ()

    __setitem__ = __delitem__ = append = extend = insert = remove = pop = clear = _refuse
    sort = reverse = __iadd__ = __imul__ = _refuse

    def __copy__(self) -> list[Any]:
        return list(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        return thaw(self)  # type: ignore[no-any-return]

    def __reduce_ex__(self, protocol: SupportsIndex) -> tuple[Any, ...]:
        return (list, (thaw(self),))


def freeze(value: Any) -> Any:
    """``value`` with every dict and list in it made read-only (a new structure)."""
    if isinstance(value, dict):
        return FrozenDict({key: freeze(item) for key, item in value.items()})
    if isinstance(value, list):
        return FrozenList(freeze(item) for item in value)
    return value


def thaw(value: Any) -> Any:
    """A plain, mutable deep copy of ``value`` (frozen or not)."""
    if isinstance(value, dict):
        return {key: thaw(item) for key, item in value.items()}
    if isinstance(value, list):
        return [thaw(item) for item in value]
    return value
