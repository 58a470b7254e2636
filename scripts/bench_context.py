"""Benchmark: user context through the real context service, via UserContextTool.

Generates, in a temporary folder, a year of calendar events and 50,000 bank transactions,
starts ``python -m shared.context_service`` on a loopback port (weather and commute point
at an in-process replay server), and measures through ``LocalToolRegistry``:

- a finance ``search`` query (target: p50 < 50 ms),
- an ``all``-categories summary (target: p50 < 150 ms),

against baselines measured in the same run: the same finance query on an in-process
``FinanceIndex`` and the same summary from an in-process ``ContextAggregator``.

Run: ``python scripts/bench_context.py [--transactions 50000] [--runs 60]``.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from datetime import date, datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from shared.adapters import CsvFinanceAdapter, FinanceIndex, FinanceQuery  # noqa: E402
from shared.context_service import ContextAggregator, load_config  # noqa: E402
from tools import LocalToolRegistry  # noqa: E402
from tools.builtin.context_bridge import ContextBridge  # noqa: E402
from tools.builtin.user_context import UserContextTool  # noqa: E402

MERCHANTS = [
    ("PINGO DOCE", "Groceries", 15, 90),
    ("CONTINENTE", "Groceries", 20, 120),
    ("CAFE A BRASILEIRA", "Eating out", 2, 8),
    ("COFFEE LAB", "Eating out", 2, 7),
    ("RESTAURANTE O BARRIGAS", "Eating out", 20, 60),
    ("CARRIS METRO", "Transport", 1, 40),
    ("UBER TRIP", "Transport", 5, 25),
    ("EDP ENERGIA", "Utilities", 30, 80),
    ("NETFLIX", "Subscriptions", 14, 14),
    ("WORTEN", "Shopping", 20, 400),
    ("FARMACIA", "Health", 5, 40),
    ("CINEMA NOS", "Entertainment", 7, 20),
]

WEATHER = {
    "latitude": 38.72,
    "longitude": -9.14,
    "timezone": "Europe/Lisbon",
    "current": {"time": "2026-11-26T09:00", "temperature_2m": 14.2, "apparent_temperature": 12.9,
                "precipitation": 0.0, "weather_code": 3, "wind_speed_10m": 11.0},
    "daily": {"time": ["2026-11-26", "2026-11-27", "2026-11-28"], "weather_code": [3, 61, 1],
              "temperature_2m_max": [16.1, 15.0, 18.2], "temperature_2m_min": [10.4, 9.8, 10.1],
              "precipitation_probability_max": [10, 70, 5], "precipitation_sum": [0.0, 3.1, 0.0]},
}  # fmt: skip
ROUTE = {
    "code": "Ok",
    "routes": [{"legs": [{"summary": "Avenida da Liberdade", "duration": 841.7, "distance": 3184.6}],
                "duration": 841.7, "distance": 3184.6, "weight": 841.7, "weight_name": "routability"}],
    "waypoints": [],
}  # fmt: skip


def write_transactions(path: Path, count: int, rng: random.Random, end: date) -> None:
    """``count`` transactions over the year before ``end``, a salary each month."""
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["Date", "Description", "Amount", "Category"])
        for month in range(12):
            writer.writerow([(end - timedelta(days=30 * month + 5)).isoformat(), "ACME PAYROLL", "2450.00", "Income"])
        for _ in range(count - 12):
            name, category, low, high = rng.choice(MERCHANTS)
            day = end - timedelta(days=rng.randrange(365))
            amount = f"-{rng.uniform(low, high):.2f}"
            writer.writerow([day.isoformat(), f"{name} {rng.randrange(1000):03d}", amount, category])


def write_calendar(path: Path, rng: random.Random, start: date) -> None:
    """A year of single events plus a few weekly series, in Europe/Lisbon."""
    lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//tooldeck//bench//EN"]
    for n in range(1500):
        day = start + timedelta(days=rng.randrange(365))
        hour = rng.randrange(8, 19)
        lines += [
            "BEGIN:VEVENT",
            f"UID:bench-{n}@example.org",
            "DTSTAMP:20260101T000000Z",
            f"DTSTART;TZID=Europe/Lisbon:{day:%Y%m%d}T{hour:02d}0000",
            f"DTEND;TZID=Europe/Lisbon:{day:%Y%m%d}T{hour:02d}4500",
            f"SUMMARY:Meeting {n}",
            "END:VEVENT",
        ]
    for n, byday in enumerate(["MO,TU,WE,TH,FR", "TU,TH", "MO", "FR"]):
        lines += [
            "BEGIN:VEVENT",
            f"UID:series-{n}@example.org",
            "DTSTAMP:20260101T000000Z",
            f"DTSTART;TZID=Europe/Lisbon:{start:%Y%m%d}T0{8 + n}3000",
            f"DTEND;TZID=Europe/Lisbon:{start:%Y%m%d}T0{8 + n}4500",
            f"RRULE:FREQ=WEEKLY;BYDAY={byday}",
            f"SUMMARY:Series {n}",
            "END:VEVENT",
        ]
    lines.append("END:VCALENDAR")
    path.write_text("\r\n".join(lines) + "\r\n", encoding="utf-8")


class _Replay(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = json.dumps(WEATHER if self.path.startswith("/v1/forecast") else ROUTE).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _p50(fn: Callable[[], Any], runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--transactions", type=int, default=50_000)
    parser.add_argument("--runs", type=int, default=60)
    args = parser.parse_args()
    rng = random.Random(20261126)
    today = datetime.now(timezone.utc).date()

    replay = ThreadingHTTPServer(("127.0.0.1", 0), _Replay)
    threading.Thread(target=replay.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True).start()
    api = f"http://127.0.0.1:{replay.server_address[1]}"

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        write_transactions(folder / "bank.csv", args.transactions, rng, today)
        write_calendar(folder / "year.ics", rng, today - timedelta(days=180))
        columns = {"date": "Date", "description": "Description", "amount": "Amount", "category": "Category"}
        config = {
            "cache_ttl_seconds": 3600,
            "api_key_env": "BENCH_CONTEXT_KEY",
            "places": {"home": {"lat": 38.7223, "lon": -9.1393}, "office": {"lat": 38.7369, "lon": -9.1427}},
            "users": {
                "default": {
                    "timezone": "Europe/Lisbon",
                    "default_destination": "office",
                    "adapters": [
                        {"category": "calendar", "platform": "ics", "path": "year.ics"},
                        {"category": "finance", "platform": "csv", "path": "bank.csv", "columns": columns},
                        {"category": "weather", "platform": "open-meteo", "base_url": api},
                        {"category": "commute", "platform": "osrm", "base_url": api},
                    ],
                }
            },
        }
        (folder / "context.json").write_text(json.dumps(config))

        # Baselines, in process.
        started = time.perf_counter()
        records = CsvFinanceAdapter().fetch({"path": str(folder / "bank.csv"), "columns": columns}).data
        parse_ms = (time.perf_counter() - started) * 1000
        index = FinanceIndex(records)
        query = FinanceQuery(action="search", search="coffee", per_page=20)
        base_search = _p50(lambda: index.run(query), args.runs)
        aggregator = ContextAggregator(load_config(folder / "context.json"))
        aggregator.context("default")  # fill the cache
        base_summary = _p50(lambda: aggregator.context("default"), args.runs)
        aggregator.close()

        port = _free_port()
        env = {**os.environ, "BENCH_CONTEXT_KEY": "bench-key", "PYTHONPATH": str(REPO)}
        service = subprocess.Popen(
            [sys.executable, "-m", "shared.context_service", "--config", str(folder / "context.json"),
             "--port", str(port), "--log-level", "warning"],
            env=env, start_new_session=True,
        )  # fmt: skip
        try:
            url = f"http://127.0.0.1:{port}"
            registry = LocalToolRegistry()
            registry.register(UserContextTool(context_bridge=ContextBridge(url, api_key="bench-key", timeout=30)))
            deadline = time.monotonic() + 30
            while registry.call_tool("user_context", category="gaming").data["categories"]["gaming"]["status"] != (
                "not_configured"
            ):
                if time.monotonic() > deadline or service.poll() is not None:
                    print("the context service did not start", file=sys.stderr)
                    return 1
                time.sleep(0.1)
            started = time.perf_counter()
            cold = registry.call_tool("user_context", category="all")
            cold_ms = (time.perf_counter() - started) * 1000
            assert cold.ok, cold.error
            search = registry.call_tool("user_context", category="finance", finance_action="search", search="coffee")
            assert search.ok, search.error
            assert search.data["result"]["total"] > 0, search.data
            tool_search = _p50(
                lambda: registry.call_tool(
                    "user_context", category="finance", finance_action="search", search="coffee"
                ),
                args.runs,
            )
            tool_summary = _p50(lambda: registry.call_tool("user_context", category="all"), args.runs)
        finally:
            os.killpg(service.pid, signal.SIGTERM)
            service.wait(10)
    replay.shutdown()

    print(f"data: {args.transactions} transactions (CSV parse {parse_ms:.0f} ms), a year of calendar events")
    print(f"first 'all' summary (cold caches, parses every source): {cold_ms:.0f} ms")
    print(f"{'measure':44} {'p50 ms':>8} {'baseline ms':>12} {'ratio':>7} {'target':>8}")
    rows = [
        ("finance search via tool -> service", tool_search, base_search, 50),
        ("all-categories summary via tool -> service", tool_summary, base_summary, 150),
    ]
    ok = True
    for name, value, baseline, target in rows:
        ok &= value < target
        print(f"{name:44} {value:8.2f} {baseline:12.2f} {value / baseline:6.1f}x {'<' + str(target):>8}")
    print("baselines: the same query on an in-process FinanceIndex; the same summary from an in-process aggregator")
    print("targets met" if ok else "TARGETS MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
