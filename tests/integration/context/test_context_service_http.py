"""The context service over real HTTP: endpoints, API key, errors, and the CLI entry point."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

Scripted = Any  # the `scripted` fixture's ScriptedServer (conftest.py)
Start = Callable[..., Any]

KEY = "s3cret-key-for-tests"


@pytest.fixture
def service(scripted: Scripted, start_service: Start, make_config: Callable[..., dict[str, Any]]) -> Any:
    return start_service(make_config(scripted.url), api_key=KEY)


def _get(url: str, key: str | None = KEY, **params: str) -> requests.Response:
    headers = {"X-API-Key": key} if key is not None else {}
    return requests.get(url, params=params, headers=headers, timeout=10)


def test_context_all_categories(service: Any) -> None:
    response = _get(f"{service.url}/context", user_id="default", categories="all")
    assert response.status_code == 200
    body = response.json()
    statuses = {name: entry["status"] for name, entry in body["categories"].items()}
    assert statuses == {
        "calendar": "ok",
        "finance": "ok",
        "weather": "ok",
        "commute": "ok",
        "health": "not_configured",
        "fitness": "not_configured",
        "gaming": "not_configured",
        "social": "not_configured",
    }
    assert body["generated_at"] == "2026-11-26T09:00:00Z"
    assert body["categories"]["commute"]["data"][0]["destination"] == "Office"
    assert body["categories"]["finance"]["data"]["totals"][0]["income"] == "4925.00"


def test_destination_and_selected_categories(service: Any) -> None:
    body = _get(f"{service.url}/context", categories="commute, weather", destination="home").json()
    assert list(body["categories"]) == ["commute", "weather"]
    assert body["categories"]["commute"]["data"][0]["destination"] == "Home"


def test_api_key_is_required_and_compared(service: Any) -> None:
    assert _get(f"{service.url}/context", key=None).status_code == 401
    wrong = _get(f"{service.url}/context", key="s3cret-key-for-tests-but-longer")
    assert wrong.status_code == 401
    assert wrong.json() == {"error": "missing or wrong X-API-Key header"}
    assert _get(f"{service.url}/context/finance/query", key="nope").status_code == 401
    assert _get(f"{service.url}/health", key=None).status_code == 200


def test_unknown_user_is_404(service: Any) -> None:
    response = _get(f"{service.url}/context", user_id="mallory")
    assert response.status_code == 404
    assert response.json() == {"error": "unknown user_id 'mallory'; known users: default"}


def test_finance_query_endpoint(service: Any) -> None:
    body = _get(f"{service.url}/context/finance/query", action="search", search="cafe", per_page="2").json()
    assert body["status"] == "ok"
    assert body["result"]["total"] == 4
    assert body["result"]["pages"] == 2
    assert [t["account"] for t in body["result"]["transactions"]] == ["Joint", "Checking"]
    grouped = _get(f"{service.url}/context/finance/query", action="summary", group_by="month").json()
    assert [g["key"] for g in grouped["result"]["groups"]] == ["2026-10", "2026-11"]


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (
            {"action": "search"},
            "invalid finance query: action 'search' needs a non-empty 'search' text",
        ),
        ({"page": "0"}, "invalid finance query: page: Input should be greater than or equal to 1"),
        (
            {"sort": "id"},
            "invalid finance query: sort: Input should be 'date', 'amount', 'description' or 'category'",
        ),
        ({"drop": "table"}, "invalid finance query: drop: Extra inputs are not permitted"),
    ],
)
def test_invalid_finance_queries_are_422(service: Any, params: dict[str, str], message: str) -> None:
    response = _get(f"{service.url}/context/finance/query", **params)
    assert response.status_code == 422
    assert response.json() == {"error": message}


def test_oversized_parameters_are_rejected(service: Any) -> None:
    response = _get(f"{service.url}/context", categories="x" * 5000)
    assert response.status_code == 422
    assert KEY not in response.text


def test_weather_outage_only_affects_weather(scripted: Scripted, service: Any) -> None:
    scripted.queue(500, times=10)
    body = _get(f"{service.url}/context", categories="weather,calendar").json()
    assert body["categories"]["weather"]["status"] == "error"
    assert body["categories"]["weather"]["reason"] == f"{scripted.url} answered HTTP 500"
    assert body["categories"]["calendar"]["status"] == "ok"


@pytest.fixture
def cli_service(tmp_path: Path, scripted: Scripted, make_config: Callable[..., dict[str, Any]]) -> Iterator[str]:
    config = make_config(scripted.url)
    config["api_key_env"] = "CONTEXT_TEST_KEY"
    path = tmp_path / "context.json"
    path.write_text(json.dumps(config))
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**os.environ, "CONTEXT_TEST_KEY": KEY}
    repo = Path(__file__).resolve().parents[3]
    env["PYTHONPATH"] = os.pathsep.join([str(repo), env.get("PYTHONPATH", "")])
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "shared.context_service",
            "--config",
            str(path),
            "--port",
            str(port),
            "--log-level",
            "warning",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                requests.get(f"{url}/health", timeout=1)
                break
            except requests.ConnectionError:
                if process.poll() is not None or time.monotonic() > deadline:
                    errors = process.stderr.read() if process.stderr else b""
                    raise RuntimeError(f"service did not start: {errors!r}") from None
                time.sleep(0.05)
        yield url
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(5)
        if process.stderr:
            process.stderr.close()


def test_python_dash_m_entry_point(cli_service: str) -> None:
    assert _get(f"{cli_service}/context", key=None).status_code == 401
    body = _get(f"{cli_service}/context", categories="calendar,finance").json()
    assert body["categories"]["calendar"]["status"] == "ok"
    assert body["categories"]["finance"]["status"] == "ok"


def test_entry_point_refuses_a_missing_key(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"api_key_env": "NOT_SET_ANYWHERE_123"}))
    from shared.context_service.__main__ import main

    assert main(["--config", str(path)], environ={}) == 2
    assert main(["--config", str(tmp_path / "missing.json")], environ={}) == 2
