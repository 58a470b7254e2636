"""The weather category's tool-facing summary (pure function)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

RAIN_LIKELY = 60
HOT_C = 35.0
FROST_C = 0.0
WINDY_KMH = 50.0


def normalize_weather(data: Any) -> dict[str, Any]:
    """Current conditions, today's range, the next days and alerts from a weather payload.

    ``data`` is the list of forecasts the context service serves (one per configured
    place); the first one is summarised.

    Raises:
        TypeError, KeyError, ValueError: ``data`` is not a weather payload.
    """
    if not isinstance(data, list):
        raise TypeError("weather payload must be a list of forecasts")
    if not data:
        return {"location": None, "now": None, "today": None, "next_days": [], "alerts": []}
    forecast = data[0]
    if not isinstance(forecast, Mapping):
        raise TypeError("weather forecast must be an object")
    days = [
        {
            "date": str(day["date"]),
            "conditions": day.get("conditions"),
            "max_c": day.get("temperature_max_c"),
            "min_c": day.get("temperature_min_c"),
            "rain_chance_pct": day.get("precipitation_probability"),
            "rain_mm": day.get("precipitation_mm"),
        }
        for day in forecast["daily"]
    ]
    current = forecast.get("current")
    now = None
    if isinstance(current, Mapping):
        now = {
            "time": current.get("time"),
            "temperature_c": current.get("temperature_c"),
            "feels_like_c": current.get("apparent_temperature_c"),
            "conditions": current.get("conditions"),
            "wind_kmh": current.get("wind_speed_kmh"),
        }
    today = days[0] if days else None
    return {
        "location": forecast.get("location"),
        "timezone": forecast.get("timezone"),
        "now": now,
        "today": today,
        "next_days": days[1:],
        "alerts": _alerts(today, now),
    }


def _alerts(today: Mapping[str, Any] | None, now: Mapping[str, Any] | None) -> list[str]:
    alerts: list[str] = []
    if today:
        chance = today.get("rain_chance_pct")
        if isinstance(chance, int | float) and chance >= RAIN_LIKELY:
            alerts.append(f"Rain likely today ({chance:.0f}% chance): take an umbrella")
        high = today.get("max_c")
        if isinstance(high, int | float) and high >= HOT_C:
            alerts.append(f"Heat today: up to {high:.0f} °C")
        low = today.get("min_c")
        if isinstance(low, int | float) and low <= FROST_C:
            alerts.append(f"Frost possible: down to {low:.0f} °C")
    wind = (now or {}).get("wind_kmh")
    if isinstance(wind, int | float) and wind >= WINDY_KMH:
        alerts.append(f"Strong wind now: {wind:.0f} km/h")
    return alerts
