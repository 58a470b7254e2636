"""Open-Meteo, OSRM and .ics-over-HTTP adapters against a loopback replay server."""

from __future__ import annotations

from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any

from shared.adapters import (
    DailyForecast,
    IcsCalendarAdapter,
    OpenMeteoWeatherAdapter,
    OsrmCommuteAdapter,
    Route,
)

Scripted = Any  # the `scripted` fixture's ScriptedServer (conftest.py)

PLACES = {
    "home": {"lat": 38.7223, "lon": -9.1393, "label": "Home"},
    "office": {"lat": 38.7369, "lon": -9.1427},
}
NOW = datetime(2026, 11, 26, 9, tzinfo=timezone.utc)


def _no_sleep(_: float) -> None:
    return None


def _weather(**kwargs: Any) -> OpenMeteoWeatherAdapter:
    return OpenMeteoWeatherAdapter(sleep=_no_sleep, http_timeout=2.0, **kwargs)


def test_open_meteo_forecast(scripted: Scripted) -> None:
    result = _weather().fetch(
        {
            "base_url": scripted.url,
            "location": "home",
            "places": PLACES,
            "timezone": "Europe/Lisbon",
        }
    )
    assert result.success, result.error
    forecast = result.data[0]
    assert (forecast.location, forecast.timezone) == ("Home", "Europe/Lisbon")
    assert forecast.current is not None
    assert (forecast.current.temperature_c, forecast.current.conditions) == (14.2, "slight rain")
    assert forecast.daily[0] == DailyForecast(
        date=date(2026, 11, 26),
        temperature_max_c=16.1,
        temperature_min_c=10.4,
        precipitation_probability=85,
        precipitation_mm=4.2,
        weather_code=61,
        conditions="slight rain",
    )
    path, _ = scripted.requests[0]
    assert path.startswith("/v1/forecast?latitude=38.7223&longitude=-9.1393&current=")
    summary = OpenMeteoWeatherAdapter.normalize_for_tools(
        OpenMeteoWeatherAdapter.context_payload(result.data, now=NOW, options={})
    )
    assert summary["alerts"] == ["Rain likely today (85% chance): take an umbrella"]


def test_retries_then_succeeds(scripted: Scripted) -> None:
    scripted.queue(503)
    scripted.queue(429)
    slept: list[float] = []
    adapter = OpenMeteoWeatherAdapter(sleep=slept.append, http_timeout=2.0, max_attempts=3)
    result = adapter.fetch({"base_url": scripted.url, "location": "38.7,-9.1"})
    assert result.success, result.error
    assert len(scripted.requests) == 3
    assert len(slept) == 2


def test_retries_are_bounded(scripted: Scripted) -> None:
    scripted.queue(500, times=5)
    result = _weather(max_attempts=2).fetch({"base_url": scripted.url, "location": "1,1"})
    assert result.error == f"{scripted.url} answered HTTP 500"
    assert len(scripted.requests) == 2


def test_api_error_body_and_garbage(scripted: Scripted) -> None:
    scripted.queue(400, (Path(__file__).parent / "replay" / "open_meteo_error.json").read_bytes())
    result = _weather().fetch({"base_url": scripted.url, "location": "1,1"})
    assert result.error == ("open-meteo refused the request: Latitude must be in range of -90 to 90°. Given: 123.0.")
    scripted.queue(200, b"<html>maintenance</html>", content_type="text/html")
    result = _weather().fetch({"base_url": scripted.url, "location": "1,1"})
    assert result.error == f"{scripted.url} answered with something that is not JSON"
    scripted.queue(200, b'{"daily": {"time": "nope"}}')
    result = _weather().fetch({"base_url": scripted.url, "location": "1,1"})
    assert result.error is not None
    assert result.error.startswith("unexpected answer from open-meteo")


def test_unreachable_api_is_an_error_not_an_exception(closed_url: str) -> None:
    result = _weather(max_attempts=2).fetch({"base_url": closed_url, "location": "1,1"})
    assert result.error == f"could not reach {closed_url} (ConnectionError)"


def test_slow_api_times_out(scripted: Scripted) -> None:
    scripted.queue(stall=5)
    adapter = OpenMeteoWeatherAdapter(sleep=_no_sleep, http_timeout=0.3, max_attempts=1)
    result = adapter.fetch({"base_url": scripted.url, "location": "1,1"})
    assert result.error == f"{scripted.url} did not answer within 0.3 s"


def test_osrm_route(scripted: Scripted) -> None:
    adapter = OsrmCommuteAdapter(sleep=_no_sleep, http_timeout=2.0)
    result = adapter.fetch({"base_url": scripted.url, "origin": "home", "destination": "Office", "places": PLACES})
    assert result.success, result.error
    assert result.data == [
        Route(
            origin="Home",
            destination="office",
            distance_km=3.18,
            duration_min=14.0,
            via=("Avenida da Liberdade", "Avenida Fontes Pereira de Melo"),
        )
    ]
    path, _ = scripted.requests[0]
    assert path.startswith("/route/v1/driving/-9.139300,38.722300;-9.142700,38.736900?overview=false")


def test_osrm_no_route_and_unknown_place(scripted: Scripted) -> None:
    adapter = OsrmCommuteAdapter(sleep=_no_sleep, http_timeout=2.0)
    result = adapter.fetch({"base_url": scripted.url, "origin": "home", "destination": "0,0", "places": PLACES})
    assert result.error == "no route from Home to 0.0000,0.0000: NoRoute (Impossible route between points)"
    result = adapter.fetch({"base_url": scripted.url, "destination": "mars", "places": PLACES})
    assert result.error == (
        "unknown place 'mars'; use one of the configured places (home, office) or coordinates as 'lat,lon'"
    )
    result = adapter.fetch({"base_url": scripted.url, "places": PLACES})
    assert result.error == "no destination given; pass one of the configured places (home, office)"
    assert len(scripted.requests) == 1


def test_ics_feed_over_http_hides_the_url_path(scripted: Scripted) -> None:
    adapter = IcsCalendarAdapter(clock=lambda: NOW, sleep=_no_sleep, http_timeout=2.0)
    result = adapter.fetch(
        {
            "url": f"{scripted.url}/feeds/calendar.ics",
            "timezone": "Europe/Lisbon",
            "horizon_days": 2,
        }
    )
    assert result.success, result.error
    assert any(e.title == "Dentist appointment" for e in result.data)
    missing = adapter.fetch({"url": f"{scripted.url}/private/secret-token-123/basic.ics"})
    assert missing.error == f"{scripted.url} answered HTTP 404"
    assert "secret-token" not in (missing.error or "")
