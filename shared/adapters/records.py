"""Canonical record types the adapters produce, one per category.

Records are small frozen dataclasses; ``pydantic_core.to_jsonable_python`` turns them into
JSON (``Decimal`` -> string, ``date``/``datetime`` -> ISO 8601).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal

__all__ = [
    "CalendarEvent",
    "CurrentWeather",
    "DailyForecast",
    "Route",
    "Transaction",
    "WeatherForecast",
]


@dataclass(frozen=True, slots=True)
class CalendarEvent:
    """One occurrence of a calendar event (recurring events are expanded).

    Attributes:
        uid: The iCalendar UID (shared by every occurrence of a recurring event).
        title: The SUMMARY.
        start: Aware datetime, or a date for all-day events.
        end: Aware datetime or date; None when the source gives neither DTEND nor DURATION.
        all_day: True for date-only events.
        location: The LOCATION, if any.
        description: The DESCRIPTION, if any.
        calendar: The calendar's name (X-WR-CALNAME or the configured name).
        recurring: True when this is an occurrence of a recurring event.
    """

    uid: str
    title: str
    start: datetime | date
    end: datetime | date | None
    all_day: bool
    location: str | None = None
    description: str | None = None
    calendar: str | None = None
    recurring: bool = False


@dataclass(frozen=True, slots=True)
class Transaction:
    """One bank transaction; ``amount`` is negative for money going out.

    Attributes:
        id: Stable id (the OFX FITID, or a hash of the CSV row).
        date: The posting date.
        amount: Signed amount as a Decimal (never a float).
        description: Payee / description text.
        category: Category from the statement or from the configured rules.
        account: Account name or number (as configured or from the statement).
        currency: ISO 4217 code.
        source: The platform that produced it (``"csv"``, ``"ofx"``).
        memo: Extra text from the statement, if any.
    """

    id: str
    date: date
    amount: Decimal
    description: str
    category: str
    account: str
    currency: str
    source: str
    memo: str | None = None


@dataclass(frozen=True, slots=True)
class CurrentWeather:
    """Conditions now, in metric units."""

    time: datetime
    temperature_c: float
    apparent_temperature_c: float | None
    precipitation_mm: float | None
    wind_speed_kmh: float | None
    weather_code: int | None
    conditions: str


@dataclass(frozen=True, slots=True)
class DailyForecast:
    """One day of forecast, in metric units."""

    date: date
    temperature_max_c: float | None
    temperature_min_c: float | None
    precipitation_probability: int | None
    precipitation_mm: float | None
    weather_code: int | None
    conditions: str


@dataclass(frozen=True, slots=True)
class WeatherForecast:
    """Current conditions and the daily forecast for one place."""

    location: str
    latitude: float
    longitude: float
    timezone: str
    current: CurrentWeather | None
    daily: tuple[DailyForecast, ...]


@dataclass(frozen=True, slots=True)
class Route:
    """Driving route between two places.

    Attributes:
        origin: Name of the starting place.
        destination: Name of the destination.
        distance_km: Route length in kilometres.
        duration_min: Travel time in minutes as the routing engine estimates it.
        via: Road names along the route, when the engine gives them.
        profile: The routing profile (``"driving"``).
    """

    origin: str
    destination: str
    distance_km: float
    duration_min: float
    via: tuple[str, ...] = ()
    profile: str = "driving"
