"""ContextBridge without a network: construction, normalize(), and fault handling.

Faults are injected with a small hand-written session; the real HTTP paths are covered
by tests/integration/context.
"""

from __future__ import annotations

from typing import Any

import pytest
import requests

from tools.builtin.context_bridge import ContextBridge

CALENDAR_PAYLOAD = {
    "timezone": "Europe/Lisbon",
    "now": "2026-11-26T09:00:00+00:00",
    "events": [
        {
            "title": "Stand-up",
            "start": "2026-11-26T09:30:00+00:00",
            "end": "2026-11-26T09:45:00+00:00",
        },
    ],
}


class RefusingSession(requests.Session):
    """Every GET fails to connect, as when the service is down."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[dict[str, Any]] = []

    def get(self, url: str | bytes, **kwargs: Any) -> requests.Response:
        self.calls.append({"url": url, **kwargs})
        raise requests.ConnectionError("connection refused")


def test_rejects_bad_construction() -> None:
    with pytest.raises(ValueError, match="http"):
        ContextBridge("ftp://example.org")
    with pytest.raises(ValueError, match="timeout"):
        ContextBridge("http://127.0.0.1:1", timeout=0)


def test_repr_hides_the_api_key() -> None:
    bridge = ContextBridge("http://127.0.0.1:1/", api_key="top-secret")
    assert "top-secret" not in repr(bridge)
    assert repr(bridge) == "ContextBridge('http://127.0.0.1:1', timeout=10)"


def test_service_down_gives_unavailable_per_category_after_bounded_retries() -> None:
    session = RefusingSession()
    slept: list[float] = []
    bridge = ContextBridge("http://127.0.0.1:1", api_key="k", timeout=5, session=session, sleep=slept.append)
    out = bridge.fetch(["calendar", "finance"], "default")
    assert out["categories"] == {
        name: {
            "status": "unavailable",
            "data": None,
            "reason": "cannot connect to the context service at http://127.0.0.1:1",
        }
        for name in ("calendar", "finance")
    }
    assert len(session.calls) == 3
    assert slept == [0.1, 0.2]
    assert session.calls[0]["headers"]["X-API-Key"] == "k"
    assert 0 < session.calls[0]["timeout"] <= 5
    assert session.calls[0]["params"] == {"user_id": "default", "categories": "calendar,finance"}


def test_all_categories_when_none_given() -> None:
    bridge = ContextBridge("http://127.0.0.1:1", session=RefusingSession(), sleep=lambda _: None)
    out = bridge.fetch(None)
    assert list(out["categories"]) == [
        "calendar",
        "finance",
        "weather",
        "commute",
        "health",
        "fitness",
        "gaming",
        "social",
    ]
    assert bridge.query_finance("default", {"action": "summary"}) == {
        "status": "unavailable",
        "reason": "cannot connect to the context service at http://127.0.0.1:1",
    }


def test_budget_is_total_not_per_attempt() -> None:
    clock = [0.0]

    class SlowRefusal(RefusingSession):
        def get(self, url: str | bytes, **kwargs: Any) -> requests.Response:
            self.calls.append(kwargs)
            clock[0] += kwargs["timeout"]  # each attempt uses up what it was given
            raise requests.ConnectionError("refused after a while")

    session = SlowRefusal()
    bridge = ContextBridge(
        "http://127.0.0.1:1",
        timeout=2,
        session=session,
        sleep=lambda s: None,
        monotonic=lambda: clock[0],
    )
    out = bridge.fetch(["weather"])
    assert out["categories"]["weather"]["status"] == "unavailable"
    assert len(session.calls) == 1
    assert clock[0] == pytest.approx(2.0)


def test_normalize_delegates_to_each_category() -> None:
    bridge = ContextBridge("http://127.0.0.1:1")
    raw = {
        "user_id": "default",
        "generated_at": "2026-11-26T09:00:00Z",
        "categories": {
            "calendar": {"status": "ok", "platforms": ["ics"], "data": CALENDAR_PAYLOAD},
            "weather": {"status": "error", "data": None, "reason": "http://x answered HTTP 500"},
            "health": {"status": "not_configured", "data": None, "reason": "no health source"},
            "commute": {"status": "ok", "platforms": ["osrm"], "data": {"not": "a list"}},
            "finance": "garbage",
            "pets": {"status": "ok", "platforms": ["x"], "data": [1, 2]},
        },
    }
    out = bridge.normalize(raw)
    cats = out["categories"]
    assert cats["calendar"]["status"] == "ok"
    assert cats["calendar"]["next_event"]["title"] == "Stand-up"
    assert cats["calendar"]["alerts"] == ["'Stand-up' starts in 30 minutes"]
    assert cats["weather"] == {"status": "error", "reason": "http://x answered HTTP 500"}
    assert cats["health"] == {"status": "not_configured", "reason": "no health source"}
    assert cats["commute"] == {
        "status": "unavailable",
        "reason": "the service sent commute data of an unexpected shape",
    }
    assert cats["finance"] == {
        "status": "unavailable",
        "reason": "the service sent no usable entry",
    }
    assert cats["pets"] == {"status": "ok", "reason": None, "data": [1, 2]}


@pytest.mark.parametrize("raw", [{}, {"categories": None}, {"categories": {}}, []])
def test_normalize_never_raises(raw: Any) -> None:
    out = ContextBridge("http://127.0.0.1:1").normalize(raw)
    assert out["categories"] == {}
