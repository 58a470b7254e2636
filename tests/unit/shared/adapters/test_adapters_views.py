"""Context payloads and normalize_for_tools of each category, including hostile payloads."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from shared.adapters import (
    BaseAdapter,
    CsvFinanceAdapter,
    IcsCalendarAdapter,
    OpenMeteoWeatherAdapter,
    OsrmCommuteAdapter,
)


def test_calendar_summary_of_the_sample_day(examples: Path, clock: Callable[[], datetime]) -> None:
    events = (
        IcsCalendarAdapter(clock=clock)
        .fetch({"path": str(examples / "calendar.ics"), "timezone": "Europe/Lisbon"})
        .data
    )
    payload = IcsCalendarAdapter.context_payload(events, now=clock(), options={"timezone": "Europe/Lisbon", "days": 7})
    summary = IcsCalendarAdapter.normalize_for_tools(payload)
    assert [(e["start"], e["title"]) for e in summary["today"]] == [
        ("09:30", "Team stand-up"),
        ("10:30", "Dentist appointment"),
        ("14:00", "1:1 with Ana"),
        ("18:30", "Gym"),
    ]
    assert summary["next_event"]["title"] == "Team stand-up"
    assert summary["next_event"]["starts_in_minutes"] == 30
    assert summary["alerts"] == ["'Team stand-up' starts in 30 minutes at Office, room 2.14"]
    assert summary["upcoming"][0] == {
        "date": "2026-11-27",
        "weekday": "Fri",
        "title": "Team stand-up",
        "start": "09:30",
        "end": "09:45",
        "all_day": False,
        "location": "Office, room 2.14",
    }
    assert {"date": "2026-12-01", "all_day": True}.items() <= next(
        u for u in summary["upcoming"] if u["all_day"]
    ).items()


def test_calendar_conflict_alert() -> None:
    payload = {
        "timezone": "UTC",
        "now": "2026-11-26T06:00:00+00:00",
        "events": [
            {
                "title": "A",
                "start": "2026-11-26T10:00:00+00:00",
                "end": "2026-11-26T11:00:00+00:00",
            },
            {
                "title": "B",
                "start": "2026-11-26T10:30:00+00:00",
                "end": "2026-11-26T11:30:00+00:00",
            },
        ],
    }
    summary = IcsCalendarAdapter.normalize_for_tools(payload)
    assert summary["alerts"] == ["Calendar conflict: 'A' (10:00-11:00) overlaps 'B' (starts 10:30)"]


def test_finance_summary_of_the_sample(
    csv_columns: dict[str, str], examples: Path, clock: Callable[[], datetime]
) -> None:
    txs = CsvFinanceAdapter(clock=clock).fetch({"path": str(examples / "statement.csv"), "columns": csv_columns}).data
    payload = CsvFinanceAdapter.context_payload(txs, now=clock(), options={"large_expense": 600, "finance_days": 30})
    summary = CsvFinanceAdapter.normalize_for_tools(payload)
    assert summary["period"] == "last 30 days (2026-10-28 to 2026-11-26)"
    assert summary["totals"] == [
        {
            "currency": "EUR",
            "income": "2475.00",
            "expenses": "1732.13",
            "net": "742.87",
            "count": 13,
        }
    ]
    assert summary["top_expense_categories"][0] == {
        "category": "Housing",
        "spent": "850.00",
        "count": 1,
    }
    assert summary["recent_transactions"][0] == {
        "date": "2026-11-20",
        "description": "MB WAY FROM JOANA",
        "amount": "25.00",
        "currency": "EUR",
        "category": "Transfers",
    }
    assert summary["alerts"] == []
    payload = CsvFinanceAdapter.context_payload(
        txs, now=datetime.fromisoformat("2026-11-20T12:00:00+00:00"), options={"large_expense": 600}
    )
    assert CsvFinanceAdapter.normalize_for_tools(payload)["alerts"] == [
        "Large expense: 612.40 EUR to TAP AIR PORTUGAL on 2026-11-16"
    ]


def test_weather_and_commute_summaries() -> None:
    weather = [
        {
            "location": "Home",
            "timezone": "Europe/Lisbon",
            "current": {
                "time": "2026-11-26T09:00",
                "temperature_c": 14.2,
                "apparent_temperature_c": 12.9,
                "conditions": "overcast",
                "wind_speed_kmh": 55.0,
            },
            "daily": [
                {
                    "date": "2026-11-26",
                    "conditions": "slight rain",
                    "temperature_max_c": 16.1,
                    "temperature_min_c": -1.0,
                    "precipitation_probability": 80,
                    "precipitation_mm": 4.2,
                },
                {
                    "date": "2026-11-27",
                    "conditions": "overcast",
                    "temperature_max_c": 17.0,
                    "temperature_min_c": 9.8,
                    "precipitation_probability": 20,
                    "precipitation_mm": 0.0,
                },
            ],
        }
    ]
    summary = OpenMeteoWeatherAdapter.normalize_for_tools(weather)
    assert summary["today"]["max_c"] == 16.1
    assert len(summary["next_days"]) == 1
    assert summary["alerts"] == [
        "Rain likely today (80% chance): take an umbrella",
        "Frost possible: down to -1 °C",
        "Strong wind now: 55 km/h",
    ]
    route = [
        {
            "origin": "Home",
            "destination": "Office",
            "distance_km": 3.12,
            "duration_min": 14.0,
            "via": ["Av. da Liberdade"],
        }
    ]
    assert OsrmCommuteAdapter.normalize_for_tools(route) == {
        "origin": "Home",
        "destination": "Office",
        "travel_time_min": 14,
        "distance_km": 3.12,
        "via": ["Av. da Liberdade"],
        "routes": [
            {
                "origin": "Home",
                "destination": "Office",
                "travel_time_min": 14,
                "distance_km": 3.12,
                "via": ["Av. da Liberdade"],
            }
        ],
        "alerts": [],
    }


@pytest.mark.parametrize("cls", [IcsCalendarAdapter, CsvFinanceAdapter, OpenMeteoWeatherAdapter, OsrmCommuteAdapter])
@pytest.mark.parametrize(
    "payload",
    [None, 42, "text", [1, 2], {"events": "x"}, {"now": "yesterday", "events": []}, [{"x": 1}]],
)
def test_hostile_payloads_raise_shape_errors_only(cls: type[BaseAdapter[Any]], payload: Any) -> None:
    with contextlib.suppress(TypeError, KeyError, ValueError, AttributeError, IndexError):
        cls.normalize_for_tools(payload)


def test_default_normalize_is_empty() -> None:
    class Plain(BaseAdapter[int]):
        def fetch_raw(self, config: Any) -> Any:
            return [1]

        def transform(self, raw: Any) -> list[int]:
            return list(raw)

    assert Plain.normalize_for_tools({"anything": 1}) == {}
    assert Plain.context_payload([1, 2], now=datetime.now(), options={}) == [1, 2]
