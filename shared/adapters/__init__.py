"""Data-source adapters: user-owned files and public APIs -> canonical records.

Importing this package is cheap: parsers that need the ``context`` extra (icalendar,
recurring-ical-events, ofxtools) are imported on first use inside the adapters.
"""

from shared.adapters.base import (
    AdapterCapabilities,
    AdapterError,
    AdapterOptions,
    AdapterResult,
    BaseAdapter,
)
from shared.adapters.calendar_ics import IcsCalendarAdapter, IcsOptions
from shared.adapters.commute_osrm import OsrmCommuteAdapter, OsrmOptions
from shared.adapters.finance_base import FinanceAdapter, FinanceOptions
from shared.adapters.finance_csv import CsvColumns, CsvFinanceAdapter, CsvOptions, parse_amount
from shared.adapters.finance_ofx import OfxFinanceAdapter, OfxOptions
from shared.adapters.finance_query import FinanceIndex, FinanceQuery
from shared.adapters.places import Place, resolve_place
from shared.adapters.records import (
    CalendarEvent,
    CurrentWeather,
    DailyForecast,
    Route,
    Transaction,
    WeatherForecast,
)
from shared.adapters.registry import KNOWN_CATEGORIES, AdapterRegistry, register_adapter
from shared.adapters.weather_openmeteo import OpenMeteoOptions, OpenMeteoWeatherAdapter

__all__ = [
    "KNOWN_CATEGORIES",
    "AdapterCapabilities",
    "AdapterError",
    "AdapterOptions",
    "AdapterRegistry",
    "AdapterResult",
    "BaseAdapter",
    "CalendarEvent",
    "CsvColumns",
    "CsvFinanceAdapter",
    "CsvOptions",
    "CurrentWeather",
    "DailyForecast",
    "FinanceAdapter",
    "FinanceIndex",
    "FinanceOptions",
    "FinanceQuery",
    "IcsCalendarAdapter",
    "IcsOptions",
    "OfxFinanceAdapter",
    "OfxOptions",
    "OpenMeteoOptions",
    "OpenMeteoWeatherAdapter",
    "OsrmCommuteAdapter",
    "OsrmOptions",
    "Place",
    "Route",
    "Transaction",
    "WeatherForecast",
    "parse_amount",
    "register_adapter",
    "resolve_place",
]
