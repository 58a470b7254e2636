"""ContextBridge and the tool against a failing service: down, slow, 500, garbage, bad key."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from tools import LocalToolRegistry
from tools.builtin.context_bridge import ContextBridge
from tools.builtin.user_context import UserContextTool

Scripted = Any  # the `scripted` fixture's ScriptedServer (conftest.py)


def _bridge(url: str, **kwargs: Any) -> ContextBridge:
    kwargs.setdefault("sleep", lambda _: None)
    return ContextBridge(url, **kwargs)


def _reasons(out: dict[str, Any]) -> set[tuple[str, str]]:
    return {(entry["status"], entry["reason"]) for entry in out["categories"].values()}


def test_service_down(closed_url: str) -> None:
    out = _bridge(closed_url, timeout=2).fetch(["calendar", "finance"])
    assert _reasons(out) == {("unavailable", f"cannot connect to the context service at {closed_url}")}


def test_slow_service_is_cut_at_the_total_timeout(scripted: Scripted) -> None:
    scripted.queue(stall=10, times=5)
    started = time.monotonic()
    out = _bridge(scripted.url, timeout=0.5).fetch(["weather"])
    elapsed = time.monotonic() - started
    assert _reasons(out) == {("unavailable", "the context service did not answer within 0.5 s")}
    assert elapsed < 5  # far below the server's stall: the budget was honoured
    assert len(scripted.requests) == 1


@pytest.mark.parametrize(
    ("status", "body", "reason"),
    [
        (500, b'{"error": "boom"}', "the context service failed (HTTP 500)"),
        (503, b"", "the context service is unavailable (HTTP 503)"),
        (
            401,
            b'{"error": "missing or wrong X-API-Key header"}',
            "the context service rejected the API key (HTTP 401)",
        ),
        (
            200,
            b"<html>not json</html>",
            "the context service answered with something that is not JSON",
        ),
        (200, b'{"categories": [1, 2]}', "the context service answered with an unexpected shape"),
        (
            200,
            b'{"categories": {"calendar": "ok"}}',
            "the context service answered with an unexpected shape",
        ),
        (200, b"[]", "the context service answered with an unexpected shape"),
        (302, b"{}", "the context service answered HTTP 302"),
        (
            404,
            b'{"error": "unknown user_id \'x\'; known users: default"}',
            "unknown user_id 'x'; known users: default",
        ),
    ],
)
def test_bad_answers(scripted: Scripted, status: int, body: bytes, reason: str) -> None:
    scripted.queue(status, body, times=3)
    out = _bridge(scripted.url, timeout=3).fetch(["calendar"])
    assert _reasons(out) == {("unavailable", reason)}


def test_transient_503_is_retried(scripted: Scripted) -> None:
    scripted.queue(503)
    scripted.queue(
        200,
        b'{"user_id": "default", "categories": '
        b'{"calendar": {"status": "not_configured", "data": null, "reason": "none"}}}',
    )
    out = _bridge(scripted.url, timeout=3).fetch(["calendar", "weather"])
    assert out["categories"]["calendar"]["status"] == "not_configured"
    assert out["categories"]["weather"] == {
        "status": "unavailable",
        "data": None,
        "reason": "missing from the service's answer",
    }
    assert len(scripted.requests) == 2


def test_oversized_answer_is_refused(scripted: Scripted) -> None:
    scripted.queue(200, b"[" + b"1," * 600_000 + b"1]")
    out = _bridge(scripted.url, timeout=3, max_response_bytes=1024 * 1024).fetch(["calendar"])
    assert _reasons(out) == {("unavailable", "the context service's answer is too large")}


def test_wrong_api_key_against_the_real_service(
    scripted: Scripted,
    start_service: Callable[..., Any],
    make_config: Callable[..., dict[str, Any]],
) -> None:
    service = start_service(make_config(scripted.url), api_key="right-key")
    bridge = _bridge(service.url, api_key="wrong-key", timeout=3)
    out = bridge.fetch(["calendar"])
    assert _reasons(out) == {("unavailable", "the context service rejected the API key (HTTP 401)")}
    assert "wrong-key" not in str(out)
    assert bridge.query_finance("default", {"action": "summary"}) == {
        "status": "unavailable",
        "reason": "the context service rejected the API key (HTTP 401)",
    }


@pytest.mark.parametrize("fault", ["down", "500", "garbage"])
def test_nothing_raises_out_of_the_tool(fault: str, scripted: Scripted, closed_url: str) -> None:
    url = closed_url if fault == "down" else scripted.url
    if fault == "500":
        scripted.queue(500, times=20)
    if fault == "garbage":
        scripted.queue(200, b"\x00\xff garbage", times=20)
    registry = LocalToolRegistry()
    registry.register(UserContextTool(context_bridge=_bridge(url, timeout=2)))
    for arguments in (
        {},
        {"category": "finance", "finance_action": "search", "search": "x"},
        {"destination": "office"},
        {"action": "query"},
    ):
        result = registry("user_context", **arguments)
        assert result["status"] == "success", result
        statuses = (
            {e["status"] for e in result["data"]["categories"].values()}
            if "categories" in result["data"]
            else {result["data"]["status"]}
        )
        assert statuses == {"unavailable"}
