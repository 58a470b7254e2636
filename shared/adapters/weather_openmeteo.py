"""Weather forecast from Open-Meteo's forecast API (no API key needed).

``GET {base_url}/v1/forecast?latitude=..&longitude=..&current=..&daily=..`` over
``requests`` with a timeout and bounded retries. ``base_url`` is configurable so tests
point it at a local replay server.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime
from types import MappingProxyType
from typing import Any

from pydantic import Field

from shared.adapters._http import http_get_json
from shared.adapters._weather_view import normalize_weather
from shared.adapters.base import AdapterError, AdapterOptions, BaseAdapter
from shared.adapters.places import Place, resolve_place
from shared.adapters.records import CurrentWeather, DailyForecast, WeatherForecast
from shared.adapters.registry import register_adapter

__all__ = ["WMO_CODES", "OpenMeteoOptions", "OpenMeteoWeatherAdapter"]

CURRENT_FIELDS = "temperature_2m,apparent_temperature,precipitation,weather_code,wind_speed_10m"
DAILY_FIELDS = "weather_code,temperature_2m_max,temperature_2m_min,precipitation_probability_max,precipitation_sum"

#: WMO weather interpretation codes, as documented by Open-Meteo.
WMO_CODES: Mapping[int, str] = MappingProxyType(
    {
        0: "clear sky", 1: "mainly clear", 2: "partly cloudy", 3: "overcast",
        45: "fog", 48: "depositing rime fog",
        51: "light drizzle", 53: "moderate drizzle", 55: "dense drizzle",
        56: "light freezing drizzle", 57: "dense freezing drizzle",
        61: "slight rain", 63: "moderate rain", 65: "heavy rain",
        66: "light freezing rain", 67: "heavy freezing rain",
        71: "slight snow fall", 73: "moderate snow fall", 75: "heavy snow fall",
        77: "snow grains", 80: "slight rain showers", 81: "moderate rain showers",
        82: "violent rain showers", 85: "slight snow showers", 86: "heavy snow showers",
        95: "thunderstorm", 96: "thunderstorm with slight hail", 97: "thunderstorm with heavy hail",
    }
)  # fmt: skip


class OpenMeteoOptions(AdapterOptions):
    """Options of :class:`OpenMeteoWeatherAdapter`."""

    base_url: str = Field("https://api.open-meteo.com", description="API origin.")
    location: str = Field("home", description="A configured place name or 'lat,lon'.")
    places: dict[str, Place] = Field(default_factory=dict)
    timezone: str = Field("auto", description="IANA zone for times, or 'auto'.")
    forecast_days: int = Field(3, ge=1, le=16)


@dataclass(frozen=True, slots=True)
class _WeatherRaw:
    name: str
    place: Place
    body: Any

    def __len__(self) -> int:
        return 1


def _conditions(code: Any) -> str:
    return WMO_CODES.get(code, "unknown") if isinstance(code, int) else "unknown"


@register_adapter(category="weather", platform="open-meteo")
class OpenMeteoWeatherAdapter(BaseAdapter[WeatherForecast]):
    """Current conditions and a daily forecast for one configured place."""

    description = "Open-Meteo forecast API (no key)"
    offline = False
    Options = OpenMeteoOptions

    def fetch_raw(self, config: Mapping[str, Any]) -> _WeatherRaw:
        """Call the forecast endpoint for the configured location."""
        options = self.parse_options(config, OpenMeteoOptions)
        name, place = resolve_place(options.location, options.places)
        params = {
            "latitude": place.lat,
            "longitude": place.lon,
            "current": CURRENT_FIELDS,
            "daily": DAILY_FIELDS,
            "timezone": options.timezone,
            "forecast_days": options.forecast_days,
        }
        body = http_get_json(
            self.http_session(),
            options.base_url.rstrip("/") + "/v1/forecast",
            params=params,
            timeout=self._http_timeout,
            max_attempts=self._max_attempts,
            sleep=self._sleep,
            ok_statuses=frozenset({400}),
        )
        if isinstance(body, dict) and body.get("error"):
            raise AdapterError(f"open-meteo refused the request: {str(body.get('reason'))[:200]}")
        return _WeatherRaw(name=name, place=place, body=body)

    def transform(self, raw: _WeatherRaw) -> list[WeatherForecast]:
        """Build one :class:`WeatherForecast`; a body of the wrong shape is an error."""
        body = raw.body
        try:
            daily = body["daily"]
            days = tuple(
                DailyForecast(
                    date=date.fromisoformat(day),
                    temperature_max_c=_num(daily.get("temperature_2m_max"), i),
                    temperature_min_c=_num(daily.get("temperature_2m_min"), i),
                    precipitation_probability=_int(daily.get("precipitation_probability_max"), i),
                    precipitation_mm=_num(daily.get("precipitation_sum"), i),
                    weather_code=_int(daily.get("weather_code"), i),
                    conditions=_conditions(_int(daily.get("weather_code"), i)),
                )
                for i, day in enumerate(daily["time"])
            )
            current = _current(body.get("current"))
            forecast = WeatherForecast(
                location=raw.name,
                latitude=float(body.get("latitude", raw.place.lat)),
                longitude=float(body.get("longitude", raw.place.lon)),
                timezone=str(body.get("timezone") or "UTC"),
                current=current,
                daily=days,
            )
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise AdapterError(f"unexpected answer from open-meteo ({type(exc).__name__}: {exc})") from None
        return [forecast]

    @classmethod
    def normalize_for_tools(cls, data: Any) -> dict[str, Any]:
        """Now, today, the next days, and rain/heat/frost/wind alerts."""
        return normalize_weather(data)


def _num(values: Any, index: int) -> float | None:
    if values is None:
        return None
    value = values[index]
    return None if value is None else float(value)


def _int(values: Any, index: int) -> int | None:
    number = _num(values, index)
    return None if number is None else round(number)


def _current(block: Any) -> CurrentWeather | None:
    if not block:
        return None
    code = block.get("weather_code")
    code = round(code) if isinstance(code, int | float) else None
    return CurrentWeather(
        time=datetime.fromisoformat(block["time"]),
        temperature_c=float(block["temperature_2m"]),
        apparent_temperature_c=_num([block.get("apparent_temperature")], 0),
        precipitation_mm=_num([block.get("precipitation")], 0),
        wind_speed_kmh=_num([block.get("wind_speed_10m")], 0),
        weather_code=code,
        conditions=_conditions(code),
    )
