"""Explicit adapter registration: :func:`register_adapter` and :class:`AdapterRegistry`.

The decorator only tags a class with its category and platform (and adds it to a registry
when one is passed); there is no process-wide registry. A registry is built explicitly,
usually with :meth:`AdapterRegistry.with_builtin_adapters`, so tests get fresh ones.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from shared.adapters.base import BaseAdapter

__all__ = ["KNOWN_CATEGORIES", "AdapterRegistry", "register_adapter"]

#: Context categories a user may ask for. Those without a configured adapter are
#: reported as ``not_configured``.
KNOWN_CATEGORIES: tuple[str, ...] = (
    "calendar",
    "finance",
    "weather",
    "commute",
    "health",
    "fitness",
    "gaming",
    "social",
)

AdapterClass = type[BaseAdapter[Any]]
A = TypeVar("A", bound=AdapterClass)


def register_adapter(*, category: str, platform: str, registry: AdapterRegistry | None = None) -> Callable[[A], A]:
    """Class decorator: set an adapter's ``category``/``platform`` and optionally register it.

    Args:
        category: The context category (``"calendar"``, ``"finance"``, ...).
        platform: The source kind (``"ics"``, ``"csv"``, ...).
        registry: When given, the class is added to it; otherwise it is only tagged and
            collected later with :meth:`AdapterRegistry.add`.

    Raises:
        ValueError: ``category`` or ``platform`` is empty, or the class is no adapter.
    """
    if not category or not platform:
        raise ValueError("register_adapter needs a non-empty category and platform")

    def decorate(cls: A) -> A:
        if not (isinstance(cls, type) and issubclass(cls, BaseAdapter)):
            raise ValueError(f"@register_adapter expects a BaseAdapter subclass, got {cls!r}")
        cls.category = category
        cls.platform = platform
        if registry is not None:
            registry.add(cls)
        return cls

    return decorate


class AdapterRegistry:
    """Adapter classes by ``(category, platform)``; build one per service or test."""

    def __init__(self, adapters: tuple[AdapterClass, ...] | list[AdapterClass] = ()) -> None:
        self._classes: dict[tuple[str, str], AdapterClass] = {}
        for cls in adapters:
            self.add(cls)

    @classmethod
    def with_builtin_adapters(cls) -> AdapterRegistry:
        """A registry holding every adapter shipped with tooldeck.

        Importing them is cheap: parsers (icalendar, ofxtools) are imported on first use.
        """
        from shared.adapters.calendar_ics import IcsCalendarAdapter
        from shared.adapters.commute_osrm import OsrmCommuteAdapter
        from shared.adapters.finance_csv import CsvFinanceAdapter
        from shared.adapters.finance_ofx import OfxFinanceAdapter
        from shared.adapters.weather_openmeteo import OpenMeteoWeatherAdapter

        return cls(
            [
                IcsCalendarAdapter,
                CsvFinanceAdapter,
                OfxFinanceAdapter,
                OpenMeteoWeatherAdapter,
                OsrmCommuteAdapter,
            ]
        )

    def add(self, cls: AdapterClass, *, replace: bool = False) -> AdapterClass:
        """Register ``cls`` under its ``(category, platform)``.

        Raises:
            ValueError: The class has no category/platform, or the pair is taken and
                ``replace`` is False.
        """
        if not cls.category or not cls.platform:
            raise ValueError(
                f"{cls.__name__} has no category/platform: decorate it with "
                "@register_adapter(category=..., platform=...)"
            )
        key = (cls.category, cls.platform)
        if key in self._classes and self._classes[key] is not cls and not replace:
            raise ValueError(
                f"an adapter for {key[0]}/{key[1]} is already registered "
                f"({self._classes[key].__name__}); pass replace=True to override it"
            )
        self._classes[key] = cls
        return cls

    def get(self, category: str, platform: str) -> AdapterClass | None:
        """The class registered for ``category``/``platform``, or None."""
        return self._classes.get((category, platform))

    def for_category(self, category: str) -> list[AdapterClass]:
        """Every class registered for ``category``, in registration order."""
        return [cls for (cat, _), cls in self._classes.items() if cat == category]

    def normalizer(self, category: str, platform: str | None = None) -> AdapterClass | None:
        """The class whose ``normalize_for_tools`` shapes ``category``'s payload.

        The exact ``platform`` when registered, else the first class of the category.
        """
        if platform is not None and (cls := self.get(category, platform)) is not None:
            return cls
        classes = self.for_category(category)
        return classes[0] if classes else None

    def categories(self) -> list[str]:
        """Categories with at least one adapter, in registration order."""
        return list(dict.fromkeys(cat for cat, _ in self._classes))

    def __contains__(self, key: object) -> bool:
        return key in self._classes

    def __len__(self) -> int:
        return len(self._classes)

    def __iter__(self) -> Iterator[AdapterClass]:
        return iter(list(self._classes.values()))
