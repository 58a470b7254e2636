"""The public import paths of shared.adapters and shared.context_service, and light imports."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import shared.adapters
import shared.context_service

REPO = Path(__file__).resolve().parents[3]


def test_adapters_exports() -> None:
    assert sorted(shared.adapters.__all__) == sorted(
        [
            "KNOWN_CATEGORIES", "AdapterCapabilities", "AdapterError", "AdapterOptions", "AdapterRegistry",
            "AdapterResult", "BaseAdapter", "CalendarEvent", "CsvColumns", "CsvFinanceAdapter", "CsvOptions",
            "CurrentWeather", "DailyForecast", "FinanceAdapter", "FinanceIndex", "FinanceOptions", "FinanceQuery",
            "IcsCalendarAdapter", "IcsOptions", "OfxFinanceAdapter", "OfxOptions", "OpenMeteoOptions",
            "OpenMeteoWeatherAdapter", "OsrmCommuteAdapter", "OsrmOptions", "Place", "Route", "Transaction",
            "WeatherForecast", "parse_amount", "register_adapter", "resolve_place",
        ]
    )  # fmt: skip
    for name in shared.adapters.__all__:
        assert getattr(shared.adapters, name) is not None


def test_context_service_exports() -> None:
    assert sorted(shared.context_service.__all__) == [
        "AdapterEntry",
        "ConfigError",
        "ContextAggregator",
        "ServiceConfig",
        "UnknownUserError",
        "UserConfig",
        "load_config",
    ]


def test_tool_side_imports_without_the_context_extra() -> None:
    # Block the extra's packages, then import what the orchestrator imports.
    code = (
        "import sys\n"
        "for name in ('icalendar', 'recurring_ical_events', 'ofxtools', 'fastapi', 'uvicorn', 'starlette'):\n"
        "    sys.modules[name] = None\n"
        "import shared.adapters, shared.context_service\n"
        "from tools.builtin.user_context import UserContextTool\n"
        "from tools.builtin.context_bridge import ContextBridge\n"
        "r = shared.adapters.CsvFinanceAdapter().fetch({'path': 'x.ofx'})\n"
        "o = shared.adapters.OfxFinanceAdapter().fetch({'path': sys.argv[1]})\n"
        "print(o.success, o.error)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(REPO / "examples" / "context" / "statement.ofx")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (
        "False the ofx adapter needs the 'context' extra (pip install -e '.[context]'); "
        "ofxtools.header is not installed"
    )
